/**
 * The governance engine's contract: rate limits, concurrency, budgets and usage records for the
 * keys, teams and targets of gateway.yaml. A leaf: it imports nothing but the plugin contract's Price, and every implementation
 * (memory, redis) and the pipeline import it.
 *
 * A "scope" is one counted thing: `key:search-prod`, `team:search`, `target:gpt-4o/openai/gpt-4o`.
 * Counters are keyed by the scope's name (and the budget's calendar period), never by its limits,
 * so a reload that edits limits keeps what was counted.
 */

export type BudgetPeriod = 'daily' | 'weekly' | 'monthly' | 'total';

export interface Budget {
  usd: number;
  /** Calendar periods in UTC; weekly is the ISO week (from Monday); total never resets. */
  period: BudgetPeriod;
}

export interface Limits {
  /** Requests admitted in any 60-second window. */
  rpm?: number;
  /** Tokens (reserved, then settled to real usage) of the requests admitted in any 60-second window. */
  tpm?: number;
  /** Requests in flight. */
  concurrency?: number;
  budget?: Budget;
}

export interface Scope {
  name: string;
  limits: Limits;
}

export interface AdmitRequest {
  /**
   * Omit for a new request (a fresh UUID is used: client request ids are neither unique nor
   * trusted). Pass the lease's id to re-admit the same request on another target: scopes it
   * already holds are not counted again, only its reservation is adjusted.
   */
  id?: string;
  scopes: readonly Scope[];
  /** Worst-case tokens: estimated prompt + max output (see tokenEstimate). */
  tokens: number;
  /** Worst-case USD (see reservationCost); null when the target has no price. */
  costUsd: number | null;
  /** Epoch ms; omit in production (memory: the injected clock; redis: the Redis server's clock). */
  now?: number;
}

export type LimitKind = 'requests' | 'tokens' | 'concurrency' | 'budget' | 'unpriced';

/** Why a request was refused: enough for OpenAI's 429 message and Retry-After. */
export interface Refusal {
  scope: string;
  kind: LimitKind;
  /** Requests, tokens or in-flight count; USD (spent + reserved) for budget. */
  used: number;
  limit: number;
  /** What this request asked for: 1 request, its tokens, its worst-case USD. */
  requested: number;
  /** When the request would fit; null when it never will (budget spent until its period ends: see resetsAt; request larger than tpm). */
  retryAfterMs: number | null;
  /** Retrying cannot help before the period resets (insufficient_quota), or ever (request too large, unpriced). */
  final: boolean;
  /** For budgets: epoch ms at which the period ends (null for total). */
  resetsAt?: number | null;
}

export interface WindowQuota {
  limit: number;
  remaining: number;
  /** Until the window is empty again: OpenAI's "time until the rate limit resets to its initial state". */
  resetMs: number;
}

export interface BudgetQuota {
  usd: number;
  period: BudgetPeriod;
  spentUsd: number;
  reservedUsd: number;
  remainingUsd: number;
  /** Epoch ms at which the period ends; null for total. */
  resetsAt: number | null;
}

/** One scope's figures, for the x-ratelimit-* headers and for reporting. Only limited dimensions appear. */
export interface ScopeQuota {
  scope: string;
  requests?: WindowQuota;
  tokens?: WindowQuota;
  concurrency?: { limit: number; inFlight: number };
  budget?: BudgetQuota;
  /** Spent in the budget's period, or in total when the scope has no budget. */
  spentUsd: number;
}

/** What admit reserved; hand it back to settle or release. */
export interface Lease {
  readonly id: string;
  /** Admission time (epoch ms, the store's clock): spend and usage are booked at this time. */
  readonly at: number;
  readonly scopes: readonly Scope[];
  readonly tokens: number;
  readonly costUsd: number | null;
  /** False when nothing was reserved (no scopes, or admitted while the store was unavailable). */
  readonly reserved: boolean;
}

export type AdmitResult =
  | { status: 'admitted'; lease: Lease; quota: ScopeQuota[] }
  /** `refusal` is the one to answer with; `violations` lists every limit that refused (to tell a full target from a full key). */
  | { status: 'refused'; refusal: Refusal; violations: Refusal[]; quota: ScopeQuota[] }
  /** The store cannot be reached: the caller applies onUnavailable (closed: 503; open: go on with this unreserved lease). */
  | { status: 'unavailable'; lease: Lease; reason: string };

/** Normalised token usage of one request; `input` includes the cached and cache-write tokens. */
export interface TokenUsage {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  /** Includes reasoning tokens (they are inside completion_tokens, billed as output). */
  output: number;
}

