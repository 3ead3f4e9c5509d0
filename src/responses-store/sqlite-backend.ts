/**
 * `state.backend: memory`: stored responses in the same SQLite file as spend and usage (its own
 * connection and tables), so they survive a restart, and every worker of a cluster reads the one
 * file (SQLite's WAL lets processes share it). Expired rows are invisible at once and deleted by a
 * sweep every SWEEP_EVERY_MS (and every SWEEP_EVERY_WRITES writes), which also trims the table to `maxEntries`, oldest first.
 */
import { inTransaction } from '../runtime/sqlite.ts';
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
/** Between timed sweeps, a burst of writes also sweeps, so the table never grows far past maxEntries. */
const SWEEP_EVERY_WRITES = 1_000;

export interface SqliteBackendOptions {
  /** The state file; ':memory:' keeps nothing across restarts. */
  path: string;
  maxEntries: number;
  now?: () => number;
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

  constructor(options: SqliteBackendOptions) {
    this.#db = new DatabaseSync(options.path);
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 1000;');
    this.#db.exec(SCHEMA);
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
    this.#atomically(() => {
      this.#put.run(owner, record.id, now, now + ttlMs, json);
      for (const item of itemIds) this.#putItem.run(owner, item, record.id);
    });
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.sweep();
  }

  async get(owner: string, ids: readonly string[]): Promise<Array<StoredResponse | undefined>> {
    const now = this.#now();
    return ids.map((id) => {
      const row = this.#get.get(owner, id, now) as { record: string } | undefined;
      return row ? (JSON.parse(row.record) as StoredResponse) : undefined;
    });
  }

  async responseOfItem(owner: string, itemId: string): Promise<string | undefined> {
    const row = this.#item.get(owner, itemId) as { response: string } | undefined;
    return row?.response;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    return this.#atomically(() => {
      const { changes } = this.#delete.run(owner, id, this.#now());
      this.#deleteItems.run(owner, id);
      return Number(changes) > 0;
    });
  }

  /** Deletes expired responses and their item index, then the oldest beyond maxEntries. */
  sweep(): void {
    if (!this.#db.isOpen) return;
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

  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    if (this.#db.isOpen) this.#db.close();
  }
}
