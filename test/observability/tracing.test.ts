/**
 * Traces over OTLP/HTTP to a collector in the test: one SERVER span per request, one CLIENT
 * span per upstream attempt (its child) with the GenAI attributes, the client's traceparent
 * continued and each attempt's passed to its upstream, the trace id in the log line; content
 * only when asked; a dead collector costs one warning; off unless configured.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, fakeUpstream, loadFixture, logLineFor, replay, startTestGateway, useTestGateway, type RecordedRequest } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const tries = new Map<string, number>();
function answerA(req: RecordedRequest) {
  const text = String(req.body?.messages?.at(-1)?.content);
  const n = (tries.get(text) ?? 0) + 1;
  tries.set(text, n);
  if (text === 'fail' || (text.startsWith('fail-once') && n === 1)) return replay(f('error-500-server-error'));
  return replay(f(req.body?.stream ? 'stream-refusal' : 'chat-basic'));
}
const a = fakeUpstream(answerA);
const b = fakeUpstream(() => replay(f('chat-basic')));
const providers = () => `  a: { plugin: openai, baseUrl: "${a.url}/v1" }\n  b: { plugin: openai, baseUrl: "${b.url}/v1" }`;
const models = [
  '  pair: { retry: { attempts: 1 }, targets: [{ provider: a, model: m, price: { input: 1, output: 2 } }, { provider: b, model: n, price: { input: 1, output: 2 } }] }',
  '  retrying: { retry: { attempts: 2, backoff: { initialMs: 1, maxMs: 1 } }, targets: [{ provider: a, model: m }] }',
].join('\n');
// Spans leave in batches every 10 ms here instead of 5 s.
const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '10' };

let collector: OtlpReceiver;
beforeAll(async () => {
  collector = await startOtlpReceiver();
});
afterAll(() => collector.close());

const t = useTestGateway(() => configYaml({ providers: providers(), models, extra: `tracing: { endpoint: "${collector.url}", protocol: http/json, serviceName: gateway-under-test }` }), {
  upstreams: [a, b],
  env: FAST_EXPORT,
});

function chat(baseURL: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(
    async (res) => ({
      status: res.status,
      requestId: res.headers.get('x-request-id')!,
      text: await res.text(),
    }),
  );
}

const inTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);
const serverOf = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === SPAN_KIND.server)!;
const clientsOf = (spans: ReceivedSpan[]) => spans.filter((s) => s.kind === SPAN_KIND.client).sort((x, y) => Number(x.attributes['switchyard.attempt']) - Number(y.attributes['switchyard.attempt']));

describe('spans of a request', () => {
  it("continue the client's traceparent, with a client span per attempt passed to its upstream", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await chat(
      t.baseURL,
      { model: 'pair', max_tokens: 50, temperature: 0.3, top_p: 0.9, messages: [{ role: 'user', content: 'fail' }] },
      { traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(res.status).toBe(200);
    const spans = inTrace(await collector.waitFor((all) => inTrace(all, traceId).length === 3, 'the server span and two attempt spans'), traceId);
    const server = serverOf(spans);
    const [first, second] = clientsOf(spans);

    expect(server).toMatchObject({ name: 'chat pair', parentSpanId: callerSpan, serviceName: 'gateway-under-test' });
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'pair',
      'gen_ai.provider.name': 'b',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.response.id': 'chatcmpl-Bu8vBIrB8kIWKRyTcpEEPncjhHtMU',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 14,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.3,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.stream': false,
      'http.response.status_code': 200,
      'switchyard.model_alias': 'pair',
      'switchyard.key': 'dev',
      'switchyard.attempts': 2,
      'switchyard.cost_usd': (14 + 2 * 7) / 1e6,
    });

    for (const client of [first, second]) expect(client.parentSpanId).toBe(server.spanId);
    expect(first).toMatchObject({ name: 'chat m', status: { code: 2 } });
    expect(first.attributes).toMatchObject({
      'gen_ai.provider.name': 'a',
      'gen_ai.request.model': 'm',
      'switchyard.target': 'a/m',
      'switchyard.attempt': 1,
      'http.response.status_code': 500,
      'error.type': '500',
      'gen_ai.request.max_tokens': 50,
    });
    expect(second).toMatchObject({ name: 'chat n' });
    expect(second.attributes).toMatchObject({
      'gen_ai.provider.name': 'b',
      'gen_ai.request.model': 'n',
      'switchyard.attempt': 2,
      'switchyard.retry.kind': 'failover',
      'gen_ai.usage.input_tokens': 14,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(second.attributes['switchyard.retry.reason']).toMatch(/^500 a: The server had an error/);

    // Each upstream was told its own attempt span as parent, in the caller's trace.
    expect(a.requests[0].headers.traceparent).toBe(`00-${traceId}-${first.spanId}-01`);
    expect(b.requests[0].headers.traceparent).toBe(`00-${traceId}-${second.spanId}-01`);
    expect((await logLineFor(t, res.requestId)).traceId).toBe(traceId);
    // Content is not recorded unless tracing.captureContent is on.
    for (const span of spans) expect(Object.keys(span.attributes).filter((k) => k.endsWith('.messages'))).toEqual([]);
  });

  it('start a new trace without a traceparent; a retried stream records its finish and time to first chunk', async () => {
    const res = await chat(t.baseURL, { model: 'retrying', stream: true, messages: [{ role: 'user', content: 'fail-once stream' }] });
    expect(res.status).toBe(200);
    const { traceId } = await logLineFor(t, res.requestId);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = inTrace(await collector.waitFor((all) => inTrace(all, traceId).length === 3, 'a streamed request with a retry'), traceId);
    const server = serverOf(spans);
    const [first, second] = clientsOf(spans);
    expect(server.parentSpanId).toBeUndefined();
    expect(server.attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.output_tokens': 13,
      'gen_ai.response.id': 'chatcmpl-9tZXGacdbmJYO8K50haE4OauaJmPn',
    });
    expect(server.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(first.attributes).toMatchObject({ 'switchyard.attempt': 1, 'error.type': '500' });
    expect(second.attributes).toMatchObject({ 'switchyard.attempt': 2, 'switchyard.retry.kind': 'retry', 'gen_ai.response.finish_reasons': ['stop'] });
    expect(a.requests.map((r) => r.headers.traceparent)).toEqual([`00-${traceId}-${first.spanId}-01`, `00-${traceId}-${second.spanId}-01`]);
  });

  it('answer a 4xx with a server span that is not an error, and no attempt span', async () => {
    const res = await chat(t.baseURL, { model: 'nope', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(404);
    const { traceId } = await logLineFor(t, res.requestId);
    const spans = inTrace(await collector.waitFor((all) => inTrace(all, traceId).length === 1, 'the span of a 404'), traceId);
    expect(spans[0]).toMatchObject({ name: 'chat', kind: SPAN_KIND.server });
    expect(spans[0].attributes).toMatchObject({ 'http.response.status_code': 404, 'error.type': 'model_not_found', 'gen_ai.request.model': 'nope' });
    expect(spans[0].status?.code ?? 0).toBe(0);
  });
});

describe('tracing settings', () => {
  it('record prompt and completion only with captureContent', async () => {
    const g = await startTestGateway(configYaml({ providers: providers(), models, extra: `tracing: { endpoint: "${collector.url}", protocol: http/json, captureContent: true }` }), {
      env: FAST_EXPORT,
    });
    try {
      const res = await chat(g.baseURL, {
        model: 'pair',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'capital of France?' },
        ],
      });
      const { traceId } = await logLineFor(g, res.requestId);
      const server = serverOf(inTrace(await collector.waitFor((all) => inTrace(all, traceId).some((s) => s.kind === SPAN_KIND.server), 'a span with content'), traceId));
      expect(JSON.parse(String(server.attributes['gen_ai.input.messages']))).toEqual([
        { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'capital of France?' }] },
      ]);
      expect(JSON.parse(String(server.attributes['gen_ai.output.messages']))).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'The capital of France is Paris.' }], finish_reason: 'stop' },
      ]);
    } finally {
      await g.close();
    }
  });

  it('turn on from OTEL_EXPORTER_OTLP_* alone, and send protobuf by default', async () => {
    const before = collector.contentTypes.length;
    const g = await startTestGateway(configYaml({ providers: providers(), models }), { env: { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'from-env' } });
    const res = await chat(g.baseURL, { model: 'pair', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(200);
    expect((await logLineFor(g, res.requestId)).traceId).toMatch(/^[0-9a-f]{32}$/);
    await g.close(); // flushes what is queued
    expect(collector.contentTypes.slice(before)).toContain('application/x-protobuf');
  });

  it('are off by default: no trace id, no traceparent upstream', async () => {
    const g = await startTestGateway(configYaml({ providers: providers(), models }));
    try {
      b.reset();
      const res = await chat(g.baseURL, { model: 'pair', messages: [{ role: 'user', content: 'x' }] });
      expect(res.status).toBe(200);
      expect((await logLineFor(g, res.requestId)).traceId).toBeUndefined();
      expect(a.requests.at(-1)?.headers.traceparent).toBeUndefined();
    } finally {
      await g.close();
    }
  });

  it('a dead collector costs one warning, not the requests', async () => {
    const deadPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const g = await startTestGateway(configYaml({ providers: providers(), models, extra: `tracing: { endpoint: "http://127.0.0.1:${deadPort}", protocol: http/json }` }), {
      env: { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_TIMEOUT: '100' },
    });
    const warnings = () => g.logs.filter((l) => String(l.msg).startsWith('traces could not be sent'));
    let closed = false;
    try {
      expect((await chat(g.baseURL, { model: 'pair', messages: [{ role: 'user', content: 'x' }] })).status).toBe(200);
      for (let i = 0; i < 500 && warnings().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(warnings()).toHaveLength(1);
      for (let i = 0; i < 5; i++) expect((await chat(g.baseURL, { model: 'pair', messages: [{ role: 'user', content: 'x' }] })).status).toBe(200);
      await g.close(); // the last spans are exported (and fail) before close resolves
      closed = true;
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({ level: 40, collector: `http://127.0.0.1:${deadPort}/v1/traces` });
    } finally {
      if (!closed) await g.close();
    }
  });
});