export interface UsageLabels {
  key: string;
  team?: string;
  /** The model the client asked for (the alias). */
  model: string;
}

export interface Settlement {
  usage: TokenUsage;
  /** Real USD; null when the price is unknown (counted as unpriced, never as 0). */
  costUsd: number | null;
  /** Where the usage record goes; omit to record nothing (a failed request). */
  labels?: UsageLabels;
  now?: number;
}

/**
 * `queued`: the store was unavailable; the settlement is kept and replayed when it is back.
 * `failed`: the store rejected it (a bug, logged); it is not retried.
 */
export type SettleOutcome = 'settled' | 'queued' | 'failed';

/** Modelled on OpenAI's organization usage API: unix seconds, daily buckets. */
export interface UsageQuery {
  startTime: number;
  /** Exclusive; default: now. */
  endTime?: number;
  groupBy?: ReadonlyArray<'key' | 'team' | 'model'>;
  keys?: readonly string[];
  teams?: readonly string[];
  models?: readonly string[];
}

export interface UsageResult {
  object: 'gateway.usage.result';
  key: string | null;
  team: string | null;
  model: string | null;
  num_model_requests: number;
  input_tokens: number;
  input_cached_tokens: number;
  input_cache_write_tokens: number;
  output_tokens: number;
  /** null when none of the requests had a price. */
  amount: { value: number; currency: 'usd' } | null;
  /** Requests whose cost is unknown (not in `amount`). */
  unpriced_requests: number;
  /** With a request ledger: answers served by the exact cache (not in `num_model_requests`). */
  cache_hits?: number;
  /** With a request ledger: what those answers cost when they were made, spend saved (null when none was priced). */
  saved_amount?: { value: number; currency: 'usd' } | null;
}

export interface UsageBucket {
  object: 'bucket';
  start_time: number;
  end_time: number;
  results: UsageResult[];
}

export interface UsagePage {
  object: 'page';
  data: UsageBucket[];
  has_more: false;
  next_page: null;
}

/** USD per million tokens: the contract's type (the plugin contract is a leaf too). */
export type { Price } from '../plugin-api.ts';

export interface StateBackend {
  /** One atomic step over all scopes: everything is reserved, or nothing. Never rejects. */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Replace the reservation by the real usage, free the concurrency slot, book the cost. Never rejects. */
  settle(lease: Lease, settlement: Settlement): Promise<SettleOutcome>;
  /**
   * Give back what was not used: tokens to 0, cost not booked, slot freed; the request still
   * counts for rpm (it reached the limiter, and a failing client must not escape its rate).
   * With `scopes`, only those (a failed target before a fallback); without, the whole request.
   */
  release(lease: Lease, scopes?: readonly string[]): Promise<SettleOutcome>;
  /** Current figures, for reporting. Rejects with StateUnavailableError when the store is down. */
  status(scopes: readonly Scope[], now?: number): Promise<ScopeQuota[]>;
  /** Usage buckets by UTC day. Rejects with StateUnavailableError when the store is down. */
  usage(query: UsageQuery): Promise<UsagePage>;
  /** False when settlements write no usage records (the request ledger keeps them): a request without scopes then needs no lease. */
  readonly usageRecords?: boolean;
  /** What this instance saw go wrong with the store, for metrics. */
  counts?(): StateCounts;
  /** The state file's lock waits (memory backend; runtime/sqlite.ts LockStats), for metrics. */
  lockStats?(): { busy: number; waitedSeconds: number; locked: boolean } | undefined;
  close(): Promise<void>;
}

export interface StateCounts {
  /** Times the store lost its counters (Redis: the sentinel disappeared). */
  dataLosses: number;
  /** Counters rebuilt from the request ledger by this instance. */
  rebuilds: number;
  /** Settlements dropped because the queue kept while the store was down was full. */
  droppedSettlements: number;
}

/** The pino methods the engine uses. */
export interface GovernanceLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The store cannot answer now (down, timed out, out of memory); trying again later may work. */
export class StateUnavailableError extends Error {
  readonly code = 'state_unavailable';
  /** False when the command never left (not connected): nothing it would have done was done. */
  readonly maybeApplied: boolean;
  constructor(message: string, options?: ErrorOptions & { maybeApplied?: boolean }) {
    super(message, options);
    this.name = 'StateUnavailableError';
    this.maybeApplied = options?.maybeApplied ?? true;
  }
}
