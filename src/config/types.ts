/** gateway.yaml after schema validation and defaults (see schemas/gateway.schema.json). */
import type { ResponsesStoreConfig } from '../responses-store/types.ts';
import type { Price, RetryOn } from '../plugin-api.ts';

export type { Price };

export interface RetryConfig {
  attempts?: number;
  backoff?: { initialMs?: number; maxMs?: number; multiplier?: number };
  retryOn?: RetryOn[];
  maxRetryAfterMs?: number;
  budgetMs?: number;
}

export interface TimeoutConfig {
  connectMs?: number;
  firstByteMs?: number;
  idleMs?: number;
  totalMs?: number;
}

export interface TargetConfig {
  provider: string;
  model: string;
  weight: number;
  /** false: the model has no reasoning (reasoning_effort is dropped and reported). */
  reasoning?: boolean;
  price?: Price;
  limits?: RateLimits;
  retry?: RetryConfig;
  timeout?: TimeoutConfig;
}

export interface ModelConfig {
  description?: string;
  dropUnsupportedParams?: boolean;
  /** Refuse what would be dropped (400 naming the field). */
  strict?: boolean;
  strategy: 'fallback' | 'weighted' | 'least-latency' | 'least-busy';
  retry?: RetryConfig;
  timeout?: TimeoutConfig;
  cooldown?: { failures: number; windowMs: number; durationMs: number };
  fallbacks?: { contextWindow?: string[]; contentPolicy?: string[] };
  targets: TargetConfig[];
}

export interface RateLimits {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
}

export interface BudgetConfig {
  usd: number;
  period: 'daily' | 'weekly' | 'monthly' | 'total';
}

/** A secret the key was rotated away from: accepted until `until`, then refused as rotated. */
export interface PreviousKeySecret {
  key?: string;
  keyHash?: string;
  /** ISO 8601 instant with a zone. */
  until: string;
}

export interface KeyConfig {
  name: string;
  /** The secret, or several while rotating (each accepted, all counted under `name`). */
  key?: string | string[];
  keyHash?: string | string[];
  previous?: PreviousKeySecret[];
  models: string[];
  team?: string;
  limits?: RateLimits;
  budget?: BudgetConfig;
  expiresAt?: string;
  /** Refuse what would be dropped for this key's requests (400 naming the field). */
  strict?: boolean;
  metadata?: Record<string, string>;
}

export interface TeamConfig {
  limits?: RateLimits;
  budget?: BudgetConfig;
  metadata?: Record<string, string>;
}

export interface StateConfig {
  backend: 'memory' | 'redis';
  redis?: { url: string; prefix: string };
  onUnavailable: 'closed' | 'open';
  /** How long a reservation outlives its process (renewed every third of it); after a crash, booked once it lapses. */
  leaseTtlMs: number;
  file: string;
  prices?: string;
  /** Stored Responses (src/responses-store); defaults filled in by the store. */
  responses?: Partial<ResponsesStoreConfig>;
  ledger: LedgerConfig;
}

/** `state.ledger`: the per-request books (src/ledger). */
export interface LedgerConfig {
  /** Keep a ledger in the SQLite state file; default: on with the memory backend, off with Redis. */
  enabled?: boolean;
  /** A fleet's ledger: every instance writes here (then `enabled` is implied). */
  postgres?: { url: string; poolSize: number };
  /** Rows older than this many days are deleted hourly; 0 keeps every row. */
  retentionDays: number;
  /** Rows kept in memory while the database cannot be written. */
  maxQueued: number;
  /** How long a row waits to be written with others (ms). */
  flushMs: number;
  /** Write on a thread of its own; default: on with PostgreSQL, off with SQLite. */
  thread?: boolean;
}

export interface MetricsConfig {
  enabled: boolean;
  path: string;
  port?: number;
  auth: boolean;
}

export interface TracingConfig {
  enabled: boolean;
  endpoint?: string;
  protocol: 'http/protobuf' | 'http/json';
  headers?: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
  captureContent: boolean;
}

export interface AdminKeyConfig {
  name: string;
  key?: string;
  keyHash?: string;
}

export interface ProviderConfig {
  plugin: string;
  dropUnsupportedParams?: boolean;
  maxConnections?: number;
  [option: string]: unknown;
}

export type StageRef = string | { stage: string; options?: Record<string, unknown> };

export interface GatewayConfig {
  server: {
    host: string;
    port: number;
    bodyLimit: string | number;
    /** Bytes of request bodies in flight at once; `auto` sizes it from the heap. */
    inFlightBodyLimit: string | number;
    upstreamBodyLimit: string | number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    shutdownGraceMs: number;
    /** A cluster worker's deadline for a state call to the primary (memory backend). */
    primaryTimeoutMs: number;
    /** Processes serving the port: 1 is this process alone; `auto` is one per available CPU (src/cluster). */
    workers: number | 'auto';
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'; format: 'auto' | 'json' | 'pretty' };
  keys: KeyConfig[];
  teams: Record<string, TeamConfig>;
  state: StateConfig;
  admin: { keys: AdminKeyConfig[] };
  metrics: MetricsConfig;
  /** Absent: tracing off unless OTEL_EXPORTER_OTLP_* is set. */
  tracing?: TracingConfig;
  providers: Record<string, ProviderConfig>;
  models: Record<string, ModelConfig>;
  pipeline: StageRef[];
}
