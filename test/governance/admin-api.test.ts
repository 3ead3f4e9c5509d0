/**
 * The admin API on one gateway (memory backend): who may call it, the shape of each answer,
 * the figures after a scripted set of requests, and that no key secret ever appears.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/runtime/keys.ts';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { adminGet, chat, eventually, startUsageUpstream, todayStart, type UsageUpstream } from './helpers.ts';

const SEARCH_KEY = 'sk-search-prod-0123456789';
const ADS_KEY = 'sk-ads-batch-0123456789';
const LEGACY_KEY = 'sk-legacy-0123456789';
const OPS_KEY = 'sk-admin-ops-0123456789';
const AUDITOR_KEY = 'sk-admin-auditor-0123456789';
const SECRETS = [SEARCH_KEY, ADS_KEY, LEGACY_KEY, OPS_KEY, AUDITOR_KEY];
const DIGESTS = SECRETS.map(sha256Hex);

/** Every answer reports 100 prompt tokens (20 of them cached) and 50 completion tokens. */
const USAGE = { prompt: 100, cached: 20, completion: 50 };
/** gpt-4o's built-in rates (2.50 input, 1.25 cached, 10.00 output per million): 80×2.5 + 20×1.25 + 50×10 = 725 µ$. */
const GPT4O_COST = (80 * 2.5 + 20 * 1.25 + 50 * 10) / 1e6;
/** cheap's `price: { input: 1, output: 2 }` (no cached rate: cached tokens at the input rate): 100×1 + 50×2 = 200 µ$. */
const CHEAP_COST = (100 * 1 + 50 * 2) / 1e6;

let upstream: UsageUpstream;
beforeAll(async () => {
  upstream = await startUsageUpstream(USAGE);
});
afterAll(() => upstream.close());

const t = useTestGateway(() =>
  [
    'teams:',
    '  search: { limits: { rpm: 100 }, budget: { usd: 5, period: monthly }, metadata: { owner: ana } }',
    '  ads: {}',
    'keys:',
    `  - { name: search-prod, key: ${SEARCH_KEY}, team: search, models: ["*"], limits: { rpm: 50, tpm: 100000, concurrency: 4 }, budget: { usd: 1, period: daily }, metadata: { env: prod }, expiresAt: "2099-01-01T00:00:00Z" }`,
    `  - { name: ads-batch, key: ${ADS_KEY}, team: ads, models: [cheap, mystery] }`,
    `  - { name: legacy, keyHash: "sha256:${sha256Hex(LEGACY_KEY)}", models: ["*"], expiresAt: "2020-01-01T00:00:00Z" }`,
    'admin:',
    '  keys:',
    `    - { name: ops, key: ${OPS_KEY} }`,
    `    - { name: auditor, keyHash: "sha256:${sha256Hex(AUDITOR_KEY)}" }`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
    'models:',
    '  gpt: { targets: [{ provider: up, model: gpt-4o }] }',
    '  cheap: { targets: [{ provider: up, model: house-model, price: { input: 1, output: 2 } }] }',
    '  mystery: { targets: [{ provider: up, model: unknown-model-xyz }] }',
  ].join('\n'),
);

const noSecretIn = (text: string) => {
  for (const s of [...SECRETS, ...DIGESTS]) expect(text).not.toContain(s);
};
const since = () => `start_time=${todayStart() - 2 * 86_400}`;

