/**
 * Resolved resilience settings: gateway.yaml's `retry`, `timeout` and `cooldown` for an alias,
 * with per-target overrides and defaults applied once at load.
 */
import type { RetryOn, RetryPolicy, Timeouts } from '../plugin-api.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';

export type { RetryOn, RetryPolicy, Timeouts };

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
