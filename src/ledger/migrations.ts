/**
 * The ledger's schema, as versioned migrations per engine: a migration is never edited once
 * released, a change is a new version. The tables are the ledger's own (`ledger_*` in the
 * SQLite state file beside the governance tables, `switchyard_*` in PostgreSQL).
 */
import type { Migration } from './engine.ts';

/** SQLite: one table in the state file. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'requests',
    sql: `
CREATE TABLE ledger_requests (
  entry TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  at INTEGER NOT NULL,
  day TEXT NOT NULL,
  key TEXT,
  team TEXT,
  model TEXT,
  provider TEXT,
  target_model TEXT,
  ingress TEXT NOT NULL,
  operation TEXT NOT NULL,
  status INTEGER NOT NULL,
  error_code TEXT,
  input_tokens INTEGER,
  cached_tokens INTEGER,
  cache_write_tokens INTEGER,
  output_tokens INTEGER,
  cost_nano INTEGER,
  cost_note TEXT,
  usage_source TEXT,
  duration_ms INTEGER NOT NULL,
  ttft_ms INTEGER,
  attempts INTEGER NOT NULL
);
CREATE INDEX ledger_requests_day ON ledger_requests (day, key);
CREATE INDEX ledger_requests_id ON ledger_requests (id);`,
  },
  {
    version: 2,
    description: 'the exact cache: verdict and saved cost',
    sql: `
ALTER TABLE ledger_requests ADD COLUMN cache TEXT;
ALTER TABLE ledger_requests ADD COLUMN saved_nano INTEGER;`,
  },
];

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'requests',
    sql: `
CREATE TABLE switchyard_requests (
  entry TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  at BIGINT NOT NULL,
  day TEXT NOT NULL,
  key TEXT,
  team TEXT,
  model TEXT,
  provider TEXT,
  target_model TEXT,
  ingress TEXT NOT NULL,
  operation TEXT NOT NULL,
  status INTEGER NOT NULL,
  error_code TEXT,
  input_tokens BIGINT,
  cached_tokens BIGINT,
  cache_write_tokens BIGINT,
  output_tokens BIGINT,
  cost_nano BIGINT,
  cost_note TEXT,
  usage_source TEXT,
  duration_ms INTEGER NOT NULL,
  ttft_ms INTEGER,
  attempts INTEGER NOT NULL
);
CREATE INDEX switchyard_requests_day ON switchyard_requests (day, key);
CREATE INDEX switchyard_requests_id ON switchyard_requests (id);`,
  },
  {
    version: 2,
    description: 'the exact cache: verdict and saved cost',
    sql: 'ALTER TABLE switchyard_requests ADD COLUMN cache TEXT, ADD COLUMN saved_nano BIGINT',
  },
];