describe('admin API: who may call it', () => {
  it('answers 401 in the OpenAI envelope without a key, with a client key, with a wrong or malformed one', async () => {
    for (const key of [undefined, SEARCH_KEY, ADS_KEY, 'sk-not-a-key-at-all', `${OPS_KEY}x`]) {
      const r = await adminGet(t.url, '/admin/v1/keys', key);
      expect(r.status, String(key)).toBe(401);
      expect(r.body).toEqual({ error: { message: expect.any(String), type: 'authentication_error', param: null, code: 'invalid_api_key' } });
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      noSecretIn(r.text);
    }
    const basic = await fetch(`${t.url}/admin/v1/usage?${since()}`, { headers: { authorization: `Basic ${Buffer.from(`ops:${OPS_KEY}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('opens to an admin key given as a key or as a keyHash, on every endpoint', async () => {
    for (const key of [OPS_KEY, AUDITOR_KEY]) {
      for (const p of ['/admin/v1/keys', '/admin/v1/teams', `/admin/v1/usage?${since()}`, `/admin/v1/costs?${since()}`]) {
        const r = await adminGet(t.url, p, key);
        expect(r.status, p).toBe(200);
        expect(r.headers.get('x-request-id')).toBeTruthy();
        expect(r.headers.get('cache-control')).toBe('no-store');
      }
    }
  });

  it('an admin key cannot call models (401), nor list them', async () => {
    const r = await chat(t.url, OPS_KEY, { model: 'gpt', messages: [{ role: 'user', content: 'admin-calls-model' }] });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('invalid_api_key');
    expect(upstream.count('admin-calls-model').requests).toBe(0);
    const models = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${OPS_KEY}` } });
    expect(models.status).toBe(401);
  });

  it('other methods are 405 with Allow: GET; unknown admin paths are 404', async () => {
    const post = await fetch(`${t.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${OPS_KEY}` } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const missing = await adminGet(t.url, '/admin/v1/secrets', OPS_KEY);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });
});

describe('admin API: query parameters', () => {
  it('refuses a missing start_time, a non-daily bucket, unknown groups and unknown filters with 400 naming the parameter', async () => {
    const cases: Array<[string, string, string]> = [
      ['', 'start_time', 'missing_required_parameter'],
      ['start_time=yesterday', 'start_time', 'invalid_request'],
      [`${since()}&bucket_width=1h`, 'bucket_width', 'invalid_request'],
      [`${since()}&group_by=project_id`, 'group_by', 'invalid_request'],
      [`${since()}&api_key_ids=key_1`, 'api_key_ids', 'invalid_request'],
      [`start_time=${todayStart()}&end_time=${todayStart() - 1}`, 'end_time', 'invalid_request'],
      [`start_time=${todayStart() - 400 * 86_400}&end_time=${todayStart()}`, 'end_time', 'invalid_request'],
    ];
    for (const [query, param, code] of cases) {
      for (const p of ['/admin/v1/usage', '/admin/v1/costs']) {
        const r = await adminGet(t.url, `${p}?${query}`, OPS_KEY);
        expect(r.status, `${p}?${query}`).toBe(400);
        expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param, code });
      }
    }
  });

  it('one bucket per UTC day of the range, empty days included; group_by as a list, repeated, or with []', async () => {
    const start = todayStart() - 3 * 86_400;
    const r = await adminGet(t.url, `/admin/v1/usage?start_time=${start}&end_time=${start + 3 * 86_400}&bucket_width=1d`, OPS_KEY);
    expect(r.body).toEqual({
      object: 'page',
      has_more: false,
      next_page: null,
      data: [0, 1, 2].map((d) => ({ object: 'bucket', start_time: start + d * 86_400, end_time: start + (d + 1) * 86_400, results: [] })),
    });
    // A start inside a day still gets that whole day's bucket.
    const mid = await adminGet(t.url, `/admin/v1/usage?start_time=${start + 3600}&end_time=${start + 7200}`, OPS_KEY);
    expect(mid.body.data.map((b: { start_time: number }) => b.start_time)).toEqual([start]);
    const forms = [`group_by=key,model`, `group_by=key&group_by=model`, `group_by[]=key&group_by[]=model`];
    const pages = await Promise.all(forms.map((f) => adminGet(t.url, `/admin/v1/usage?${since()}&${f}`, OPS_KEY)));
    for (const p of pages) expect(p.body).toEqual(pages[0]!.body);
  });
});

describe('admin API: figures after a scripted set of requests', () => {
  beforeAll(async () => {
    const ask = (key: string, model: string, stream: boolean) => chat(t.url, key, { model, stream, messages: [{ role: 'user', content: `scripted-${model}` }], max_tokens: 100 });
    const answers = await Promise.all([ask(SEARCH_KEY, 'gpt', false), ask(SEARCH_KEY, 'gpt', false), ask(SEARCH_KEY, 'gpt', true), ask(ADS_KEY, 'cheap', false), ask(ADS_KEY, 'mystery', true)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Refused before any upstream (ads-batch may not use gpt): no usage record.
    expect((await ask(ADS_KEY, 'gpt', false)).status).toBe(403);
    await eventually(async () => {
      const u = await adminGet(t.url, `/admin/v1/usage?${since()}`, OPS_KEY);
      expect(u.body.data.reduce((n: number, b: { results: Array<{ num_model_requests: number }> }) => n + b.results.reduce((m, r) => m + r.num_model_requests, 0), 0)).toBe(5);
    });
  });

  it('usage by key and model: requests, input, cached and output tokens, cost, unpriced requests', async () => {
    const r = await adminGet(t.url, `/admin/v1/usage?${since()}&group_by=key,model`, OPS_KEY);
    const results = r.body.data.flatMap((b: { results: unknown[] }) => b.results);
    const row = (key: string, model: string, requests: number, amount: number | null) => ({
      object: 'gateway.usage.result',
      key,
      team: null,
      model,
      num_model_requests: requests,
      input_tokens: 100 * requests,
      input_cached_tokens: 20 * requests,
      input_cache_write_tokens: 0,
      output_tokens: 50 * requests,
      amount: amount === null ? null : { value: expect.closeTo(amount, 12), currency: 'usd' },
      unpriced_requests: amount === null ? requests : 0,
      // Read from the request ledger (the default with the memory backend): no cache here.
      cache_hits: 0,
      saved_amount: null,
    });
    expect(results).toEqual([row('ads-batch', 'cheap', 1, CHEAP_COST), row('ads-batch', 'mystery', 1, null), row('search-prod', 'gpt', 3, 3 * GPT4O_COST)]);
    // Today's bucket holds them all.
    const today = r.body.data.find((b: { start_time: number }) => b.start_time === todayStart());
    expect(today.results).toHaveLength(3);
  });

  it('usage by team, and filtered by key and by model', async () => {
    const byTeam = await adminGet(t.url, `/admin/v1/usage?${since()}&group_by=team`, OPS_KEY);
    const teams = byTeam.body.data.flatMap((b: { results: unknown[] }) => b.results);
    expect(teams).toMatchObject([
      { key: null, team: 'ads', model: null, num_model_requests: 2, amount: { value: expect.closeTo(CHEAP_COST, 12) }, unpriced_requests: 1 },
      { key: null, team: 'search', model: null, num_model_requests: 3, amount: { value: expect.closeTo(3 * GPT4O_COST, 12) }, unpriced_requests: 0 },
    ]);
    const filtered = await adminGet(t.url, `/admin/v1/usage?${since()}&keys=search-prod&models=gpt,cheap`, OPS_KEY);
    expect(filtered.body.data.flatMap((b: { results: unknown[] }) => b.results)).toMatchObject([{ key: null, team: null, model: null, num_model_requests: 3, input_tokens: 300 }]);
  });

  it('costs: the same buckets in the shape of OpenAI costs (amount.value, currency usd), null when nothing was priced', async () => {
    const r = await adminGet(t.url, `/admin/v1/costs?${since()}&group_by=model`, OPS_KEY);
    expect(r.body).toMatchObject({ object: 'page', has_more: false, next_page: null });
    const results = r.body.data.flatMap((b: { results: unknown[] }) => b.results);
    expect(results).toEqual([
      { object: 'gateway.costs.result', amount: { value: expect.closeTo(CHEAP_COST, 12), currency: 'usd' }, key: null, team: null, model: 'cheap', num_model_requests: 1, unpriced_requests: 0 },
      { object: 'gateway.costs.result', amount: { value: expect.closeTo(3 * GPT4O_COST, 12), currency: 'usd' }, key: null, team: null, model: 'gpt', num_model_requests: 3, unpriced_requests: 0 },
      { object: 'gateway.costs.result', amount: null, key: null, team: null, model: 'mystery', num_model_requests: 1, unpriced_requests: 1 },
    ]);
  });

  it('keys: team, metadata, expiry, limits, what is left now and the budget; never a secret', async () => {
    const r = await adminGet(t.url, '/admin/v1/keys', OPS_KEY);
    noSecretIn(r.text);
    expect(r.body.object).toBe('list');
    const [search, ads, legacy] = r.body.data;
    const spent = 3 * GPT4O_COST;
    expect(search).toEqual({
      object: 'gateway.key',
      name: 'search-prod',
      team: 'search',
      models: ['*'],
      metadata: { env: 'prod' },
      expires_at: Date.parse('2099-01-01T00:00:00Z') / 1000,
      expired: false,
      limits: { rpm: 50, tpm: 100000, concurrency: 4 },
      requests: { limit: 50, remaining: 47, reset_ms: expect.any(Number) },
      // Settled to the real usage: 150 tokens a request.
      tokens: { limit: 100000, remaining: 100000 - 3 * 150, reset_ms: expect.any(Number) },
      concurrency: { limit: 4, in_flight: 0 },
      budget: { usd: 1, period: 'daily', spent_usd: expect.closeTo(spent, 12), reserved_usd: 0, remaining_usd: expect.closeTo(1 - spent, 12), resets_at: todayStart() + 86_400 },
      spent_usd: expect.closeTo(spent, 12),
      spent_period: 'daily',
    });
    expect(search.requests.reset_ms).toBeGreaterThan(0);
    expect(search.requests.reset_ms).toBeLessThanOrEqual(60_000);
    expect(ads).toEqual({
      object: 'gateway.key',
      name: 'ads-batch',
      team: 'ads',
      models: ['cheap', 'mystery'],
      metadata: {},
      expires_at: null,
      expired: false,
      limits: { rpm: null, tpm: null, concurrency: null },
      requests: null,
      tokens: null,
      concurrency: null,
      budget: null,
      // No counters for a key without limits or a budget: its spend is the request ledger's, over every row kept (the unpriced request adds nothing).
      spent_usd: expect.closeTo(CHEAP_COST, 12),
      spent_period: 'total',
    });
    expect(legacy).toMatchObject({ name: 'legacy', team: null, expires_at: Date.parse('2020-01-01T00:00:00Z') / 1000, expired: true, spent_usd: 0, spent_period: 'total' });
    expect(Object.keys(legacy)).not.toContain('key');
    expect(Object.keys(legacy)).not.toContain('keyHash');
  });

  it('teams: their keys, limits, what is left now and the budget', async () => {
    const r = await adminGet(t.url, '/admin/v1/teams', OPS_KEY);
    noSecretIn(r.text);
    const monthEnd = (() => {
      const d = new Date();
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
    })();
    expect(r.body).toEqual({
      object: 'list',
      data: [
        {
          object: 'gateway.team',
          name: 'search',
          keys: ['search-prod'],
          metadata: { owner: 'ana' },
          limits: { rpm: 100, tpm: null, concurrency: null },
          requests: { limit: 100, remaining: 97, reset_ms: expect.any(Number) },
          tokens: null,
          concurrency: null,
          budget: { usd: 5, period: 'monthly', spent_usd: expect.closeTo(3 * GPT4O_COST, 12), reserved_usd: 0, remaining_usd: expect.closeTo(5 - 3 * GPT4O_COST, 12), resets_at: monthEnd },
          spent_usd: expect.closeTo(3 * GPT4O_COST, 12),
          spent_period: 'monthly',
        },
        {
          object: 'gateway.team',
          name: 'ads',
          keys: ['ads-batch'],
          metadata: {},
          limits: { rpm: null, tpm: null, concurrency: null },
          requests: null,
          tokens: null,
          concurrency: null,
          budget: null,
          spent_usd: null,
          spent_period: null,
        },
      ],
    });
  });

  it('no answer of the admin API carries a key secret or its hash', async () => {
    for (const p of ['/admin/v1/keys', '/admin/v1/teams', `/admin/v1/usage?${since()}&group_by=key,team,model`, `/admin/v1/costs?${since()}&group_by=key,team,model`]) {
      noSecretIn((await adminGet(t.url, p, AUDITOR_KEY)).text);
    }
  });
});
