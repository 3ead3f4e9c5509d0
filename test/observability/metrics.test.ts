/**
 * GET /metrics after a scripted mix of traffic (plain, streamed, retried, failed over, a 4xx, an
 * upstream 5xx, a rate-limited key): exact counter values and histogram counts, the breaker
 * gauge through a cooldown, counters across reloads, and the exposition checked by promtool.
 */
import { describe, expect, it } from 'vitest';
import { DEV_KEY, FakeClock, fakeUpstream, loadFixture, replay, useTestGateway, type RecordedRequest } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { parseExposition, promtoolProblems, scrape, settledScrape, sumOf, sampleValue } from './helpers.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const LIMITED_KEY = 'sk-limited-0123456789';
const PRICE = '{ input: 1, output: 2 }';

/** `a` answers by the last message: `fail` always fails, `fail-once` fails its first try, streams replay a recorded stream. */
const tries = new Map<string, number>();
function answerA(req: RecordedRequest) {
  const text = String(req.body?.messages?.at(-1)?.content);
  const n = (tries.get(text) ?? 0) + 1;
  tries.set(text, n);
  if (text === 'fail' || (text === 'fail-once' && n === 1)) return replay(f('error-500-server-error'));
  return replay(f(req.body?.stream ? 'stream-refusal' : 'chat-basic'));
}

const clock = new FakeClock(3);
const a = fakeUpstream(answerA);
const b = fakeUpstream(() => replay(f('chat-basic')));
const t = useTestGateway(
  () =>
    configYaml({
      keys: [`  - { name: dev, key: ${DEV_KEY}, models: ["*"], team: core }`, `  - { name: limited, key: ${LIMITED_KEY}, models: ["*"], limits: { rpm: 1 } }`].join('\n'),
      providers: `  a: { plugin: openai, baseUrl: "${a.url}/v1" }\n  b: { plugin: openai, baseUrl: "${b.url}/v1" }`,
      models: [
        `  plain: { retry: { attempts: 1 }, targets: [{ provider: a, model: m, price: ${PRICE} }] }`,
        `  retrying: { retry: { attempts: 2, backoff: { initialMs: 1, maxMs: 1 } }, targets: [{ provider: a, model: m, price: ${PRICE} }] }`,
        `  pair: { retry: { attempts: 1 }, targets: [{ provider: a, model: m, price: ${PRICE} }, { provider: b, model: n, price: ${PRICE} }] }`,
        `  failing: { retry: { attempts: 1 }, targets: [{ provider: a, model: m, price: ${PRICE} }] }`,
        `  breaker: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 60000, durationMs: 60000 }, targets: [{ provider: a, model: m, price: ${PRICE} }] }`,
      ].join('\n'),
      extra: 'teams:\n  core: {}',
    }),
  { upstreams: [a, b], clock },
);

const ask = (content: string, model: string, extra: { stream?: boolean; key?: string } = {}) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${extra.key ?? DEV_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: extra.stream, messages: [{ role: 'user', content }] }),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));

const GENAI = (model: string, provider: string, responseModel: string) => ({
  gen_ai_operation_name: 'chat',
  gen_ai_request_model: model,
  gen_ai_provider_name: provider,
  gen_ai_response_model: responseModel,
});

