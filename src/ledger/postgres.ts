/**
 * The ledger in PostgreSQL, for fleets: every instance writes to one database through a small
 * connection pool. The schema is created and migrated at start under an advisory lock (two
 * instances starting together migrate once). A batch is one multi-row INSERT … ON CONFLICT (entry)
 * DO NOTHING: a batch retried after a timeout, whose first try may have committed, books nothing twice.
 */
import pg from 'pg';
import type { UsageRow } from '../governance/store.ts';
import { periodSpendRowFrom, SPEND_SINCE_SQL, USAGE_SQL, usageRowFrom, type LedgerEngine, type Migration, type PeriodSpendRow, type PeriodStarts } from './engine.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';
import { COLUMNS, rowFrom, writeValues, type LedgerRow, type LedgerValue } from './record.ts';

export interface PostgresOptions {
  /** postgres://user:password@host:port/database (a secret: never logged). */
  url: string;
  /** Connections in the pool (default 4: batches are few and small). */
  poolSize?: number;
  /** Milliseconds to connect, and for a statement, before the batch is retried later. */
  timeoutMs?: number;
  /** An idle connection that broke (the server restarted): logged, the pool replaces it. */
  onIdleError?: (err: Error) => void;
}

/** An arbitrary, fixed key for pg_advisory_xact_lock: one migration at a time across the fleet. */
const MIGRATION_LOCK = 7_361_190_421;

export class PostgresLedger implements LedgerEngine {
  readonly kind = 'postgres';
  readonly #pool: pg.Pool;
  readonly #migrations: readonly Migration[];

  constructor(options: PostgresOptions, migrations: readonly Migration[] = POSTGRES_MIGRATIONS) {
    const timeout = options.timeoutMs ?? 5_000;
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 4,
      connectionTimeoutMillis: timeout,
      statement_timeout: timeout,
      query_timeout: timeout,
      idleTimeoutMillis: 30_000,
      application_name: 'switchyard-ledger',
    });
    // Without a listener an idle client's error (a server restart) would crash the process.
    this.#pool.on('error', (err) => options.onIdleError?.(err));
    this.#migrations = migrations;
  }

  async migrate(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS switchyard_ledger_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM switchyard_ledger_migrations');
      for (const m of this.#migrations) {
        if (m.version <= (rows[0]?.v ?? 0)) continue;
        await client.query(m.sql);
        await client.query('INSERT INTO switchyard_ledger_migrations (version, description) VALUES ($1, $2)', [m.version, m.description]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async insert(rows: readonly LedgerRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values: LedgerValue[] = [];
    const tuples: string[] = [];
    for (const r of rows) {
      const start = values.length;
      writeValues(r, values, start);
      tuples.push(`(${COLUMNS.map((_, i) => `$${start + i + 1}`).join(', ')})`);
    }
    await this.#pool.query(`INSERT INTO switchyard_requests (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT (entry) DO NOTHING`, values);
  }

  async request(id: string): Promise<LedgerRow | undefined> {
    const { rows } = await this.#pool.query('SELECT * FROM switchyard_requests WHERE id = $1 ORDER BY at DESC LIMIT 1', [id]);
    return rows[0] ? rowFrom(rows[0]) : undefined;
  }

  async usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    const { rows } = await this.#pool.query(
      USAGE_SQL('switchyard_requests', (n) => `$${n}`),
      [fromDay, toDay],
    );
    return rows.map(usageRowFrom);
  }

  async spendByKey(): Promise<Map<string, number>> {
    const { rows } = await this.#pool.query('SELECT key, SUM(cost_nano) AS nano FROM switchyard_requests WHERE key IS NOT NULL AND cost_nano IS NOT NULL GROUP BY key');
    return new Map(rows.map((r) => [String(r.key), Number(r.nano)]));
  }

  async spendSince(starts: PeriodStarts): Promise<PeriodSpendRow[]> {
    const { rows } = await this.#pool.query(
      SPEND_SINCE_SQL('switchyard_requests', (n) => `$${n}`),
      [starts.daily, starts.weekly, starts.monthly],
    );
    return rows.map(periodSpendRowFrom);
  }

  async deleteBefore(day: string, limit: number): Promise<number> {
    const sql = 'DELETE FROM switchyard_requests WHERE entry IN (SELECT entry FROM switchyard_requests WHERE day < $1 LIMIT $2)';
    const { rowCount } = await this.#pool.query(sql, [day, limit]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
