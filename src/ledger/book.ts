/**
 * The request ledger as the gateway uses it: an observer of each request's end that queues one
 * row (an object and an array push on the serving thread, nothing else), and a timer that writes
 * the queue in batches. While the database cannot be written the rows stay queued, up to
 * `maxQueued` (what does not fit is dropped, counted and logged), and the timer retries with
 * back-off; a batch is idempotent by its rows' entry ids, so a retry after a timeout never books twice.
 * Reads (reports, one request) answer from the database and, for a request not written yet, the queue.
 */
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import { DAY_MS as ONE_DAY, dayId, periodEnd, periodId } from '../governance/periods.ts';
import type { SpendSource } from '../governance/redis-recovery.ts';
import { keyScopeName, teamScopeName } from '../governance/scopes.ts';
import { usagePage, daysOf } from '../governance/usage-report.ts';
import { StateUnavailableError, type UsagePage, type UsageQuery } from '../governance/types.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import type { LedgerEngine } from './engine.ts';
import { isBooked, rowOf, type LedgerRow } from './record.ts';

export interface RequestLedgerOptions {
  engine: LedgerEngine;
  log: Logger;
  /** How long a row waits to be written with others (ms). */
  flushMs?: number;
  /** Rows per INSERT. */
  batchSize?: number;
  /** Rows kept while the database is down; beyond, new rows are dropped (counted, logged). */
  maxQueued?: number;
  /** Rows of the UTC days more than this many days ago are deleted every hour; 0 keeps them all. */
  retentionDays?: number;
  /** Longest wait between retries while the database is down (ms). */
  maxRetryMs?: number;
}

export interface LedgerStats {
  queued: number;
  written: number;
  dropped: number;
  /** Whether the last write (or migration) succeeded. */
  up: boolean;
}

const DAY_MS = 86_400_000;
const RETENTION_EVERY_MS = 3_600_000;
const SPEND_MEMO_MS = 2_000;
/** Rows deleted per statement: a short transaction each, other work runs between them. */
const RETENTION_CHUNK = 2_000;

export class RequestLedger implements GatewayObserver, SpendSource {
  readonly engine: LedgerEngine;
  readonly #log: Logger;
  readonly #flushMs: number;
  readonly #batchSize: number;
  readonly #maxQueued: number;
  readonly #retentionDays: number;
  readonly #maxRetryMs: number;
  #queue: LedgerRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  #retention: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #delay: number;
  #migrated = false;
  /** Failed writes in a row (the database is down while above 0). */
  #failures = 0;
  #dropping = false;
  #written = 0;
  #dropped = 0;
  #closed = false;
  #spend: { at: number; value: Map<string, number> } | undefined;

  constructor(options: RequestLedgerOptions) {
    this.engine = options.engine;
    this.#log = options.log;
    this.#flushMs = options.flushMs ?? 200;
    this.#batchSize = options.batchSize ?? 500;
    this.#maxQueued = options.maxQueued ?? 100_000;
    this.#retentionDays = options.retentionDays ?? 0;
    this.#maxRetryMs = options.maxRetryMs ?? 5_000;
    this.#delay = this.#flushMs;
  }

  /** Migrates the schema (a database down now is retried by the writer, not fatal) and starts the retention job. */
  async start(): Promise<void> {
    await this.flush();
    if (this.#retentionDays > 0) {
      void this.#applyRetention();
      this.#retention = setInterval(() => void this.#applyRetention(), RETENTION_EVERY_MS).unref();
    }
  }

  requestEnded(x: ExchangeView): void {
    if (isBooked(x)) this.record(rowOf(x));
  }

