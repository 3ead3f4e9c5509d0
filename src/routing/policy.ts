/**
 * Resolved resilience settings: gateway.yaml's `retry`, `timeout` and `cooldown` for an alias,
 * with per-target overrides and defaults applied once at load.
 */
import type { UpstreamError } from '../providers/upstream-error.ts';

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

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 2,
  backoff: { initialMs: 200, maxMs: 5_000, multiplier: 2 },
  retryOn: ['connect', 'timeout', 408, 409, 429, '5xx'],
  maxRetryAfterMs: 10_000,
};

// Generous defaults: reasoning models can think for minutes before a non-streamed answer.
export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, firstByteMs: 600_000, idleMs: 300_000, totalMs: 600_000 };

/** Delay before try number `attempt + 1` on the same target (attempt counts from 1): full jitter. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const { initialMs, maxMs, multiplier } = policy.backoff;
  const ceiling = Math.min(maxMs, initialMs * multiplier ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/** Is this failure worth another try under the policy? The provider's explicit verdict wins. */
export function isRetryable(err: UpstreamError, policy: RetryPolicy): boolean {
  if (err.failure.retryable !== undefined) return err.failure.retryable;
  switch (err.kind) {
    case 'connect':
      return policy.retryOn.includes('connect');
    case 'timeout':
      return policy.retryOn.includes('timeout');
    case 'protocol':
      return policy.retryOn.includes('5xx');
    case 'http':
      return policy.retryOn.includes(err.status) || (err.status >= 500 && policy.retryOn.includes('5xx'));
  }
}

/** The client's own mistake as the provider judged it: retrying or failing over cannot help. */
export function isClientFault(err: UpstreamError): boolean {
  if (err.kind !== 'http' || err.failure.retryable) return false;
  const s = err.status;
  // 402 (billing) is, like 401/403, the operator's problem with the provider: another target may serve.
  return s >= 400 && s < 500 && ![401, 402, 403, 404, 408, 409, 429].includes(s);
}

/** Does this failure say the target is unhealthy (counts towards its cooldown)? */
export function isTargetFault(err: UpstreamError): boolean {
  if (err.kind !== 'http') return true;
  return err.status >= 500 || err.status === 408 || err.status === 429;
}
