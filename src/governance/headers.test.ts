import { describe, expect, it } from 'vitest';
import { formatReset, rateLimitHeaders } from './headers.ts';

describe('x-ratelimit headers', () => {
  it('formats resets as OpenAI does', () => {
    expect(formatReset(0)).toBe('0ms');
    expect(formatReset(250)).toBe('250ms');
    expect(formatReset(1_000)).toBe('1s');
    expect(formatReset(8_640)).toBe('8.64s');
    expect(formatReset(360_000)).toBe('6m0s');
    expect(formatReset(72_960)).toBe('1m12.96s');
    expect(formatReset(3_723_000)).toBe('1h2m3s');
  });

  it('reports, per dimension, the scope with the least room left', () => {
    const headers = rateLimitHeaders([
      { scope: 'key:k', spentUsd: 0, requests: { limit: 60, remaining: 10, resetMs: 1_000 }, tokens: { limit: 100_000, remaining: 90_000, resetMs: 30_000 } },
      { scope: 'team:t', spentUsd: 0, requests: { limit: 600, remaining: 5, resetMs: 2_000 } },
    ]);
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '600',
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '2s',
      'x-ratelimit-limit-tokens': '100000',
      'x-ratelimit-remaining-tokens': '90000',
      'x-ratelimit-reset-tokens': '30s',
    });
    expect(rateLimitHeaders([{ scope: 'key:k', spentUsd: 0, budget: { usd: 1, period: 'total', spentUsd: 0, reservedUsd: 0, remainingUsd: 1, resetsAt: null } }])).toEqual({});
  });
});
