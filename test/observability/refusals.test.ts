/**
 * What an on-call person reads when requests are refused or the state backend is in trouble:
 * switchyard_refusals_total by reason and scope for each kind of refusal, the budget gauges,
 * switchyard_state_backend_up through an outage and a hang, and the last-reload gauge.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEV_KEY, fakeUpstream, loadFixture, replay, useTestGateway } from 'switchyard-gateway/kit/testing';
import { openState } from '../../src/gateway.ts';
import { StateUnavailableError, type StateBackend } from '../../src/governance/index.ts';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { parseExposition, scrape, settledScrape, sampleValue, sumOf } from './helpers.ts';

const upstream = fakeUpstream(() => replay(loadFixture(fixturesOf('openai'), 'chat-basic')));
const KEYS = { a: 'sk-crew-a-0123456789', b: 'sk-crew-b-0123456789', narrow: 'sk-narrow-0123456789', small: 'sk-small-01234567890' };
// chat-basic is 14 + 7 tokens: at $1 / $2 per million, $0.000028 a request.
const PRICE = '{ input: 1, output: 2 }';

/** The state backend as opened, with an outage switch: `down` fails its status, `hung` never answers. */
let outage: 'none' | 'down' | 'hung' = 'none';
const withOutage = async (...args: Parameters<typeof openState>): Promise<StateBackend> => {
  const real = await openState(...args);
  return {
    ...real,
    status(scopes, now) {
      if (outage === 'down') return Promise.reject(new StateUnavailableError('connection refused'));
      if (outage === 'hung') return new Promise(() => undefined);
      return real.status(scopes, now);
    },
  };
};

const t = useTestGateway(
  () =>
    configYaml({
      keys: [
        `  - { name: dev, key: ${DEV_KEY}, models: ["*"], team: core, budget: { usd: 1, period: monthly } }`,
        `  - { name: a, key: ${KEYS.a}, models: ["*"], team: crew }`,
        `  - { name: b, key: ${KEYS.b}, models: ["*"], team: crew }`,
        `  - { name: narrow, key: ${KEYS.narrow}, models: ["plain"] }`,
        `  - { name: small, key: ${KEYS.small}, models: ["*"], limits: { tpm: 10 } }`,
      ].join('\n'),
      providers: `  up: { plugin: openai, baseUrl: "${upstream.url}/v1" }`,
      models: [`  plain: { targets: [{ provider: up, model: m, price: ${PRICE} }] }`, `  capped: { targets: [{ provider: up, model: c, price: ${PRICE}, limits: { rpm: 1 } }] }`].join('\n'),
      extra: 'teams:\n  core: { budget: { usd: 5, period: weekly } }\n  crew: { limits: { rpm: 2 } }',
    }),
  { upstreams: [upstream], openState: withOutage },
);

const ask = (key: string, model: string) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }),
  }).then(async (res) => res.status);

const metrics = async () => parseExposition((await scrape(t.gateway.metricsUrl!)).text);

