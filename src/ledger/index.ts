/**
 * The request ledger (`state.ledger`): one row per request on the books, in the SQLite state
 * file (one node) or PostgreSQL (a fleet). This opens the configured engine, on a writer thread
 * of its own (thread.ts) by default with PostgreSQL; the pg driver is loaded only when PostgreSQL
 * is configured.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { StateConfig } from '../config/types.ts';
import { RequestLedger } from './book.ts';
import { type EngineSpec, openEngine } from './engines.ts';
import { ThreadedEngine } from './thread.ts';

export { RequestLedger, type LedgerStats } from './book.ts';
export type { LedgerRow } from './record.ts';
export { registerLedgerMetrics } from './metrics.ts';
export { requestReport, type RequestReport } from './report.ts';

/**
 * Whether a ledger is kept: with PostgreSQL configured, always; otherwise by `enabled`, which
 * defaults to on with the memory backend (its state file) and off with Redis (a file per
 * instance would not be the fleet's books).
 */
export function ledgerEngineOf(state: StateConfig): 'postgres' | 'sqlite' | undefined {
  if (state.ledger.postgres) return 'postgres';
  return (state.ledger.enabled ?? state.backend === 'memory') ? 'sqlite' : undefined;
}

/** Opens the ledger `state` asks for and starts its writer; undefined when none is kept. */
export async function openLedger(state: StateConfig, configDir: string, log: Logger): Promise<RequestLedger | undefined> {
  const kind = ledgerEngineOf(state);
  if (!kind) return undefined;
  const { postgres, retentionDays, maxQueued, flushMs, thread } = state.ledger;
  const spec: EngineSpec = kind === 'postgres' ? { kind, url: postgres!.url, poolSize: postgres!.poolSize } : { kind, path: path.resolve(configDir, state.file) };
  // The thread takes pg's encoding and SQLite's writes off the serving thread, for ~24 MB of its
  // own; SQLite's batched insert costs the serving thread a few µs a row, so a single node keeps it.
  const warn = (msg: string) => log.warn({ engine: kind }, msg);
  const engine =
    (thread ?? kind === 'postgres') ? new ThreadedEngine(spec, warn) : await openEngine(spec, (err) => warn(`request ledger: a PostgreSQL connection broke; the pool opens another (${err.message})`));
  const ledger = new RequestLedger({ engine, log, retentionDays, maxQueued, flushMs });
  await ledger.start();
  const where = kind === 'postgres' ? 'PostgreSQL' : `SQLite ${state.file}`;
  log.info({ engine: kind, retentionDays }, `request ledger: ${where}${ledger.stats.up ? '' : ' (not reachable yet: rows are queued)'}`);
  return ledger;
}
