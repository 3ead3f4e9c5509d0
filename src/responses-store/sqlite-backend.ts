/**
 * `state.backend: memory`: stored responses in the same SQLite file as spend and usage (its own
 * connection and tables), so they survive a restart, and every worker of a cluster reads the one
 * file (SQLite's WAL lets processes share it). Expired rows are invisible at once and deleted by a
 * sweep every SWEEP_EVERY_MS (and every SWEEP_EVERY_WRITES writes), which also trims the table to `maxEntries`, oldest first.
 *
 * node:sqlite is synchronous and runs on the serving thread, so a write waits at most
 * BUSY_TIMEOUT_MS for a lock another process holds, as the state file's do: a locked write is
 * queued (bounded by MAX_QUEUED_BYTES; beyond, the response is not stored, which is logged) and
 * retried with back-off; the queue answers reads on this instance meanwhile (WAL reads pass a
 * write lock). A delete of a record only in the database, while locked, fails (503, try again).
 */
import { BUSY_TIMEOUT_MS, inTransaction, isLocked, LockWatch, type LockStats } from '../runtime/sqlite.ts';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { ResponseStoreBackend, StoredResponse } from './types.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS stored_responses (
  owner TEXT NOT NULL,
  id TEXT NOT NULL,
  stored_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS stored_responses_expiry ON stored_responses (expires_at);
