/**
 * `state.backend: redis`: stored responses shared by every instance on the same Redis, so a
 * chain may move between instances turn by turn. Keys (under the state prefix):
 *
 *   resp:<owner>:<id>         the record's JSON, expiring after the retention (PX)
 *   resp-item:<owner>:<item>  the id of the response holding the item, same expiry
 *   resp-index                a sorted set of `<owner> <id>` by expiry: trims to maxEntries
 *
 * The owner is URI-encoded in keys, so no owner's name can reach into another's. A connection of
 * its own, failing fast like the limits' store: a Redis that is down makes reads answer 503 and
 * writes be logged and skipped, never waited on.
 */
import { Redis } from 'ioredis';
import type { ResponseStoreBackend, StoredResponse } from './types.ts';

export interface RedisBackendOptions {
  url: string;
  prefix: string;
  maxEntries: number;
  commandTimeoutMs?: number;
}

export class RedisResponseBackend implements ResponseStoreBackend {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #maxEntries: number;

  constructor(options: RedisBackendOptions) {
    this.#prefix = options.prefix;
    this.#maxEntries = options.maxEntries;
    this.#redis = new Redis(options.url, {
      commandTimeout: options.commandTimeoutMs ?? 2_000,
      connectTimeout: 2_000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 6), 2_000),
      lazyConnect: true,
    });
    // The limits' store logs Redis going down and up; this connection only must not crash on it.
    this.#redis.on('error', () => undefined);
  }

  /** Connects, without failing when Redis is down now (it reconnects by itself). */
  async open(): Promise<this> {
    await this.#redis.connect().catch(() => undefined);
    return this;
  }

  #key(owner: string, id: string): string {
    return `${this.#prefix}resp:${encodeURIComponent(owner)}:${id}`;
  }

  #itemKey(owner: string, item: string): string {
    return `${this.#prefix}resp-item:${encodeURIComponent(owner)}:${item}`;
  }

  get #index(): string {
    return `${this.#prefix}resp-index`;
  }

  async put(owner: string, record: StoredResponse, json: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    const ttl = Math.max(1, Math.round(ttlMs));
    // This instance's clock orders the index only: a skew between instances moves trimming, not expiry.
    const now = Date.now();
    const multi = this.#redis.multi().set(this.#key(owner, record.id), json, 'PX', ttl);
    for (const item of itemIds) multi.set(this.#itemKey(owner, item), record.id, 'PX', ttl);
    multi
      .zadd(this.#index, now + ttl, `${encodeURIComponent(owner)} ${record.id}`)
      .zremrangebyscore(this.#index, '-inf', now)
      .zcard(this.#index);
    const replies = (await multi.exec()) ?? [];
    const failed = replies.find(([err]) => err);
    if (failed) throw failed[0];
    const over = Number(replies.at(-1)?.[1] ?? 0) - this.#maxEntries;
    if (over > 0) await this.#trim(over);
  }

  /** The oldest responses beyond maxEntries go (their item keys then point at nothing and expire on their own). */
  async #trim(over: number): Promise<void> {
    const oldest = await this.#redis.zpopmin(this.#index, over);
    const keys: string[] = [];
    for (let i = 0; i < oldest.length; i += 2) {
      const [owner = '', id = ''] = (oldest[i] ?? '').split(' ');
      keys.push(`${this.#prefix}resp:${owner}:${id}`);
    }
    if (keys.length) await this.#redis.del(...keys);
  }

  async get(owner: string, ids: readonly string[]): Promise<Array<StoredResponse | undefined>> {
    if (ids.length === 0) return [];
    const values = await this.#redis.mget(...ids.map((id) => this.#key(owner, id)));
    return values.map((v) => (v === null ? undefined : (JSON.parse(v) as StoredResponse)));
  }

  async responseOfItem(owner: string, itemId: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#itemKey(owner, itemId))) ?? undefined;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const [[, deleted] = [null, 0]] =
      (await this.#redis
        .multi()
        .del(this.#key(owner, id))
        .zrem(this.#index, `${encodeURIComponent(owner)} ${id}`)
        .exec()) ?? [];
    return Number(deleted) > 0;
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }
}
