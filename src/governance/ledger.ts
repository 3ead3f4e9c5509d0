/**
 * The memory store's durable part: spend per scope and period, and usage per day × key × team ×
 * model, in a local SQLite file (node:sqlite, built into Node 22.13+; no dependency).
 *
 * Why SQLite and not an append-only journal: the data is a handful of counters that are
 * incremented, not an event stream. An upsert keeps one row per counter, so the file stays the
 * size of what it reports, restarts read nothing back (queries go to the file), the usage
 * report is a range query, and each settle is one transaction that is whole or absent after a
 * crash. A journal would grow with every request and need replay and compaction.
 * WAL with synchronous=NORMAL: a commit survives the process dying (not the machine losing
 * power), at the cost of a write() per settle, no fsync.
 *
 * Spend is written at once (budgets are read from it). Usage records, which only reports read,
 * are gathered and written in one transaction every USAGE_FLUSH_MS, before any report, and at
 * close: a request then costs no synchronous write of its own (a crash, not a restart, may lose
 * the last fraction of a second of usage records, never spend). Records of the same day, key,
 * team and model are added up while they wait: one upsert per row touched, not per request.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { dayId, PERIODS, periodId } from './periods.ts';
import { BUSY_TIMEOUT_MS, inTransaction } from '../runtime/sqlite.ts';
import type { UsageRow } from './store.ts';
import type { TokenUsage, UsageLabels } from './types.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS spend (
  scope TEXT NOT NULL,
  period TEXT NOT NULL,
  nano INTEGER NOT NULL,
  PRIMARY KEY (scope, period)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (
  day TEXT NOT NULL,
  key TEXT NOT NULL,
  team TEXT NOT NULL,
  model TEXT NOT NULL,
  requests INTEGER NOT NULL,
  input INTEGER NOT NULL,
  cached_input INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cost_nano INTEGER NOT NULL,
  priced INTEGER NOT NULL,
  PRIMARY KEY (day, key, team, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reservations (
  id TEXT NOT NULL,
  scope TEXT NOT NULL,
  at INTEGER NOT NULL,
  nano INTEGER NOT NULL,
  PRIMARY KEY (id, scope)
) WITHOUT ROWID;
`;

/** How long usage records wait to be written together. */
const USAGE_FLUSH_MS = 250;

/** One usage row's increments, summed over the requests waiting to be written (the statement's parameters, in order). */
type UsageRecord = [day: string, key: string, team: string, model: string, requests: number, input: number, cached: number, write: number, output: number, costNano: number, priced: number];

export class Ledger {
  readonly #db: DatabaseSync;
  /** By day, key, team and model, joined by \n: only the model (last) may hold one, so no two rows share an id. */
  #pendingUsage = new Map<string, UsageRecord>();
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #spent: StatementSync;
  readonly #addSpend: StatementSync;
  readonly #addUsage: StatementSync;
  readonly #usageRows: StatementSync;
  readonly #reserve: StatementSync;
  readonly #unreserve: StatementSync;