describe('GET /metrics after a scripted mix of traffic', () => {
  it('counts every request, attempt, token, dollar and refusal exactly', async () => {
    expect((await ask('hello', 'plain')).status).toBe(200);
    expect((await ask('hello', 'plain', { stream: true })).status).toBe(200);
    expect((await ask('fail-once', 'retrying')).status).toBe(200);
    expect((await ask('fail', 'pair')).status).toBe(200);
    expect((await ask('hello', 'nope')).status).toBe(404);
    expect((await ask('fail', 'failing')).status).toBe(502);
    expect((await ask('hello', 'plain', { key: LIMITED_KEY })).status).toBe(200);
    expect((await ask('hello', 'plain', { key: LIMITED_KEY })).status).toBe(429);

    const m = await settledScrape(t.gateway.metricsUrl!, 8);
    const requests = (labels: Record<string, string>) => sampleValue(m, 'switchyard_requests_total', labels);
    const dev = { key: 'dev', team: 'core' };
    const limited = { key: 'limited', team: '_none' };
    expect(requests({ ...dev, model: 'plain', provider: 'a', status: '200', code: 'ok' })).toBe(2);
    expect(requests({ ...limited, model: 'plain', provider: 'a', status: '200', code: 'ok' })).toBe(1);
    expect(requests({ ...dev, model: 'retrying', provider: 'a', status: '200', code: 'ok' })).toBe(1);
    expect(requests({ ...dev, model: 'pair', provider: 'b', status: '200', code: 'ok' })).toBe(1);
    expect(requests({ ...dev, model: '_other', provider: '_none', status: '404', code: 'model_not_found' })).toBe(1);
    expect(requests({ ...dev, model: 'failing', provider: 'a', status: '502', code: 'upstream_error' })).toBe(1);
    expect(requests({ ...limited, model: 'plain', provider: '_none', status: '429', code: 'rate_limit_exceeded' })).toBe(1);
    expect(sumOf(m, 'switchyard_requests_total')).toBe(8);

    const attempts = (labels: Record<string, string>) => sampleValue(m, 'switchyard_attempts_total', labels);
    expect(attempts({ provider: 'a', target: 'a/m', outcome: 'succeeded' })).toBe(4);
    expect(attempts({ provider: 'a', target: 'a/m', outcome: 'retried' })).toBe(1);
    expect(attempts({ provider: 'a', target: 'a/m', outcome: 'failed_over' })).toBe(1);
    expect(attempts({ provider: 'a', target: 'a/m', outcome: 'failed' })).toBe(1);
    expect(attempts({ provider: 'b', target: 'b/n', outcome: 'succeeded' })).toBe(1);
    expect(sumOf(m, 'switchyard_attempts_total')).toBe(8);
    expect(sampleValue(m, 'switchyard_in_flight_requests')).toBe(0);

    // chat-basic uses 14 + 7 tokens, the recorded stream 17 + 13; the price is $1 / $2 per million.
    expect(sampleValue(m, 'switchyard_tokens_total', { key: 'dev', team: 'core', model: 'plain', type: 'input' })).toBe(14 + 17);
    expect(sampleValue(m, 'switchyard_tokens_total', { key: 'dev', model: 'plain', type: 'output' })).toBe(7 + 13);
    expect(sampleValue(m, 'switchyard_tokens_total', { key: 'limited', team: '_none', model: 'plain', type: 'input' })).toBe(14);
    expect(sampleValue(m, 'switchyard_tokens_total', { key: 'dev', model: 'pair', type: 'output' })).toBe(7);
    expect(sampleValue(m, 'switchyard_cost_usd_total', { key: 'dev', team: 'core', model: 'plain' })).toBeCloseTo((14 + 17 + 2 * (7 + 13)) / 1e6, 12);
    expect(sampleValue(m, 'switchyard_cost_usd_total', { key: 'limited', team: '_none', model: 'plain' })).toBeCloseTo((14 + 2 * 7) / 1e6, 12);
    expect(sampleValue(m, 'switchyard_refusals_total', { key: 'limited', team: '_none', reason: 'rpm', scope: 'key' })).toBe(1);
    expect(sumOf(m, 'switchyard_refusals_total')).toBe(1);

    // GenAI histograms: one observation per request that reached a provider.
    expect(sampleValue(m, 'gen_ai_client_operation_duration_seconds_count', GENAI('plain', 'a', 'm'))).toBe(3);
    expect(sampleValue(m, 'gen_ai_client_operation_duration_seconds_count', GENAI('pair', 'b', 'n'))).toBe(1);
    expect(sampleValue(m, 'gen_ai_client_operation_duration_seconds_count', { ...GENAI('failing', 'a', 'm'), error_type: 'upstream_error' })).toBe(1);
    expect(sumOf(m, 'gen_ai_client_operation_duration_seconds_count')).toBe(6);
    expect(sampleValue(m, 'gen_ai_client_token_usage_count', { ...GENAI('plain', 'a', 'm'), gen_ai_token_type: 'input' })).toBe(3);
    expect(sampleValue(m, 'gen_ai_client_token_usage_sum', { ...GENAI('plain', 'a', 'm'), gen_ai_token_type: 'input' })).toBe(14 + 17 + 14);
    expect(sampleValue(m, 'gen_ai_client_token_usage_bucket', { ...GENAI('plain', 'a', 'm'), gen_ai_token_type: 'output', le: '16' })).toBe(3);
    expect(sampleValue(m, 'gen_ai_client_token_usage_bucket', { ...GENAI('plain', 'a', 'm'), gen_ai_token_type: 'output', le: '4' })).toBe(0);
    expect(sumOf(m, 'gen_ai_server_time_to_first_token_seconds_count')).toBe(1);
    expect(sampleValue(m, 'gen_ai_server_time_to_first_token_seconds_count', GENAI('plain', 'a', 'm'))).toBe(1);
    expect(sampleValue(m, 'switchyard_overhead_seconds_count')).toBe(8);
    expect(sampleValue(m, 'switchyard_config_generation')).toBe(1);

    // Node's process metrics come along.
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_user_seconds_total'])
      expect(
        m.some((s) => s.name === name),
        name,
      ).toBe(true);
  });

  it('shows each target breaker: healthy, cooling down, half-open, healthy again', async () => {
    const state = async () => sampleValue(parseExposition((await scrape(t.gateway.metricsUrl!)).text), 'switchyard_target_state', { model: 'breaker', target: 'a/m' });
    expect(await state()).toBe(0);
    expect((await ask('fail', 'breaker')).status).toBe(502);
    expect(await state()).toBe(1);
    clock.advance(60_001);
    expect(await state()).toBe(2);
    expect((await ask('hello', 'breaker')).status).toBe(200);
    expect(await state()).toBe(0);
  });

  it('keeps its counters across reloads and counts them by result', async () => {
    const before = await settledScrape(t.gateway.metricsUrl!, 10);
    expect((await t.gateway.reload('test')).ok).toBe(true);
    const { writeFileSync, readFileSync } = await import('node:fs');
    const good = readFileSync(t.configFile, 'utf8');
    writeFileSync(t.configFile, `${good}\nnot: [valid`);
    expect((await t.gateway.reload('test')).ok).toBe(false);
    writeFileSync(t.configFile, good);
    expect((await ask('hello', 'plain')).status).toBe(200);
    const after = await settledScrape(t.gateway.metricsUrl!, 11);
    expect(sampleValue(after, 'switchyard_config_reloads_total', { result: 'ok' })).toBe(1);
    expect(sampleValue(after, 'switchyard_config_reloads_total', { result: 'rejected' })).toBe(1);
    expect(sampleValue(after, 'switchyard_config_generation')).toBe(2);
    const plainOk = { key: 'dev', model: 'plain', provider: 'a', status: '200', code: 'ok' };
    expect(sampleValue(after, 'switchyard_requests_total', plainOk)).toBe(sampleValue(before, 'switchyard_requests_total', plainOk) + 1);
  });

  it('passes promtool check metrics', async () => {
    const { status, text, contentType } = await scrape(t.gateway.metricsUrl!);
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain('# TYPE gen_ai_client_operation_duration_seconds histogram');
    expect(promtoolProblems(text)).toBe('');
  });
});