describe('refusals by reason and scope', () => {
  it('counts each kind of refusal under the key, team, reason and scope it belongs to', async () => {
    expect([await ask(KEYS.a, 'plain'), await ask(KEYS.b, 'plain'), await ask(KEYS.a, 'plain')]).toEqual([200, 200, 429]);
    expect(await ask(KEYS.narrow, 'capped')).toBe(403);
    expect(await ask(KEYS.small, 'plain')).toBe(429);
    expect([await ask(DEV_KEY, 'capped'), await ask(DEV_KEY, 'capped')]).toEqual([200, 429]);
    expect(await ask('sk-who-is-this-0000', 'plain')).toBe(401);
    // An upstream's answer is not a refusal; these count as requests only.
    expect(await ask(DEV_KEY, 'plain')).toBe(200);

    const m = await settledScrape(t.gateway.metricsUrl!, 9);
    const refusals = (labels: Record<string, string>) => sampleValue(m, 'switchyard_refusals_total', labels);
    expect(refusals({ key: 'a', team: 'crew', reason: 'rpm', scope: 'team' })).toBe(1);
    expect(refusals({ key: 'narrow', team: '_none', reason: 'model_not_allowed', scope: 'key' })).toBe(1);
    expect(refusals({ key: 'small', team: '_none', reason: 'tpm', scope: 'key' })).toBe(1);
    // The target's own rpm: every target skipped, nothing sent upstream.
    expect(refusals({ key: 'dev', team: 'core', reason: 'limit', scope: 'target' })).toBe(1);
    expect(refusals({ key: '_none', team: '_none', reason: 'invalid_key', scope: 'key' })).toBe(1);
    expect(sumOf(m, 'switchyard_refusals_total')).toBe(5);
    // The same requests, by key and team.
    expect(sampleValue(m, 'switchyard_requests_total', { key: 'a', team: 'crew', model: 'plain', status: '429' })).toBe(1);
    expect(sampleValue(m, 'switchyard_requests_total', { key: 'dev', team: 'core', model: 'capped', status: '429', code: 'rate_limit_exceeded' })).toBe(1);
    expect(sampleValue(m, 'switchyard_requests_total', { key: 'dev', team: 'core', model: 'plain', status: '200' })).toBe(1);
  });
});

describe('budgets and the state backend', () => {
  it("shows each key's and team's budget and what it spent this period", async () => {
    const m = await metrics();
    expect(sampleValue(m, 'switchyard_budget_limit_usd', { scope: 'key', name: 'dev', period: 'monthly' })).toBe(1);
    expect(sampleValue(m, 'switchyard_budget_limit_usd', { scope: 'team', name: 'core', period: 'weekly' })).toBe(5);
    expect(sumOf(m, 'switchyard_budget_limit_usd')).toBe(6);
    // dev's two successful requests (plain and capped), 14 + 7 tokens each.
    const spent = 2 * (14 * 1 + 7 * 2) * 1e-6;
    expect(sampleValue(m, 'switchyard_budget_spent_usd', { scope: 'key', name: 'dev', period: 'monthly' })).toBeCloseTo(spent, 12);
    expect(sampleValue(m, 'switchyard_budget_spent_usd', { scope: 'team', name: 'core', period: 'weekly' })).toBeCloseTo(spent, 12);
    expect(sampleValue(m, 'switchyard_state_backend_up')).toBe(1);
  });

  it('reads 0 while the backend fails or hangs (within 2 s), and shows no stale budget figures', async () => {
    try {
      outage = 'down';
      let m = await metrics();
      expect(sampleValue(m, 'switchyard_state_backend_up')).toBe(0);
      expect(m.filter((s) => s.name.startsWith('switchyard_budget_'))).toEqual([]);
      // The rest of the exposition is still served.
      expect(sumOf(m, 'switchyard_requests_total')).toBe(9);

      outage = 'hung';
      const started = performance.now();
      m = await metrics();
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(sampleValue(m, 'switchyard_state_backend_up')).toBe(0);
    } finally {
      outage = 'none';
    }
    const m = await metrics();
    expect(sampleValue(m, 'switchyard_state_backend_up')).toBe(1);
    expect(sampleValue(m, 'switchyard_budget_limit_usd', { scope: 'key', name: 'dev', period: 'monthly' })).toBe(1);
  });
});

it('switchyard_config_last_reload_successful: 1, 0 after a rejected reload, 1 after the next applied one', async () => {
  expect(sampleValue(await metrics(), 'switchyard_config_last_reload_successful')).toBe(1);
  const good = readFileSync(t.configFile, 'utf8');
  try {
    writeFileSync(t.configFile, `${good}\nnot: [valid`);
    expect((await t.gateway.reload('test')).ok).toBe(false);
    expect(sampleValue(await metrics(), 'switchyard_config_last_reload_successful')).toBe(0);
  } finally {
    writeFileSync(t.configFile, good);
  }
  expect((await t.gateway.reload('test')).ok).toBe(true);
  const m = await metrics();
  expect(sampleValue(m, 'switchyard_config_last_reload_successful')).toBe(1);
  expect(sampleValue(m, 'switchyard_config_reloads_total', { result: 'rejected' })).toBe(1);
});
