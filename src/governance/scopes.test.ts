import { describe, expect, it } from 'vitest';
import { requestScopes } from './scopes.ts';

describe('requestScopes', () => {
  it('names key, team and target scopes, leaving out what has no limit', () => {
    expect(
      requestScopes({
        key: { name: 'search-prod', limits: { rpm: 60 }, budget: { usd: 50, period: 'monthly' } },
        team: { name: 'search' },
        target: { provider: 'openai', model: 'gpt-4o', limits: { tpm: 300_000 } },
      }),
    ).toEqual([
      { name: 'key:search-prod', limits: { rpm: 60, tpm: undefined, concurrency: undefined, budget: { usd: 50, period: 'monthly' } } },
      { name: 'target:openai/gpt-4o', limits: { rpm: undefined, tpm: 300_000, concurrency: undefined, budget: undefined } },
    ]);
  });
});
