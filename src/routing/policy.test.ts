/** Retry policy: full-jitter backoff bounds, what `retryOn` retries, and its agreement with the failure table. */
import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../plugin-api.ts';
import { UpstreamError, httpRule } from '../providers/upstream-error.ts';
import { DEFAULT_RETRY, backoffDelay, isRetryable } from './policy.ts';

const policy = (over: Partial<RetryPolicy> = {}): RetryPolicy => ({
  attempts: 3,
  backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2 },
  retryOn: [],
  maxRetryAfterMs: 10_000,
  ...over,
});

const http = (status: number, extra: { retryable?: boolean; status?: number } = {}) => UpstreamError.http('p', status, { message: 'm', ...extra });
const connect = () => UpstreamError.connect('p', 'ECONNREFUSED');
const timeout = () => UpstreamError.timeout('p', 'first byte');
const protocol = () => UpstreamError.protocol('p', 'bad JSON');

describe('backoffDelay (full jitter)', () => {
  const p = policy();

  it('random 0 gives no wait at any attempt', () => {
    for (const attempt of [1, 2, 5, 20]) expect(backoffDelay(p, attempt, () => 0)).toBe(0);
  });

  it('random just below 1 gives the ceiling: initialMs · multiplier^(attempt − 1)', () => {
    const almostOne = () => 0.999_999_9;
    expect(backoffDelay(p, 1, almostOne)).toBe(100);
    expect(backoffDelay(p, 2, almostOne)).toBe(200);
    expect(backoffDelay(p, 3, almostOne)).toBe(400);
    expect(backoffDelay(p, 4, almostOne)).toBe(800);
  });

  it('the ceiling is capped at maxMs', () => {
    const almostOne = () => 0.999_999_9;
    expect(backoffDelay(p, 5, almostOne)).toBe(1_000); // 1,600 uncapped
    expect(backoffDelay(p, 30, almostOne)).toBe(1_000);
  });

  it('scales linearly with random within the ceiling, rounded to whole ms', () => {
    expect(backoffDelay(p, 1, () => 0.5)).toBe(50);
    expect(backoffDelay(p, 3, () => 0.25)).toBe(100);
    expect(backoffDelay(p, 1, () => 0.123)).toBe(12);
    expect(backoffDelay(p, 9, () => 0.5)).toBe(500); // half of the cap
  });

  it('multiplier 1 is a constant ceiling', () => {
    const flat = policy({ backoff: { initialMs: 300, maxMs: 5_000, multiplier: 1 } });
    expect(backoffDelay(flat, 1, () => 0.999_999_9)).toBe(300);
    expect(backoffDelay(flat, 6, () => 0.999_999_9)).toBe(300);
  });

  it('the defaults: 200 ms first ceiling, 5 s cap', () => {
    expect(backoffDelay(DEFAULT_RETRY, 1, () => 0.999_999_9)).toBe(200);
    expect(backoffDelay(DEFAULT_RETRY, 10, () => 0.999_999_9)).toBe(5_000);
  });
});

describe('isRetryable', () => {
  it('connect failures only when retryOn has "connect"', () => {
    expect(isRetryable(connect(), policy({ retryOn: ['connect'] }))).toBe(true);
    expect(isRetryable(connect(), policy({ retryOn: ['timeout', '5xx', 502] }))).toBe(false);
  });

  it('timeouts only when retryOn has "timeout"', () => {
    expect(isRetryable(timeout(), policy({ retryOn: ['timeout'] }))).toBe(true);
    expect(isRetryable(timeout(), policy({ retryOn: ['connect', '5xx', 504, 408] }))).toBe(false);
  });

  it('protocol failures (malformed answers) count as "5xx"', () => {
    expect(isRetryable(protocol(), policy({ retryOn: ['5xx'] }))).toBe(true);
    expect(isRetryable(protocol(), policy({ retryOn: ['connect', 'timeout', 502] }))).toBe(false);
  });

  it('an HTTP status listed by number is retried, one not listed is not', () => {
    const p = policy({ retryOn: [429, 502] });
    expect(isRetryable(http(429), p)).toBe(true);
    expect(isRetryable(http(502), p)).toBe(true);
    expect(isRetryable(http(503), p)).toBe(false);
    expect(isRetryable(http(408), p)).toBe(false);
  });

  it('"5xx" covers every status from 500 up, and no 4xx', () => {
    const p = policy({ retryOn: ['5xx'] });
    for (const status of [500, 502, 503, 504, 529, 599]) expect(isRetryable(http(status), p)).toBe(true);
    for (const status of [400, 404, 408, 429, 499]) expect(isRetryable(http(status), p)).toBe(false);
  });

  it('the policy decides, not the table: a 400 the operator lists is retried, a 429 left out is not', () => {
    expect(isRetryable(http(400), policy({ retryOn: [400] }))).toBe(true);
    expect(isRetryable(http(429), policy({ retryOn: ['5xx'] }))).toBe(false);
  });

  it("the provider's explicit verdict wins over retryOn either way", () => {
    expect(isRetryable(http(400, { retryable: true }), policy({ retryOn: [] }))).toBe(true);
    expect(isRetryable(http(503, { retryable: false }), DEFAULT_RETRY)).toBe(false);
    expect(isRetryable(http(429, { retryable: false }), policy({ retryOn: [429] }))).toBe(false);
  });

  it("reads the status after the provider's `failure.status` override", () => {
    // Answered 400, but the provider says it is really a 503.
    expect(isRetryable(http(400, { status: 503 }), policy({ retryOn: ['5xx'] }))).toBe(true);
    expect(isRetryable(http(503, { status: 400 }), policy({ retryOn: ['5xx'] }))).toBe(false);
  });
});

describe('DEFAULT_RETRY agrees with the failure table in upstream-error.ts', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_RETRY).toEqual({
      attempts: 2,
      backoff: { initialMs: 200, maxMs: 5_000, multiplier: 2 },
      retryOn: ['connect', 'timeout', 408, 409, 429, '5xx'],
      maxRetryAfterMs: 10_000,
    });
  });

  const statuses = [400, 401, 402, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529];
  const retriedByDefault = [408, 409, 429, 500, 502, 503, 504, 529];

  it.each(statuses)('HTTP %i: retried by default exactly when the table marks it retryable', (status) => {
    const expected = retriedByDefault.includes(status);
    expect(httpRule(status).retryable).toBe(expected);
    expect(isRetryable(http(status), DEFAULT_RETRY)).toBe(expected);
  });

  it.each([
    ['connect', connect],
    ['timeout', timeout],
    ['protocol', protocol],
  ] as const)('%s failures: retried by default, as the table marks them', (_kind, make) => {
    const err = make();
    expect(err.rule.retryable).toBe(true);
    expect(isRetryable(err, DEFAULT_RETRY)).toBe(true);
  });
});
