/**
 * Label values come from gateway.yaml, never from the client: 1,000 requests for random model
 * names (and random request ids, users and keys) add no series; they are counted under `_other`.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { DEV_KEY, useTestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml } from '../helpers/repo.ts';
import { gatewaySeries, parseExposition, scrape, settledScrape, sampleValue } from './helpers.ts';

const t = useTestGateway(() => configYaml({ providers: '  mock: { plugin: mock }', models: '  demo: { targets: [{ provider: mock, model: mock-1 }] }' }));

function unknownModel(i: number, stream: boolean, key = DEV_KEY) {
  return fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': `r-${randomUUID()}` },
    body: JSON.stringify({ model: `model-${randomUUID()}-${i}`, stream, user: randomUUID(), messages: [{ role: 'user', content: 'x' }] }),
  }).then((res) => res.text());
}

it('1,000 requests for random unknown models add no new series', async () => {
  // One of each kind first, so the series they belong to exist before counting.
  await unknownModel(0, false);
  await unknownModel(0, true, `sk-unknown-${randomUUID()}`);
  await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x' }] }),
  }).then((r) => r.text());
  const before = await settledScrape(t.gateway.metricsUrl!, 3);

  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 10 === 0 ? unknownModel(batch * 50 + i, true, `sk-unknown-${randomUUID()}`) : unknownModel(batch * 50 + i, i % 2 === 0))));
  }

  const after = await settledScrape(t.gateway.metricsUrl!, 1003);
  expect(gatewaySeries(after).sort()).toEqual(gatewaySeries(before).sort());
  const notFound = { key: 'dev', team: '_none', model: '_other', provider: '_none', status: '404', code: 'model_not_found' };
  const unauthorized = { key: '_none', team: '_none', model: '_other', provider: '_none', status: '401', code: 'invalid_api_key' };
  expect(sampleValue(after, 'switchyard_requests_total', notFound) + sampleValue(after, 'switchyard_requests_total', unauthorized)).toBe(1002);
  expect(sampleValue(after, 'switchyard_requests_total', unauthorized)).toBe(1 + 100);
  // Unknown keys are one series of refusals, not one per key presented.
  expect(sampleValue(after, 'switchyard_refusals_total', { key: '_none', team: '_none', reason: 'invalid_key', scope: 'key' })).toBe(1 + 100);
  const text = (await scrape(t.gateway.metricsUrl!)).text;
  expect(text).not.toMatch(/model-[0-9a-f]{8}/);
  expect(parseExposition(text).length).toBeGreaterThan(0);
});
