/** The admin API's key, team and cost shapes, from config and quotas: snake case, unix seconds, null for what is not limited or not counted. */
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config/types.ts';
import type { UsagePage } from '../governance/index.ts';
import { costsPage, keyReports, keyScopes, teamReports, teamScopes } from './report.ts';

const config = {
  teams: { search: { limits: { rpm: 10 } }, idle: {} },
  keys: [
    {
      name: 'prod',
      key: 'sk-secret-prod-01',
      team: 'search',
      models: ['gpt*'],
      limits: { tpm: 1000 },
      budget: { usd: 2, period: 'weekly' },
      metadata: { env: 'prod' },
      expiresAt: '2030-01-01T00:00:00Z',
    },
    { name: 'open', keyHash: `sha256:${'0'.repeat(64)}`, models: ['*'] },
  ],
  // Cast on purpose: only the fields the reports read.
} as unknown as GatewayConfig;

describe('admin reports', () => {
  it('counts a scope per limited key or team, none for the others (the Governor counts the same)', () => {
    expect(keyScopes(config)).toEqual([{ name: 'key:prod', limits: { rpm: undefined, tpm: 1000, concurrency: undefined, budget: { usd: 2, period: 'weekly' } } }, undefined]);
    expect(teamScopes(config)).toEqual([{ name: 'team:search', limits: { rpm: 10, tpm: undefined, concurrency: undefined, budget: undefined } }, undefined]);
  });

  it('keys: limits, quota and budget from the figures; nothing counted is null; no secret or hash', () => {
    const now = Date.parse('2026-03-04T10:00:00Z');
    const [prod, open] = keyReports(
      config,
      [
        {
          scope: 'key:prod',
          tokens: { limit: 1000, remaining: 400, resetMs: 1500 },
          budget: { usd: 2, period: 'weekly', spentUsd: 0.5, reservedUsd: 0.25, remainingUsd: 1.25, resetsAt: Date.parse('2026-03-09T00:00:00Z') },
          spentUsd: 0.5,
        },
        undefined,
      ],
      now,
    );
    expect(prod).toEqual({
      object: 'gateway.key',
      name: 'prod',
      team: 'search',
      models: ['gpt*'],
      metadata: { env: 'prod' },
      expires_at: Date.parse('2030-01-01T00:00:00Z') / 1000,
      expired: false,
      limits: { rpm: null, tpm: 1000, concurrency: null },
      requests: null,
      tokens: { limit: 1000, remaining: 400, reset_ms: 1500 },
      concurrency: null,
      budget: { usd: 2, period: 'weekly', spent_usd: 0.5, reserved_usd: 0.25, remaining_usd: 1.25, resets_at: Date.parse('2026-03-09T00:00:00Z') / 1000 },
      spent_usd: 0.5,
      spent_period: 'weekly',
    });
    expect(open).toMatchObject({ name: 'open', team: null, expires_at: null, expired: false, budget: null, spent_usd: null, spent_period: null });
    expect(JSON.stringify([prod, open])).not.toMatch(/sk-secret|sha256|0{64}/);
  });

  it('teams list their keys; a team without limits reports nothing counted', () => {
    const [search, idle] = teamReports(config, [{ scope: 'team:search', requests: { limit: 10, remaining: 7, resetMs: 100 }, spentUsd: 1.5 }, undefined]);
    expect(search).toMatchObject({ object: 'gateway.team', name: 'search', keys: ['prod'], requests: { limit: 10, remaining: 7, reset_ms: 100 }, spent_usd: 1.5, spent_period: 'total' });
    expect(idle).toMatchObject({ name: 'idle', keys: [], limits: { rpm: null, tpm: null, concurrency: null }, spent_usd: null });
  });

  it('costs keep the buckets and labels, narrowed to money', () => {
    const usage: UsagePage = {
      object: 'page',
      has_more: false,
      next_page: null,
      data: [
        {
          object: 'bucket',
          start_time: 0,
          end_time: 86_400,
          results: [
            {
              object: 'gateway.usage.result',
              key: 'prod',
              team: null,
              model: null,
              num_model_requests: 3,
              input_tokens: 9,
              input_cached_tokens: 1,
              input_cache_write_tokens: 0,
              output_tokens: 4,
              amount: { value: 0.25, currency: 'usd' },
              unpriced_requests: 1,
            },
          ],
        },
      ],
    };
    expect(costsPage(usage).data[0]!.results).toEqual([
      { object: 'gateway.costs.result', amount: { value: 0.25, currency: 'usd' }, key: 'prod', team: null, model: null, num_model_requests: 3, unpriced_requests: 1 },
    ]);
  });
});