  /** Queues one row; the serving thread's whole share of the ledger. */
  record(row: LedgerRow): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.#dropped++;
      if (!this.#dropping) {
        this.#dropping = true;
        this.#log.error(
          { maxQueued: this.#maxQueued, engine: this.engine.kind },
          `request ledger: the queue is full (${this.#maxQueued} rows unwritten); new rows are dropped and counted until the database takes writes again`,
        );
      }
      return;
    }
    this.#queue.push(row);
    if (!this.#timer && !this.#running && !this.#closed) this.#timer = setTimeout(this.#tick, this.#delay).unref();
  }

  get stats(): LedgerStats {
    return { queued: this.#queue.length, written: this.#written, dropped: this.#dropped, up: this.#failures === 0 };
  }

  /** Writes what is queued now (waits for a write in progress first); never throws. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#running) await this.#running;
    this.#running = this.#writeQueued().finally(() => {
      this.#running = undefined;
      if (this.#queue.length > 0 && !this.#closed) this.#timer ??= setTimeout(this.#tick, this.#delay).unref();
    });
    await this.#running;
  }

  readonly #tick = (): void => {
    this.#timer = undefined;
    void this.flush();
  };

  async #writeQueued(): Promise<void> {
    try {
      if (!this.#migrated) {
        await this.engine.migrate();
        this.#migrated = true;
      }
      while (this.#queue.length > 0) {
        const batch = this.#queue.slice(0, this.#batchSize);
        await this.engine.insert(batch);
        // Rows queued during the write were appended: only the batch leaves the front.
        this.#queue.splice(0, batch.length);
        this.#written += batch.length;
        this.#spend = undefined;
      }
      if (this.#failures > 1) this.#log.warn({ engine: this.engine.kind, dropped: this.#dropped }, 'request ledger: the database takes writes again; the queued rows are written');
      this.#failures = 0;
      this.#dropping = false;
      this.#delay = this.#flushMs;
    } catch (err) {
      // One failure its retry gets past (another process's write lock on a shared SQLite file, a
      // moment under load) is no outage: logged from the second in a row.
      if (++this.#failures === 2) {
        this.#log.error(
          { engine: this.engine.kind, err: describe(err), queued: this.#queue.length },
          `request ledger: the database cannot be written; rows stay queued (at most ${this.#maxQueued}) and are retried`,
        );
      }
      this.#delay = Math.min(this.#maxRetryMs, this.#delay * 2);
    }
  }

  /** One request by id: from the database, or the queue when not written yet. */
  async request(id: string): Promise<LedgerRow | undefined> {
    const queued = this.#queue.findLast((r) => r.id === id);
    if (queued) return queued;
    return this.#read(() => this.engine.request(id));
  }

  /** The usage page of GET /admin/v1/usage, from the ledger's rows. */
  async usage(query: UsageQuery, nowMs = Date.now()): Promise<UsagePage> {
    await this.flush();
    const { from, to } = daysOf(query, nowMs);
    return usagePage(await this.#read(() => this.engine.usageRows(from, to)), query, nowMs);
  }

  /**
   * USD per key over the rows kept. A scan of every row, so one answer serves the calls of the
   * next SPEND_MEMO_MS until this instance writes rows (the console polls it; other instances'
   * rows are then at most that late).
   */
  async spendByKey(): Promise<Map<string, number>> {
    const memo = this.#spend;
    if (memo && performance.now() - memo.at < SPEND_MEMO_MS) return memo.value;
    await this.flush();
    const nano = await this.#read(() => this.engine.spendByKey());
    const value = new Map([...nano].map(([key, n]) => [key, n / 1e9]));
    this.#spend = { at: performance.now(), value };
    return value;
  }

  /** How long a row waits before it is written (SpendSource: what a rebuild waits for other instances). */
  get flushMs(): number {
    return this.#flushMs;
  }

  /** Spend per key and team scope and period id, for the periods containing `at` (rows written so far, this instance's queue first). */
  async periodSpend(at: number): Promise<Array<{ scope: string; period: string; nano: number }>> {
    await this.flush();
    const month = new Date(at);
    const starts = { daily: Math.floor(at / ONE_DAY) * ONE_DAY, weekly: periodEnd('weekly', at)! - 7 * ONE_DAY, monthly: Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1) };
    const rows = await this.#read(() => this.engine.spendSince(starts));
    const sums = new Map<string, number>();
    const add = (scope: string, r: (typeof rows)[number]): void => {
      for (const period of ['daily', 'weekly', 'monthly', 'total'] as const) {
        const id = `${scope}:${periodId(period, at)}`;
        sums.set(id, (sums.get(id) ?? 0) + r[period]);
      }
    };
    for (const r of rows) {
      if (r.key !== null) add(keyScopeName(r.key), r);
      if (r.team !== null) add(teamScopeName(r.team), r);
    }
    return [...sums]
      .filter(([, nano]) => nano > 0)
      .map(([id, nano]) => {
        const cut = id.lastIndexOf(':');
        return { scope: id.slice(0, cut), period: id.slice(cut + 1), nano };
      });
  }

  /** Writes what is queued (one last try), then closes the database; rows still unwritten are logged. */
  async close(): Promise<void> {
    clearInterval(this.#retention);
    await this.flush();
    this.#closed = true;
    clearTimeout(this.#timer);
    if (this.#queue.length > 0) this.#log.error({ engine: this.engine.kind, lost: this.#queue.length }, `request ledger: ${this.#queue.length} rows could not be written before shutdown`);
    await this.engine.close().catch((err) => this.#log.warn({ err: describe(err) }, 'request ledger: closing the database failed'));
  }

  async #read<T>(fn: () => Promise<T>): Promise<T> {
    try {
      if (!this.#migrated) {
        await this.engine.migrate();
        this.#migrated = true;
      }
      return await fn();
    } catch (err) {
      throw new StateUnavailableError(`request ledger (${this.engine.kind}): ${describe(err)}`, { cause: err });
    }
  }

  /** Deletes the days older than the retention in chunks, yielding between them (SQLite deletes on this thread). */
  async #applyRetention(): Promise<void> {
    const before = dayId(Date.now() - this.#retentionDays * DAY_MS);
    let deleted = 0;
    try {
      for (let n = RETENTION_CHUNK; n === RETENTION_CHUNK && !this.#closed; deleted += n) {
        n = await this.engine.deleteBefore(before, RETENTION_CHUNK);
        await setImmediate();
      }
      if (deleted > 0) this.#log.info({ deleted, retentionDays: this.#retentionDays }, `request ledger: deleted ${deleted} rows older than ${this.#retentionDays} days`);
    } catch (err) {
      this.#log.warn({ err: describe(err) }, 'request ledger: the retention job failed; it runs again in an hour');
    }
  }
}

/** An error's message only: a driver's error object may carry its connection settings. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
