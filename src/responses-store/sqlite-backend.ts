/**
 * `state.backend: memory`: stored responses in the same SQLite file as spend and usage (its own
 * connection and tables), so they survive a restart, and every worker of a cluster reads the one
 * file (SQLite's WAL lets processes share it).
 *
 * node:sqlite is synchronous and runs on the serving thread, so writes are grouped: the puts of
 * one event-loop turn are written in one transaction after it (a commit's locks, WAL header and
 * shared index pages paid once for all), and each put resolves once its transaction is
 * committed, so a next turn sent to any instance finds it. A write waits at most
 * BUSY_TIMEOUT_MS for a lock another process holds, as the state file's do: a locked write is
 * queued (bounded by MAX_QUEUED_BYTES; beyond, the response is not stored, which is logged) and
 * retried with back-off; the queue answers reads on this instance meanwhile (WAL reads pass a
 * write lock). A delete of a record only in the database, while locked, fails (503, try again).
 *
 * Expired rows are invisible at once and deleted by a sweep every SWEEP_EVERY_MS, which also
 * trims the table to `maxEntries`, oldest first, taking their item index rows with them (by the
 * index, never a scan of the table). Between timed sweeps, a burst of writes trims too, by this
 * process's count of the rows (exact at each timed sweep; in a cluster it misses the other
 * workers' writes since the last one, so the table may pass maxEntries by a minute of theirs).
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
/** Between timed sweeps, a burst of writes also trims (by the count kept here), so the table never grows far past maxEntries. */
const SWEEP_EVERY_WRITES = 1_000;

/** A put waiting for the end of the event-loop turn, and its caller. */
interface BatchedPut {
  put: QueuedPut;
  resolve(): void;
  reject(err: unknown): void;
}

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
  readonly #deleteExpiredItems: StatementSync;
  readonly #deleteExpired: StatementSync;
  readonly #count: StatementSync;
  readonly #cutoff: StatementSync;
  readonly #deleteOldItems: StatementSync;
  readonly #deleteOld: StatementSync;
  readonly #sweepTimer: NodeJS.Timeout;
  #writes = 0;
  /** Rows in the table as this process counts them: exact after a timed sweep, then its own writes and deletes added. */
  #rows: number;
  /** Puts of this event-loop turn, written together after it. */
  #batch: BatchedPut[] = [];
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
    // A sweep's deletes reach the item index through its (owner, response) index: the items of the rows it deletes, nothing else.
    this.#deleteExpiredItems = this.#db.prepare('DELETE FROM stored_response_items WHERE (owner, response) IN (SELECT owner, id FROM stored_responses WHERE expires_at <= ?)');
    this.#deleteExpired = this.#db.prepare('DELETE FROM stored_responses WHERE expires_at <= ?');
    this.#count = this.#db.prepare('SELECT count(*) AS n FROM stored_responses');
    this.#cutoff = this.#db.prepare('SELECT stored_at AS at FROM stored_responses ORDER BY stored_at LIMIT 1 OFFSET ?');
    this.#deleteOldItems = this.#db.prepare('DELETE FROM stored_response_items WHERE (owner, response) IN (SELECT owner, id FROM stored_responses WHERE stored_at <= ?)');
    this.#deleteOld = this.#db.prepare('DELETE FROM stored_responses WHERE stored_at <= ?');
    this.#rows = Number((this.#count.get() as { n: number }).n);
    this.#sweepTimer = setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  put(owner: string, record: StoredResponse, json: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    const now = this.#now();
    const put: QueuedPut = { owner, id: record.id, json, items: itemIds, storedAt: now, expiresAt: now + ttlMs };
    // While writes wait for a lock, a new one joins them: written in order once it is released.
    if (this.#queued.size > 0) return new Promise((resolve) => resolve(this.#enqueue(put)));
    return new Promise((resolve, reject) => {
      if (this.#batch.push({ put, resolve, reject }) === 1) setImmediate(this.#writeBatch);
    });
  }

  /** The turn's puts in one transaction; behind a lock, each joins the queue (which answers reads here). */
  readonly #writeBatch = (): void => {
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length === 0) return;
    try {
      if (!this.#db.isOpen) throw new Error('the stored responses database is closed');
      this.#write(batch.map((b) => b.put));
    } catch (err) {
      for (const b of batch) {
        if (!isLocked(err)) b.reject(err);
        else
          try {
            this.#enqueue(b.put);
            b.resolve();
          } catch (full) {
            b.reject(full);
          }
      }
      return;
    }
    for (const b of batch) b.resolve();
    this.#rows += batch.length;
    const before = this.#writes;
    this.#writes += batch.length;
    if (Math.floor(this.#writes / SWEEP_EVERY_WRITES) > Math.floor(before / SWEEP_EVERY_WRITES) && this.#rows > this.#maxEntries) this.#guarded(() => this.#atomically(() => this.#trimNow()));
  };

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
      this.#rows += puts.length;
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
      if (deleted) this.#rows--;
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
    this.#guarded(() => {
      this.#atomically(() => {
        const now = this.#now();
        this.#deleteExpiredItems.run(now);
        this.#deleteExpired.run(now);
        this.#rows = Number((this.#count.get() as { n: number }).n);
        this.#trimNow();
      });
    });
  }

  /** Deletes the oldest rows beyond maxEntries, by the rows counted here, and their items (rows written in the same millisecond as the last of them go too). */
  #trimNow(): void {
    const over = this.#rows - this.#maxEntries;
    if (over <= 0) return;
    const cutoff = this.#cutoff.get(over - 1) as { at: number } | undefined;
    if (!cutoff) return;
    this.#deleteOldItems.run(cutoff.at);
    this.#rows -= Number(this.#deleteOld.run(cutoff.at).changes);
  }

  /** Runs a sweep's transaction; a locked file (another process writing) skips it until next time. */
  #guarded(fn: () => void): void {
    const started = performance.now();
    try {
      fn();
    } catch (err) {
      if (!isLocked(err)) throw err;
      this.#lock.failed(err, performance.now() - started);
    }
  }

  #atomically<T>(fn: () => T): T {
    return inTransaction(this.#db, fn);
  }

  /** Writes what waits for the lock (no request waits now: it may take up to a second), then closes. */
  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    clearTimeout(this.#retry);
    if (!this.#db.isOpen) return;
    this.#writeBatch();
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
