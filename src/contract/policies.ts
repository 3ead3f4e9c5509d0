/** Time, retry and timeout policies, strategies and prices: the settings a route carries. Part of the plugin contract (a leaf: wire types and the error catalogue only). */

/** Time and randomness, injectable so that retry and routing tests are deterministic. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/** What may be retried: `connect`, `timeout`, `5xx`, or an HTTP status. */
export type RetryOn = 'connect' | 'timeout' | '5xx' | number;

export interface RetryPolicy {
  /** Tries per target, the first included. */
  attempts: number;
  backoff: { initialMs: number; maxMs: number; multiplier: number };
  retryOn: readonly RetryOn[];
  /** A Retry-After longer than this is not waited for: the next target is tried instead. */
  maxRetryAfterMs: number;
  /** Time from the request's arrival after which no new attempt or wait starts; attempts are cut to fit. */
  budgetMs?: number;
}

export interface Timeouts {
  /** TCP (and TLS) connect. */
  connectMs: number;
  /** From sending the request to the response headers. */
  firstByteMs: number;
  /** Longest gap between two body chunks (stream events, or a slow JSON body). */
  idleMs: number;
  /** One attempt, until its answer is complete (streams: until the first chunk). */
  totalMs: number;
}

export type Strategy = 'fallback' | 'weighted' | 'least-latency' | 'least-busy';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Prompt tokens read from the provider's cache (default: input). */
  cachedInput?: number;
  /** Prompt tokens written to the provider's cache (default: input). */
  cacheWrite?: number;
  /** Rates for the whole request once its prompt exceeds `aboveTokens`. */
  longContext?: { aboveTokens: number; input: number; output: number; cachedInput?: number; cacheWrite?: number };
}
