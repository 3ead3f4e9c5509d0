/**
 * Governance: rate limits, concurrency, budgets and usage records for the keys, teams and
 * targets of gateway.yaml, over one engine and two stores of identical semantics.
 * The contract is types.ts; this opens the store the `state:` section asks for.
 */
import { createEngine, type EngineOptions } from './engine.ts';
import { MemoryStore, type MemoryStoreOptions } from './memory-store.ts';
import type { SpendSource } from './redis-recovery.ts';
import type { GovernanceLogger, StateBackend } from './types.ts';

export interface StateConfig {
  backend: 'memory' | 'redis';
  redis?: { url: string; prefix?: string };
  /** memory: the SQLite file that keeps spend and usage across restarts; omitted: this process only. */
  file?: string;
  /**
   * The request ledger, when one is kept: its rows answer the usage report, so settlements write
   * no usage records of their own; with Redis, what rebuilds period spend when Redis lost its data.
   */
  spend?: SpendSource;
}

/** Opens the configured backend; a Redis that is down now does not fail this (it reconnects by itself). */
export async function openStateBackend(config: StateConfig, engineOptions: EngineOptions): Promise<StateBackend> {
  const options = config.spend ? { ...engineOptions, usageRecords: false } : engineOptions;
  if (config.backend === 'redis') {
    if (!config.redis?.url) throw new Error('state.redis.url is required with state.backend: redis');
    // ioredis is loaded only for a Redis backend.
    const { RedisStore } = await import('./redis-store.ts');
    const store = await RedisStore.open({ url: config.redis.url, prefix: config.redis.prefix, log: options.log, spend: config.spend });
    return createEngine(store, options);
  }
  return createEngine(openMemoryStore({ path: config.file, now: options.now }, options.log), options);
}

/** The memory store on its file; says loudly what a previous process left reserved, booked now. */
export function openMemoryStore(options: MemoryStoreOptions, log: GovernanceLogger): MemoryStore {
  const store = new MemoryStore({ log, ...options });
  const { requests, nano } = store.recovered;
  if (requests > 0) {
    log.warn(
      { requests, bookedUsd: nano / 1e9, file: options.path },
      `state file: ${requests} requests were in flight when the gateway last stopped without settling them; their reservations ($${nano / 1e9}) are booked as spent`,
    );
  }
  return store;
}

export { createEngine, type EngineOptions } from './engine.ts';
export { MemoryStore } from './memory-store.ts';
export { costOf, reservationCost, tokenUsageOf } from './cost.ts';
export { tokenEstimate, DEFAULT_MAX_TOKENS, type TokenEstimate } from './estimate.ts';
export { rateLimitHeaders, formatReset } from './headers.ts';
export { refusalAnswer, type RefusalAnswer } from './refusal-answer.ts';
export { BUILT_IN_PRICES, extendPrices, findPrice, loadPriceFile, priceOf, type PriceEntry, type PriceTable } from './prices.ts';
export { keyScopeName, requestScopes, scopeOf, targetScopeName, teamScopeName } from './scopes.ts';
export * from './types.ts';
export type { SpendSource } from './redis-recovery.ts';
export { persistenceWarning } from './redis-persistence.ts';
