/**
 * What a ledger database does, the same on SQLite and PostgreSQL: create and migrate its
 * schema, insert a batch idempotently (a row whose entry id is on the books is skipped, so a
 * batch retried after a timeout never books twice), answer the reports, and delete old rows.
 */
import type { UsageRow } from '../governance/store.ts';
import type { LedgerRow } from './record.ts';

export interface LedgerEngine {
  /** 'sqlite' or 'postgres', for logs and metrics. */
  readonly kind: string;
  /** Creates the schema and applies the migrations not yet applied. Idempotent. */
  migrate(): Promise<void>;
  /** Inserts the rows whose id is not on the books yet; all or none. */
  insert(rows: readonly LedgerRow[]): Promise<void>;
  request(id: string): Promise<LedgerRow | undefined>;
  /** Requests, tokens and cost per day × key × team × model, for the days in [fromDay, toDay]. */
  usageRows(fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** Nano-USD per key over every row kept (keys without a cost are absent). */
  spendByKey(): Promise<Map<string, number>>;
  /**
   * Nano-USD per key × team booked since each start (epoch ms of the current day, week and
   * month) and over every row kept: what rebuilds Redis's period spend after it lost its data.
   */
  spendSince(starts: PeriodStarts): Promise<PeriodSpendRow[]>;
  /** Deletes at most `limit` rows of the UTC days before `day` (YYYY-MM-DD); returns how many. */
  deleteBefore(day: string, limit: number): Promise<number>;
  close(): Promise<void>;
}

export interface PeriodStarts {
  daily: number;
  weekly: number;
  monthly: number;
}

export interface PeriodSpendRow {
  key: string | null;
  team: string | null;
  daily: number;
  weekly: number;
  monthly: number;
  total: number;
}

export const SPEND_SINCE_SQL = (table: string, p: (n: number) => string): string => `
SELECT key, team,
  COALESCE(SUM(CASE WHEN at >= ${p(1)} THEN cost_nano END), 0) AS daily,
  COALESCE(SUM(CASE WHEN at >= ${p(2)} THEN cost_nano END), 0) AS weekly,
  COALESCE(SUM(CASE WHEN at >= ${p(3)} THEN cost_nano END), 0) AS monthly,
  SUM(cost_nano) AS total
FROM ${table} WHERE cost_nano IS NOT NULL AND (key IS NOT NULL OR team IS NOT NULL)
GROUP BY key, team`;

export function periodSpendRowFrom(r: Record<string, unknown>): PeriodSpendRow {
  const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  return { key: str(r.key), team: str(r.team), daily: Number(r.daily), weekly: Number(r.weekly), monthly: Number(r.monthly), total: Number(r.total) };
}

/** A versioned change to the schema: applied once, in order, recorded in the engine's migrations table. */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * The usage report's SQL, shared by both engines: a row counts as a model request when it has a
 * usage (reported or estimated), as the settled usage always did; its cost counts when known. A
 * cache hit is no model request (it costs nothing): it is counted apart, with the cost it saved.
 */
export const USAGE_SQL = (table: string, p: (n: number) => string): string => `
SELECT day, COALESCE(key, '-') AS key, COALESCE(team, '') AS team, COALESCE(model, '') AS model,
  SUM(CASE WHEN usage_source IS NOT NULL THEN 1 ELSE 0 END) AS requests,
  COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(cached_tokens), 0) AS cached_input,
  COALESCE(SUM(cache_write_tokens), 0) AS cache_write, COALESCE(SUM(output_tokens), 0) AS output,
  COALESCE(SUM(CASE WHEN usage_source IS NOT NULL THEN cost_nano END), 0) AS cost_nano,
  SUM(CASE WHEN usage_source IS NOT NULL AND cost_nano IS NOT NULL THEN 1 ELSE 0 END) AS priced,
  SUM(CASE WHEN cache = 'hit' THEN 1 ELSE 0 END) AS cache_hits, COALESCE(SUM(saved_nano), 0) AS saved_nano
FROM ${table} WHERE day >= ${p(1)} AND day <= ${p(2)} AND (usage_source IS NOT NULL OR cache = 'hit')
GROUP BY day, COALESCE(key, '-'), COALESCE(team, ''), COALESCE(model, '')
ORDER BY 1, 2, 3, 4`;

export function usageRowFrom(r: Record<string, unknown>): UsageRow {
  return {
    day: String(r.day),
    key: String(r.key),
    team: String(r.team),
    model: String(r.model),
    requests: Number(r.requests),
    input: Number(r.input),
    cachedInput: Number(r.cached_input),
    cacheWrite: Number(r.cache_write),
    output: Number(r.output),
    costNano: Number(r.cost_nano),
    priced: Number(r.priced),
    cacheHits: Number(r.cache_hits),
    savedNano: Number(r.saved_nano),
  };
}