CREATE INDEX IF NOT EXISTS stored_responses_age ON stored_responses (stored_at);
CREATE TABLE IF NOT EXISTS stored_response_items (
  owner TEXT NOT NULL,
  item TEXT NOT NULL,
  response TEXT NOT NULL,
  PRIMARY KEY (owner, item)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS stored_response_items_response ON stored_response_items (owner, response);
`;

const SWEEP_EVERY_MS = 60_000;
/** At open, before serving: the schema may wait for another process (a cluster's workers) this long. */
const OPEN_BUSY_TIMEOUT_MS = 5_000;
/** JSON bytes of responses kept while the file is locked; beyond, a response is not stored. */
const MAX_QUEUED_BYTES = 64 << 20;
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 1_000;

/** A write kept while the file is locked. */
interface QueuedPut {
  owner: string;
  id: string;
  json: string;
  items: readonly string[];
  storedAt: number;
  expiresAt: number;
}
/** Between timed sweeps, a burst of writes also sweeps, so the table never grows far past maxEntries. */
const SWEEP_EVERY_WRITES = 1_000;

export interface SqliteBackendOptions {
  /** The state file; ':memory:' keeps nothing across restarts. */
  path: string;
  maxEntries: number;
  now?: () => number;
  /** Where the file's lock transitions are logged. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export class SqliteResponseBackend implements ResponseStoreBackend {
  readonly #db: DatabaseSync;
  readonly #now: () => number;
  readonly #maxEntries: number;
  readonly #put: StatementSync;
  readonly #putItem: StatementSync;
  readonly #get: StatementSync;
  readonly #item: StatementSync;
  readonly #delete: StatementSync;
  readonly #deleteItems: StatementSync;
  readonly #sweepTimer: NodeJS.Timeout;
  #writes = 0;
  readonly #lock: LockWatch;
  /** Writes waiting for the lock, by owner and id, in arrival order. */
  readonly #queued = new Map<string, QueuedPut>();
  #queuedBytes = 0;
  #retry: NodeJS.Timeout | undefined;
  #retryMs = RETRY_FIRST_MS;
  /** Responses not stored because the queue was full. */
  dropped = 0;

  constructor(options: SqliteBackendOptions) {
    this.#db = new DatabaseSync(options.path);
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA busy_timeout = ${OPEN_BUSY_TIMEOUT_MS};`);
    this.#db.exec(SCHEMA);
    this.#db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.#lock = new LockWatch(`state file ${options.path} (stored responses)`, options.log ?? { warn() {}, info() {} });
    this.#now = options.now ?? Date.now;
    this.#maxEntries = options.maxEntries;
    this.#put = this.#db.prepare('INSERT OR REPLACE INTO stored_responses (owner, id, stored_at, expires_at, record) VALUES (?, ?, ?, ?, ?)');
    this.#putItem = this.#db.prepare('INSERT OR REPLACE INTO stored_response_items (owner, item, response) VALUES (?, ?, ?)');
    this.#get = this.#db.prepare('SELECT record FROM stored_responses WHERE owner = ? AND id = ? AND expires_at > ?');
    this.#item = this.#db.prepare('SELECT response FROM stored_response_items WHERE owner = ? AND item = ?');
    this.#delete = this.#db.prepare('DELETE FROM stored_responses WHERE owner = ? AND id = ? AND expires_at > ?');
    this.#deleteItems = this.#db.prepare('DELETE FROM stored_response_items WHERE owner = ? AND response = ?');
    this.#sweepTimer = setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  async put(owner: string, record: StoredResponse, json: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    const now = this.#now();
    const put: QueuedPut = { owner, id: record.id, json, items: itemIds, storedAt: now, expiresAt: now + ttlMs };
    // While writes wait for a lock, a new one joins them: written in order once it is released.
    if (this.#queued.size > 0) return this.#enqueue(put);
    try {
      this.#write([put]);
    } catch (err) {
      if (!isLocked(err)) throw err;
      this.#enqueue(put);
    }
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.sweep();
  }

  async get(owner: string, ids: readonly string[]): Promise<Array<StoredResponse | undefined>> {
    const now = this.#now();
    return ids.map((id) => {
      const queued = this.#queued.get(slot(owner, id));
      if (queued) return queued.expiresAt > now ? (JSON.parse(queued.json) as StoredResponse) : undefined;
      const row = this.#get.get(owner, id, now) as { record: string } | undefined;
      return row ? (JSON.parse(row.record) as StoredResponse) : undefined;
    });
  }

  async responseOfItem(owner: string, itemId: string): Promise<string | undefined> {
    for (const put of this.#queued.values()) if (put.owner === owner && put.items.includes(itemId)) return put.id;
    const row = this.#item.get(owner, itemId) as { response: string } | undefined;
    return row?.response;
  }

  /** The file's lock waits, for metrics. */
  get lockStats(): LockStats {
    return this.#lock.stats;
  }

  /** Writes still waiting for the lock. */
  get queued(): number {
    return this.#queued.size;
  }

  /** Writes `puts` in one transaction (a few ms at most for a lock), watching the lock. */
  #write(puts: readonly QueuedPut[]): void {
    const started = performance.now();
    try {
      this.#atomically(() => {
        for (const p of puts) {
          this.#put.run(p.owner, p.id, p.storedAt, p.expiresAt, p.json);
          for (const item of p.items) this.#putItem.run(p.owner, item, p.id);
        }
      });
      this.#lock.succeeded();
    } catch (err) {
      this.#lock.failed(err, performance.now() - started);
      throw err;
    }
  }

  #enqueue(put: QueuedPut): void {
    const key = slot(put.owner, put.id);
    const old = this.#queued.get(key);
    if (old) this.#queuedBytes -= old.json.length;
    this.#queued.delete(key);
    if (this.#queuedBytes + put.json.length > MAX_QUEUED_BYTES) {
      this.dropped++;
      throw new Error(`the state file is locked by another process and ${this.#queuedBytes} bytes of responses already wait for it`);
    }
    this.#queued.set(key, put);
    this.#queuedBytes += put.json.length;
    this.#retry ??= setTimeout(this.#flushQueued, this.#retryMs).unref();
  }

  readonly #flushQueued = (): void => {
    this.#retry = undefined;
    if (!this.#db.isOpen || this.#queued.size === 0) return;
    const puts = [...this.#queued.values()];
    try {
      this.#write(puts);
    } catch (err) {
      if (isLocked(err)) {
        this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
        this.#retry = setTimeout(this.#flushQueued, this.#retryMs).unref();
        return;
      }
      this.#lock.log.warn(
        { err: err instanceof Error ? err.message : String(err), responses: puts.length },
        'stored responses queued while the state file was locked could not be written; they are not stored',
      );
    }
    this.#queued.clear();
    this.#queuedBytes = 0;
    this.#retryMs = RETRY_FIRST_MS;
  };

  async delete(owner: string, id: string): Promise<boolean> {
    const queued = this.#queued.get(slot(owner, id));
    if (queued) {
      this.#queued.delete(slot(owner, id));
      this.#queuedBytes -= queued.json.length;
    }
    const started = performance.now();
    try {
      const deleted = this.#atomically(() => {
        const { changes } = this.#delete.run(owner, id, this.#now());
        this.#deleteItems.run(owner, id);
        return Number(changes) > 0;
      });
      this.#lock.succeeded();
      return deleted || (queued !== undefined && queued.expiresAt > this.#now());
    } catch (err) {
      this.#lock.failed(err, performance.now() - started);
      // Only queued, it is gone with the queue's copy; otherwise the file keeps it: the delete fails.
      if (queued && isLocked(err)) return queued.expiresAt > this.#now();
      throw err;
    }
  }

  /** Deletes expired responses and their item index, then the oldest beyond maxEntries; a locked file skips it until next time. */
  sweep(): void {
    if (!this.#db.isOpen) return;
    const started = performance.now();
    try {
      this.#sweepNow();
    } catch (err) {
      if (!isLocked(err)) throw err;
      this.#lock.failed(err, performance.now() - started);
    }
  }

  #sweepNow(): void {
    this.#atomically(() => {
      this.#db.prepare('DELETE FROM stored_responses WHERE expires_at <= ?').run(this.#now());
      const { n } = this.#db.prepare('SELECT count(*) AS n FROM stored_responses').get() as { n: number };
      const over = Number(n) - this.#maxEntries;
      if (over > 0) this.#db.prepare('DELETE FROM stored_responses WHERE (owner, id) IN (SELECT owner, id FROM stored_responses ORDER BY stored_at LIMIT ?)').run(over);
      this.#db.exec('DELETE FROM stored_response_items WHERE NOT EXISTS (SELECT 1 FROM stored_responses r WHERE r.owner = stored_response_items.owner AND r.id = stored_response_items.response)');
    });
  }

  #atomically<T>(fn: () => T): T {
    return inTransaction(this.#db, fn);
  }

  /** Writes what waits for the lock (no request waits now: it may take up to a second), then closes. */
  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    clearTimeout(this.#retry);
    if (!this.#db.isOpen) return;
    if (this.#queued.size > 0) {
      this.#db.exec('PRAGMA busy_timeout = 1000');
      try {
        this.#write([...this.#queued.values()]);
      } catch (err) {
        this.#lock.log.warn({ err: err instanceof Error ? err.message : String(err), responses: this.#queued.size }, 'stored responses still queued at shutdown could not be written');
      }
    }
    this.#db.close();
  }
}

const slot = (owner: string, id: string): string => `${owner}\u0000${id}`;
