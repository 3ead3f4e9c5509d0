/**
 * The ledger in the SQLite state file (node:sqlite), on a connection of its own. SQLite is
 * synchronous, so each batch is one short transaction written by a timer, never by a request,
 * and the connection waits at most BUSY_TIMEOUT_MS for a lock: a file another process holds
 * fails the batch (it stays queued and is retried) instead of stalling the serving thread.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { UsageRow } from '../governance/store.ts';
import { periodSpendRowFrom, SPEND_SINCE_SQL, USAGE_SQL, usageRowFrom, type LedgerEngine, type Migration, type PeriodSpendRow, type PeriodStarts } from './engine.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';
import { COLUMNS, rowFrom, writeValues, type LedgerRow, type LedgerValue } from './record.ts';

/** Milliseconds a write may wait for another connection's lock before the batch is retried later. */
export const BUSY_TIMEOUT_MS = 5;
/**
 * The sizes (rows) of the INSERT statements a batch is written with, largest first: a batch of
 * any size is a few statements of these four prepared once. A statement per batch size held
 * SQLite's compiled program for every size met (100 sizes: 14 MB of RSS) and prepared a new one
 * whenever a flush met a new size. 64 × 25 columns stays under SQLite's 32,766 parameters.
 */
const INSERT_SIZES = [64, 16, 4, 1] as const;
const MIGRATE_BUSY_TIMEOUT_MS = 5_000;

export class SqliteLedger implements LedgerEngine {
  readonly kind = 'sqlite';
  readonly #db: DatabaseSync;
  readonly #migrations: readonly Migration[];
  #migrated = false;
  readonly #inserts = new Map<number, StatementSync>();
  #tried = false;

  /** `path` ':memory:' keeps nothing across restarts (tests). */
  constructor(path: string, migrations: readonly Migration[] = SQLITE_MIGRATIONS) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.#migrations = migrations;
  }

  async migrate(): Promise<void> {
    // The first try runs at start, before serving: it may wait for other processes (cluster
    // workers) migrating the same file. A retry runs on the serving thread: it may not.
    this.#db.exec(`PRAGMA busy_timeout = ${this.#tried ? BUSY_TIMEOUT_MS : MIGRATE_BUSY_TIMEOUT_MS}`);
    this.#tried = true;
    try {
      // WAL lets readers (reports) and the governance connection work beside this one's writes.
      this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;');
      this.#db.exec('CREATE TABLE IF NOT EXISTS ledger_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at INTEGER NOT NULL)');
      this.#transaction(() => {
        const row = this.#db.prepare('SELECT MAX(version) AS v FROM ledger_migrations').get() as { v: number | null };
        for (const m of this.#migrations) {
          if (m.version <= (row.v ?? 0)) continue;
          this.#db.exec(m.sql);
          this.#db.prepare('INSERT INTO ledger_migrations VALUES (?, ?, ?)').run(m.version, m.description, Date.now());
        }
      });
    } finally {
      this.#db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    this.#migrated = true;
  }

  async insert(rows: readonly LedgerRow[]): Promise<void> {
    if (!this.#migrated) throw new Error('the ledger is not migrated yet');
    this.#transaction(() => {
      // The largest size that fits, then the next: one call into SQLite for many rows, their values in one array.
      for (let i = 0; i < rows.length; ) {
        const n = INSERT_SIZES.find((size) => size <= rows.length - i)!;
        const values = new Array<LedgerValue>(n * COLUMNS.length);
        for (let j = 0; j < n; j++) writeValues(rows[i + j]!, values, j * COLUMNS.length);
        this.#insertOf(n).run(...values);
        i += n;
      }
    });
  }

  /** The INSERT statement for `n` rows (one of INSERT_SIZES), prepared once. */
  #insertOf(n: number): StatementSync {
    let statement = this.#inserts.get(n);
    if (!statement) {
      const tuple = `(${COLUMNS.map(() => '?').join(', ')})`;
      statement = this.#db.prepare(`INSERT INTO ledger_requests (${COLUMNS.join(', ')}) VALUES ${Array(n).fill(tuple).join(', ')} ON CONFLICT (entry) DO NOTHING`);
      this.#inserts.set(n, statement);
    }
    return statement;
  }

  async request(id: string): Promise<LedgerRow | undefined> {
    const r = this.#db.prepare('SELECT * FROM ledger_requests WHERE id = ? ORDER BY at DESC LIMIT 1').get(id);
    return r ? rowFrom(r) : undefined;
  }

  async usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    return this.#db
      .prepare(USAGE_SQL('ledger_requests', () => '?'))
      .all(fromDay, toDay)
      .map(usageRowFrom);
  }

  async spendByKey(): Promise<Map<string, number>> {
    const rows = this.#db.prepare('SELECT key, SUM(cost_nano) AS nano FROM ledger_requests WHERE key IS NOT NULL AND cost_nano IS NOT NULL GROUP BY key').all();
    return new Map(rows.map((r) => [String(r.key), Number(r.nano)]));
  }

  async spendSince(starts: PeriodStarts): Promise<PeriodSpendRow[]> {
    return this.#db
      .prepare(SPEND_SINCE_SQL('ledger_requests', () => '?'))
      .all(starts.daily, starts.weekly, starts.monthly)
      .map(periodSpendRowFrom);
  }

  async deleteBefore(day: string, limit: number): Promise<number> {
    const sql = 'DELETE FROM ledger_requests WHERE entry IN (SELECT entry FROM ledger_requests WHERE day < ? LIMIT ?)';
    return Number(this.#db.prepare(sql).run(day, limit).changes);
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }

  #transaction(fn: () => void): void {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      this.#db.exec('COMMIT');
    } catch (err) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw err;
    }
  }
}
