/**
 * The exact cache in Redis, shared by every instance of a fleet: one key per entry with its
 * TTL. A Redis that is slow or down is a miss (the answer is fetched and not kept), never an
 * error for the client.
 */
import { Redis } from 'ioredis';
import type { CacheEntry, CacheStore } from './entry.ts';

export interface RedisCacheOptions {
  url: string;
  /** Default `switchyard:cache:`. */
  prefix?: string;
  /** Default 250 ms: a cache that answers later than the upstream would is no use. */
  timeoutMs?: number;
}

export class RedisCache implements CacheStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: RedisCacheOptions) {
    this.#prefix = options.prefix ?? 'switchyard:cache:';
    this.#redis = new Redis(options.url, { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: options.timeoutMs ?? 250, connectionName: 'switchyard-cache' });
    // Errors surface on each command as a miss; the client's own error events would only repeat them.
    this.#redis.on('error', () => {});
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const json = await this.#redis.get(this.#prefix + key);
    return json === null ? undefined : (JSON.parse(json) as CacheEntry);
  }

  async set(key: string, json: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#prefix + key, json, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
