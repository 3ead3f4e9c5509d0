/**
 * The gateway's histograms (src/observability/series-histogram.ts, not prom-client's Histogram)
 * through the real gateway: what /metrics shows must be what prom-client renders for the same
 * observations, value for value where the value is known (tokens) and line for line where it is
 * a time, across a reload (a new generation's label objects land in the same series).
 */
import { Histogram, Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { DEV_KEY, fakeUpstream, loadFixture, replay, useTestGateway, type RecordedRequest } from 'switchyard-gateway/kit/testing';
import { BUCKETS } from '../../src/observability/semconv.ts';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { parseExposition, scrape, settledScrape, sumOf } from './helpers.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const a = fakeUpstream((req: RecordedRequest) => {
  if (String(req.body?.messages?.at(-1)?.content) === 'fail') return replay(f('error-500-server-error'));
  return replay(f(req.body?.stream ? 'stream-refusal' : 'chat-basic'));
});
const t = useTestGateway(
  () =>
    configYaml({
      providers: `  a: { plugin: openai, baseUrl: "${a.url}/v1" }`,
      models: ['  plain: { retry: { attempts: 1 }, targets: [{ provider: a, model: m }] }', '  failing: { retry: { attempts: 1 }, targets: [{ provider: a, model: m }] }'].join('\n'),
    }),
  { upstreams: [a] },
);

const ask = (content: string, model: string, stream = false) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));

const GENAI_LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'];
const genAi = (model: string) => ({ gen_ai_operation_name: 'chat', gen_ai_provider_name: 'a', gen_ai_request_model: model, gen_ai_response_model: 'm' });

/** One metric's block of an exposition: its HELP and TYPE lines and its samples. */
function block(text: string, name: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf(lines.find((l) => l.startsWith(`# HELP ${name} `)) ?? '');
  if (start < 0) throw new Error(`${name} is not in the exposition`);
  let end = start + 2;
  while (end < lines.length && lines[end] && !lines[end].startsWith('# ')) end++;
  return lines.slice(start, end).join('\n');
}

/** prom-client's rendering of a histogram like the gateway's (its HELP read from the scrape), fed by `feed`. */
async function reference(scraped: string, name: string, labelNames: string[], buckets: readonly number[], feed: (h: Histogram) => void): Promise<string> {
  const help = (block(scraped, name).split('\n')[0] ?? '').slice(`# HELP ${name} `.length);
  const registry = new Registry();
  feed(new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] }));
  return registry.getSingleMetricAsString(name);
}

/** The lines without their values (a time's value is not known outside the gateway). */
const unvalued = (text: string) => text.split('\n').map((l) => (l.startsWith('#') ? l : l.slice(0, l.lastIndexOf(' '))));

it('renders every histogram as prom-client renders the same observations, across a reload', async () => {
  expect((await ask('hello', 'plain')).status).toBe(200);
  expect((await ask('hello', 'plain', true)).status).toBe(200);
  expect((await ask('fail', 'failing')).status).toBe(502);
  expect((await t.gateway.reload('test')).ok).toBe(true);
  expect((await ask('hello', 'plain')).status).toBe(200);
  // Right after a success on the same alias: a label set that differs only in status and code.
  expect((await ask('fail', 'plain')).status).toBe(502);
  await settledScrape(t.gateway.metricsUrl!, 5);
  const text = (await scrape(t.gateway.metricsUrl!)).text;

  // Tokens are known: chat-basic uses 14 + 7, the recorded stream 17 + 13. Values and lines alike.
  const tokens = await reference(text, 'gen_ai_client_token_usage', [...GENAI_LABELS, 'gen_ai_token_type'], BUCKETS.tokenUsage, (h) => {
    for (const [input, output] of [
      [14, 7],
      [17, 13],
      [14, 7],
    ]) {
      h.observe({ ...genAi('plain'), gen_ai_token_type: 'input' }, input);
      h.observe({ ...genAi('plain'), gen_ai_token_type: 'output' }, output);
    }
  });
  expect(block(text, 'gen_ai_client_token_usage')).toBe(tokens);

  // Times: the same series and lines, in the same order, with the same counts.
  const durations = await reference(text, 'gen_ai_client_operation_duration_seconds', [...GENAI_LABELS, 'error_type'], BUCKETS.operationDuration, (h) => {
    h.observe(genAi('plain'), 1);
    h.observe({ ...genAi('failing'), error_type: 'upstream_error' }, 1);
    h.observe({ ...genAi('plain'), error_type: 'upstream_error' }, 1);
  });
  expect(unvalued(block(text, 'gen_ai_client_operation_duration_seconds'))).toEqual(unvalued(durations));
  const ttft = await reference(text, 'gen_ai_server_time_to_first_token_seconds', GENAI_LABELS, BUCKETS.timeToFirstToken, (h) => h.observe(genAi('plain'), 1));
  expect(unvalued(block(text, 'gen_ai_server_time_to_first_token_seconds'))).toEqual(unvalued(ttft));
  const overhead = await reference(text, 'switchyard_overhead_seconds', [], BUCKETS.overhead, (h) => h.observe(1));
  expect(unvalued(block(text, 'switchyard_overhead_seconds'))).toEqual(unvalued(overhead));

  const m = parseExposition(text);
  expect(sumOf(m, 'gen_ai_client_operation_duration_seconds_count', genAi('plain'))).toBe(4);
  expect(sumOf(m, 'gen_ai_client_operation_duration_seconds_count', { error_type: 'upstream_error' })).toBe(2);
  expect(sumOf(m, 'switchyard_overhead_seconds_count')).toBe(5);
  const requests = { key: 'dev', model: 'plain', provider: 'a' };
  expect(sumOf(m, 'switchyard_requests_total', { ...requests, status: '200', code: 'ok' })).toBe(3);
  expect(sumOf(m, 'switchyard_requests_total', { ...requests, status: '502', code: 'upstream_error' })).toBe(1);
  // Buckets are cumulative and end at the count.
  for (const name of ['gen_ai_client_operation_duration_seconds', 'switchyard_overhead_seconds']) {
    const buckets = m.filter((s) => s.name === `${name}_bucket` && s.labels.error_type === undefined);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
    expect(buckets.at(-1)?.labels.le).toBe('+Inf');
    const count = m.find((s) => s.name === `${name}_count` && s.labels.error_type === undefined);
    expect(buckets.at(-1)?.value).toBe(count?.value);
  }
});
