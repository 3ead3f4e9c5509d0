import { describe, expect, it } from 'vitest';
import { chooseRefusal, CONTENDED_RETRY_MS, quotaOf, rawScope, refusalOf } from './decide.ts';
import type { Refusal, Scope } from './types.ts';

const refusal = (over: Partial<Refusal>): Refusal => ({ scope: 'key:k', kind: 'requests', used: 1, limit: 1, requested: 1, retryAfterMs: 1_000, final: false, ...over });

describe('decide', () => {
  it('answers with a spent budget first, then what retrying cannot cure, then the longest wait', () => {
    const wait = refusal({ retryAfterMs: 5_000 });
    const longer = refusal({ kind: 'tokens', retryAfterMs: 40_000 });
    const tooLarge = refusal({ kind: 'tokens', retryAfterMs: null, final: true });
    const spent = refusal({ kind: 'budget', retryAfterMs: null, final: true });
    expect(chooseRefusal([wait, longer])).toBe(longer);
    expect(chooseRefusal([wait, tooLarge, longer])).toBe(tooLarge);
    expect(chooseRefusal([tooLarge, spent, wait])).toBe(spent);
  });

  it("turns raw violations into refusals in the caller's units", () => {
    const scopes: Scope[] = [{ name: 'team:t', limits: { budget: { usd: 2, period: 'daily' }, concurrency: 1 } }];
    const now = Date.UTC(2026, 0, 1, 12);
    expect(refusalOf({ scope: 0, kind: 'budget', used: 1.5e9, limit: 2e9, retryAt: null, final: true }, scopes, 10, 6e8, now)).toEqual({
      scope: 'team:t',
      kind: 'budget',
      used: 1.5,
      limit: 2,
      requested: 0.6,
      retryAfterMs: null,
      final: true,
      resetsAt: Date.UTC(2026, 0, 2),
    });
    expect(refusalOf({ scope: 0, kind: 'concurrency', used: 1, limit: 1, retryAt: null, final: false }, scopes, 10, 0, now)).toMatchObject({ retryAfterMs: CONTENDED_RETRY_MS });
    expect(refusalOf({ scope: 0, kind: 'requests', used: 3, limit: 3, retryAt: now + 1_500, final: false }, scopes, 10, 0, now)).toMatchObject({ requested: 1, retryAfterMs: 1_500 });
  });

  it('reports only the limited dimensions, and the budget left', () => {
    const scope: Scope = { name: 'key:k', limits: { rpm: 10, budget: { usd: 1, period: 'total' } } };
    expect(rawScope(scope)).toEqual({ name: 'key:k', rpm: 10, tpm: undefined, concurrency: undefined, budgetNano: 1e9, period: 'total' });
    const q = quotaOf(scope, { requests: 4, requestsNewest: 1_000, tokens: 99, tokensNewest: 1_000, inFlight: 2, reservedNano: 3e8, spentNano: 5e8 }, 31_000);
    expect(q).toEqual({
      scope: 'key:k',
      spentUsd: 0.5,
      requests: { limit: 10, remaining: 6, resetMs: 30_000 },
      budget: { usd: 1, period: 'total', spentUsd: 0.5, reservedUsd: 0.3, remainingUsd: 0.2, resetsAt: null },
    });
  });
});