  /** `path` ':memory:' keeps nothing across restarts (tests, or no file configured). */
  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    // A few ms, never the serving thread's second: a locked file fails the write, which is queued and retried (memory-store.ts).
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
    this.#db.exec(SCHEMA);
    this.#spent = this.#db.prepare('SELECT nano FROM spend WHERE scope = ? AND period = ?');
    this.#addSpend = this.#db.prepare('INSERT INTO spend (scope, period, nano) VALUES (?, ?, ?) ON CONFLICT (scope, period) DO UPDATE SET nano = nano + excluded.nano');
    this.#addUsage = this.#db.prepare(
      `INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (day, key, team, model) DO UPDATE SET requests = requests + excluded.requests, input = input + excluded.input,
         cached_input = cached_input + excluded.cached_input, cache_write = cache_write + excluded.cache_write,
         output = output + excluded.output, cost_nano = cost_nano + excluded.cost_nano, priced = priced + excluded.priced`,
    );
    this.#reserve = this.#db.prepare('INSERT INTO reservations (id, scope, at, nano) VALUES (?, ?, ?, ?) ON CONFLICT (id, scope) DO UPDATE SET nano = excluded.nano');
    this.#unreserve = this.#db.prepare('DELETE FROM reservations WHERE id = ? AND scope = ?');
    this.#usageRows = this.#db.prepare(
      `SELECT day, key, team, model, requests, input, cached_input AS cachedInput, cache_write AS cacheWrite, output, cost_nano AS costNano, priced
       FROM usage WHERE day >= ? AND day <= ? ORDER BY day, key, team, model`,
    );
  }

  spent(scope: string, period: string): number {
    const row = this.#spent.get(scope, period) as { nano: number } | undefined;
    return row?.nano ?? 0;
  }

  /** Books `nano` in each period containing `at` (all four, whatever the scope's budget). */
  addSpend(scope: string, at: number, nano: number): void {
    if (nano === 0) return;
    for (const period of PERIODS) this.#addSpend.run(scope, periodId(period, at), nano);
  }

  /** A budgeted scope's reservation, kept until it is settled or booked: a crash leaves it to be booked at the next start. */
  reserve(id: string, scope: string, at: number, nano: number): void {
    this.#reserve.run(id, scope, at, nano);
  }

  unreserve(id: string, scope: string): void {
    this.#unreserve.run(id, scope);
  }

  /**
   * Books every reservation a previous process left (it died with those requests in flight) at
   * its worst case, as the Redis store books a lease that expired, and forgets them; returns
   * how many and their total. Called once, at open, before any admission.
   */
  bookLeftReservations(): { requests: number; nano: number } {
    return this.atomically(() => {
      const rows = this.#db.prepare('SELECT id, scope, at, nano FROM reservations').all();
      let nano = 0;
      for (const r of rows) {
        this.addSpend(String(r.scope), Number(r.at), Number(r.nano));
        nano += Number(r.nano);
      }
      this.#db.exec('DELETE FROM reservations');
      return { requests: new Set(rows.map((r) => String(r.id))).size, nano };
    });
  }

  addUsage(at: number, labels: UsageLabels, usage: TokenUsage, costNano: number | null): void {
    const day = dayId(at);
    const team = labels.team ?? '';
    const id = `${day}\n${labels.key}\n${team}\n${labels.model}`;
    const r = this.#pendingUsage.get(id);
    if (r) {
      r[4] += 1;
      r[5] += usage.input;
      r[6] += usage.cachedInput;
      r[7] += usage.cacheWrite;
      r[8] += usage.output;
      r[9] += costNano ?? 0;
      r[10] += costNano === null ? 0 : 1;
    } else {
      this.#pendingUsage.set(id, [day, labels.key, team, labels.model, 1, usage.input, usage.cachedInput, usage.cacheWrite, usage.output, costNano ?? 0, costNano === null ? 0 : 1]);
    }
    this.#flushTimer ??= setTimeout(this.#flushLater, USAGE_FLUSH_MS).unref();
  }

  /** Writes the usage records gathered so far, in one transaction. */
  flushUsage(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#pendingUsage.size === 0 || !this.#db.isOpen) return;
    const records = this.#pendingUsage;
    this.#pendingUsage = new Map();
    try {
      this.atomically(() => {
        for (const r of records.values()) this.#addUsage.run(...r);
      });
    } catch (err) {
      // Kept for the next flush (a busy or full disk may pass); a row since then is added to its own.
      for (const [id, r] of this.#pendingUsage) {
        const kept = records.get(id);
        if (kept) for (let i = 4; i < r.length; i++) (kept[i] as number) += r[i] as number;
        else records.set(id, r);
      }
      this.#pendingUsage = records;
      throw err;
    }
  }

  readonly #flushLater = (): void => {
    try {
      this.flushUsage();
    } catch {
      this.#flushTimer ??= setTimeout(this.#flushLater, USAGE_FLUSH_MS).unref();
    }
  };

  usageRows(fromDay: string, toDay: string): UsageRow[] {
    this.flushUsage();
    return this.#usageRows.all(fromDay, toDay).map((r) => ({
      day: String(r.day),
      key: String(r.key),
      team: String(r.team),
      model: String(r.model),
      requests: Number(r.requests),
      input: Number(r.input),
      cachedInput: Number(r.cachedInput),
      cacheWrite: Number(r.cacheWrite),
      output: Number(r.output),
      costNano: Number(r.costNano),
      priced: Number(r.priced),
    }));
  }

  /** Runs `fn` as one transaction: all of a settle is on disk, or none of it. */
  atomically<T>(fn: () => T): T {
    return inTransaction(this.#db, fn);
  }

  close(): void {
    if (!this.#db.isOpen) return;
    try {
      this.flushUsage();
    } finally {
      this.#db.close();
    }
  }
}
