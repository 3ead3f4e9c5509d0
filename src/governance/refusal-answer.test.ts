import { describe, expect, it } from 'vitest';
import { refusalAnswer } from './refusal-answer.ts';

describe('refusalAnswer', () => {
  it('answers a rate limit as OpenAI does: 429 rate_limit_exceeded, the limit named, Retry-After', () => {
    const a = refusalAnswer({ scope: 'key:search-prod', kind: 'tokens', used: 99_000, limit: 100_000, requested: 1_500, retryAfterMs: 1_250, final: false });
    expect(a).toEqual({
      status: 429,
      code: 'rate_limit_exceeded',
      type: 'tokens',
      message: 'Rate limit reached for key search-prod on tokens per min (TPM): Limit 100000, Used 99000, Requested 1500. Please try again in 1.25s.',
      headers: { 'retry-after': '2', 'retry-after-ms': '1250' },
    });
    expect(refusalAnswer({ scope: 'team:search', kind: 'requests', used: 600, limit: 600, requested: 1, retryAfterMs: 400, final: false }).message).toBe(
      'Rate limit reached for team search on requests per min (RPM): Limit 600, Used 600, Requested 1. Please try again in 400ms.',
    );
  });

  it('answers a spent budget with insufficient_quota and x-should-retry: false', () => {
    const a = refusalAnswer({ scope: 'key:k', kind: 'budget', used: 49.99, limit: 50, requested: 0.04, retryAfterMs: null, final: true, resetsAt: Date.UTC(2026, 1, 1) });
    expect(a).toMatchObject({ status: 429, code: 'insufficient_quota', type: 'insufficient_quota', headers: { 'x-should-retry': 'false' } });
    expect(a.message).toBe('You exceeded your current quota: key k has used $49.99 of its $50.00 budget, and this request may cost up to $0.04. The budget resets at 2026-02-01T00:00:00.000Z.');
  });

  it('tells a request too large for tpm not to retry, and refuses an unpriced model for a budgeted key', () => {
    expect(refusalAnswer({ scope: 'key:k', kind: 'tokens', used: 0, limit: 1_000, requested: 5_000, retryAfterMs: null, final: true })).toMatchObject({
      status: 429,
      headers: { 'x-should-retry': 'false' },
    });
    expect(refusalAnswer({ scope: 'key:k', kind: 'unpriced', used: 0, limit: 5, requested: 0, retryAfterMs: null, final: true })).toMatchObject({ status: 403, code: 'model_not_allowed' });
  });
});
