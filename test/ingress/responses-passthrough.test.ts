/**
 * POST /v1/responses passed through natively to targets that speak Responses (openai with
 * `nativeResponses`, azure-openai in both URL forms), with the official openai SDK
 * (responses.create plain and streamed, responses.stream) against fake upstreams replaying
 * recorded Responses payloads (test/fixtures/openai/responses-*): the body goes up unchanged but
 * its model, the answer and events come back untranslated with the upstream's ids, usage and cost
 * reach the log line and /admin/v1/usage, failover still happens before the first output (to a
 * Responses target or to a translated one), and a stage that edits the request is honoured.
 */
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, loadFixture, logLineFor, replay, sseEventsOf, startFakeUpstream, startTestGateway, type FakeUpstream, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf, ROOT } from '../helpers/repo.ts';
import { parseExposition, sampleValue, scrape } from '../observability/helpers.ts';

const OPS_KEY = 'sk-admin-ops-0123456789';
const PROBE_KEY = 'sk-usage-probe-0123456789';
/** USD per million tokens for the Responses targets: cached input at a tenth of the input rate. */
const PRICE = '{ input: 1.25, output: 10, cachedInput: 0.125 }';
const costOf = (u: { input: number; cached: number; output: number }) => ((u.input - u.cached) * 1.25 + u.cached * 0.125 + u.output * 10) / 1e6;

const recorded = (name: string) => loadFixture(fixturesOf('openai'), name);
const recordedEvents = async (name: string) => (await sseEventsOf(fixturesOf('openai'), name)).map((e) => e.data as { type: string });

const CALCULATOR = {
  type: 'function' as const,
  name: 'calculator',
  description: 'A minimal calculator for basic arithmetic.',
  strict: true,
  parameters: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' }, op: { type: 'string', enum: ['add', 'multiply'] } },
    required: ['a', 'b', 'op'],
    additionalProperties: false,
  },
};

/** A Codex-like stateless turn: fields the translation to chat drops (reasoning items with encrypted content, include, truncation...) must still go up. */
const TURN = {
  store: false,
  include: ['reasoning.encrypted_content' as const],
  reasoning: { effort: 'high' as const, summary: 'detailed' as const },
  truncation: 'disabled' as const,
  prompt_cache_key: 'session-42',
  max_tool_calls: 4,
  parallel_tool_calls: true,
  tools: [CALCULATOR],
  input: [
    { role: 'user' as const, content: 'Compute 12 + 7, then times 3, then times 10.' },
    { type: 'reasoning' as const, id: 'rs_prev', encrypted_content: 'gAAAAB-opaque-reasoning-of-the-last-turn', summary: [] },
    { type: 'function_call' as const, call_id: 'call_1', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' },
    { type: 'function_call_output' as const, call_id: 'call_1', output: '19' },
  ],
};

/** What the Responses upstream (oai, azure) replays for /responses. */
let answer = 'responses-reasoning-encrypted';
let oai: FakeUpstream;
let flaky: FakeUpstream;
let claude: FakeUpstream;
let azure: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  oai = await startFakeUpstream((req) => replay(recorded(req.url === '/v1/responses' ? answer : 'chat-basic')));
  // The first target of the failover aliases: how it fails is named by the model it is asked for.
  flaky = await startFakeUpstream((req) => {
    const model = (req.body as { model?: string }).model;
    if (model === 'gpt-429') return replay(recorded('error-429-tokens-rate-limit'));
    if (model === 'gpt-400') return replay(recorded('error-400-unsupported-value'));
    if (model === 'gpt-quota') return replay(recorded('responses-stream-error-quota'));
    // Cut after its opening events and first output item: the stream has started.
    if (model === 'gpt-cut') return replay(recorded('responses-stream-phase'), { destroyAfterChunks: 5, gapMs: 20 });
    return replay(recorded('error-500-server-error'));
  });
  claude = await startFakeUpstream(() => replay(loadFixture(fixturesOf('anthropic'), 'messages-system-prompt')));
  azure = await startFakeUpstream(() => replay(recorded(answer)));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: usage-probe, key: ${PROBE_KEY} }
admin:
  keys:
    - { name: ops, key: ${OPS_KEY} }
providers:
  oai: { plugin: openai, baseUrl: "${oai.url}/v1", apiKey: test-openai-key, nativeResponses: true }
  compat: { plugin: openai, baseUrl: "${oai.url}/v1" }
  flaky: { plugin: openai, baseUrl: "${flaky.url}/v1", apiKey: test-flaky-key, nativeResponses: true }
  claude: { plugin: anthropic, baseUrl: "${claude.url}", apiKey: test-anthropic-key }
  az: { plugin: azure-openai, endpoint: "${azure.url}", apiKey: test-azure-key }
  azv1: { plugin: azure-openai, endpoint: "${azure.url}", apiKey: test-azure-key, mode: v1 }
models:
  codex: { targets: [{ provider: oai, model: gpt-5.1-codex-max, price: ${PRICE} }] }
  compat: { targets: [{ provider: compat, model: llama-3 }] }
  fo-500: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-500 }, { provider: oai, model: gpt-5.1-codex-max, price: ${PRICE} }] }
  fo-429: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-429 }, { provider: oai, model: gpt-5.1-codex-max, price: ${PRICE} }] }
  fo-quota: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-quota }, { provider: oai, model: gpt-5.1-codex-max, price: ${PRICE} }] }
  cut: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-cut }] }
  refused: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-400 }] }
  mixed: { retry: { attempts: 1 }, targets: [{ provider: flaky, model: gpt-500 }, { provider: claude, model: claude-3-opus-latest }] }
  azure: { targets: [{ provider: az, model: my-gpt5-deployment }] }
  azure-v1: { targets: [{ provider: azv1, model: my-gpt5-deployment }] }
`);
});
afterAll(async () => {
  await t.close();
  await Promise.all([oai, flaky, claude, azure].map((u) => u.close()));
});

/** The attempts of a request as its log line tells them. */
const attemptsOf = async (response: Response) => {
  const line = await logLineFor(t, response.headers.get('x-request-id')!);
  return (line.attemptLog ?? []) as Array<{ provider: string; status: number; outcome: string }>;
};

describe('POST /v1/responses to a Responses target: native pass-through', () => {
  it('responses.create: the body goes up as sent but its model, the answer comes back as recorded, priced and logged', async () => {
    answer = 'responses-reasoning-encrypted';
    const { data, response } = await t
      .client()
      .responses.create({ model: 'codex', ...TURN })
      .withResponse();
    const sent = oai.requests.at(-1)!;
    expect(sent.url).toBe('/v1/responses');
    expect(sent.body).toEqual({ model: 'gpt-5.1-codex-max', ...TURN });
    expect(sent.headers.authorization).toBe('Bearer test-openai-key');
    const body = recorded('responses-reasoning-encrypted').json;
    // The upstream's own answer: its resp_ id, the model that answered, encrypted reasoning and all.
    expect(data).toMatchObject(body);
    expect(data.id).toBe(body.id);
    expect(data.model).toBe('gpt-5-mini-2025-08-07');
    expect(data.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^gAAAA/) });
    const cost = costOf({ input: 865, cached: 0, output: 163 });
    expect(response.headers.get('x-switchyard-provider')).toBe('oai');
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBeCloseTo(cost, 12);
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({
      ingress: 'responses',
      model: 'codex',
      provider: 'oai',
      status: 200,
      upstreamModel: 'gpt-5-mini-2025-08-07',
      promptTokens: 865,
      completionTokens: 163,
      totalTokens: 1028,
    });
    expect(line.costUsd).toBeCloseTo(cost, 12);
  });

  it('responses.create with stream: true: the upstream events, untranslated and in order', async () => {
    answer = 'responses-stream-reasoning-encrypted';
    const stream = await t.client().responses.create({ model: 'codex', ...TURN, stream: true });
    const events: unknown[] = [];
    for await (const e of stream) events.push(e);
    expect(events).toEqual(await recordedEvents(answer));
    expect(oai.requests.at(-1)!.body).toEqual({ model: 'gpt-5.1-codex-max', ...TURN, stream: true });
  });

  it('responses.stream: the SDK assembles the upstream response (its id, encrypted reasoning, the function call); usage on the log line', async () => {
    answer = 'responses-stream-reasoning-encrypted';
    const stream = t.client().responses.stream({ model: 'codex', ...TURN });
    const final = await stream.finalResponse();
    const completed = (await recordedEvents(answer)).at(-1) as unknown as { response: { id: string } };
    expect(final.id).toBe(completed.response.id);
    expect(final.model).toBe('gpt-5.1-codex-max');
    expect(final.output.find((o) => o.type === 'reasoning')).toMatchObject({ encrypted_content: expect.stringMatching(/^gAAAA/) });
    expect(final.output.find((o) => o.type === 'function_call')).toMatchObject({ call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' });
    const { response } = await t.client().responses.create({ model: 'codex', input: 'again', stream: true }).withResponse();
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 200, provider: 'oai', promptTokens: 134, completionTokens: 28 });
    expect(line.costUsd).toBeCloseTo(costOf({ input: 134, cached: 0, output: 28 }), 12);
  });

  it('on the wire: the upstream events byte for byte, each named by its type', async () => {
    answer = 'responses-stream-phase';
    const res = await fetch(`${t.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codex', input: 'AI news today?', stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const expected = await recordedEvents(answer);
    expect([...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1])).toEqual(expected.map((e) => e.type));
    expect([...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]))).toEqual(expected);
    // The recording frames each event as `event: <type>` and its data as received: nothing re-serialised.
    expect(text).toBe(recorded(answer).body.toString('utf8'));
  });

  it('a hosted tool answer (web_search_call items) comes back as sent; cached input is priced at its rate in /admin/v1/usage', async () => {
    answer = 'responses-web-search';
    const r = await t.client(PROBE_KEY).responses.create({ model: 'codex', input: 'What happened in AI today?' });
    expect(r.output.filter((o) => o.type === 'web_search_call')).toHaveLength(3);
    const usage = { input: 19681, cached: 3712, output: 3773 };
    const start = Math.floor(Date.now() / 86_400_000) * 86_400;
    let row: Record<string, unknown> | undefined;
    for (let i = 0; i < 40 && !row; i++) {
      const res = await fetch(`${t.url}/admin/v1/usage?start_time=${start}&group_by=key,model`, { headers: { authorization: `Bearer ${OPS_KEY}` } });
      const page = (await res.json()) as { data: Array<{ results: Array<Record<string, unknown>> }> };
      row = page.data.flatMap((b) => b.results).find((x) => x.key === 'usage-probe');
      if (!row) await new Promise((done) => setTimeout(done, 50));
    }
    expect(row).toMatchObject({
      model: 'codex',
      num_model_requests: 1,
      input_tokens: usage.input,
      input_cached_tokens: usage.cached,
      output_tokens: usage.output,
      amount: { value: expect.closeTo(costOf(usage), 12), currency: 'usd' },
    });
    // The metrics count it as they count a translated request.
    const probe = { key: 'usage-probe', model: 'codex' };
    // Instruments hear of a request after its spend is settled: wait for them too.
    let metrics = parseExposition((await scrape(`${t.url}/metrics`)).text);
    for (let i = 0; i < 40 && sampleValue(metrics, 'switchyard_requests_total', probe) === 0; i++) {
      await new Promise((done) => setTimeout(done, 50));
      metrics = parseExposition((await scrape(`${t.url}/metrics`)).text);
    }
    expect(sampleValue(metrics, 'switchyard_tokens_total', { ...probe, type: 'input' })).toBe(usage.input);
    expect(sampleValue(metrics, 'switchyard_tokens_total', { ...probe, type: 'output' })).toBe(usage.output);
    expect(sampleValue(metrics, 'switchyard_cost_usd_total', probe)).toBeCloseTo(costOf(usage), 9);
    expect(sampleValue(metrics, 'switchyard_requests_total', { ...probe, provider: 'oai', status: '200' })).toBe(1);
  });

  it("an upstream's refusal arrives in OpenAI's envelope, as the SDK's own class", async () => {
    const err = await t
      .client()
      .responses.create({ model: 'refused', input: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('does not support') });
    expect(e.requestID ?? e.headers?.get('x-request-id')).toBeTruthy();
  });
});

describe('failover before the first output', () => {
  it('first target 500 or 429: the second serves the same body (its own model), and the answer is its own', async () => {
    answer = 'responses-reasoning-encrypted';
    for (const [alias, failed, status] of [
      ['fo-500', 'gpt-500', 500],
      ['fo-429', 'gpt-429', 429],
    ] as const) {
      const { data, response } = await t
        .client()
        .responses.create({ model: alias, ...TURN })
        .withResponse();
      expect(data.id).toBe(recorded(answer).json.id);
      const tried = flaky.requests.filter((r) => r.body.model === failed).at(-1)!;
      expect(tried.url).toBe('/v1/responses');
      expect(tried.body).toEqual({ model: failed, ...TURN });
      expect(oai.requests.at(-1)!.body).toEqual({ model: 'gpt-5.1-codex-max', ...TURN });
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      expect((await attemptsOf(response)).map((a) => [a.provider, a.status])).toEqual([
        ['flaky', status],
        ['oai', 200],
      ]);
    }
  });

  it('a stream whose upstream fails after response.created (an error event): the client sees only the second target’s events', async () => {
    answer = 'responses-stream-phase';
    const { data: stream, response } = await t.client().responses.create({ model: 'fo-quota', input: 'AI news today?', stream: true }).withResponse();
    const events: unknown[] = [];
    for await (const e of stream) events.push(e);
    expect(events).toEqual(await recordedEvents(answer));
    expect((await attemptsOf(response)).map((a) => [a.provider, a.status])).toEqual([
      ['flaky', 429],
      ['oai', 200],
    ]);
  });

  it('a stream cut after it started ends the Responses way: an error event, then response.failed', async () => {
    const res = await fetch(`${t.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cut', input: 'AI news today?', stream: true }),
    });
    expect(res.status).toBe(200);
    const names = [...(await res.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    const opened = (await recordedEvents('responses-stream-phase')).slice(0, 3).map((e) => e.type);
    expect(names.slice(0, 3)).toEqual(opened);
    expect(names.slice(-2)).toEqual(['error', 'response.failed']);
  });

  it('falls over to a translated target (anthropic) for the same alias: a translated Responses answer', async () => {
    const r = await t.client().responses.create({ model: 'mixed', input: 'What is the capital of France?' });
    // The gateway keeps the response itself: the provider is told not to (store: false).
    expect(flaky.requests.at(-1)!.body).toEqual({ model: 'gpt-500', input: 'What is the capital of France?', store: false });
    expect(claude.requests.at(-1)!.url).toBe('/v1/messages');
    expect(claude.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'What is the capital of France?' }]);
    expect(r.output_text).toContain('Paris');
    expect(r.model).toMatch(/^claude-3-opus/);
  });
});

describe('when the request is translated instead', () => {
  it('an OpenAI-compatible server is not assumed to serve /responses (nativeResponses defaults off)', async () => {
    const r = await t.client().responses.create({ model: 'compat', input: 'What is the capital of France?' });
    expect(oai.requests.at(-1)!.url).toBe('/v1/chat/completions');
    expect(r.output_text).toContain('Paris');
  });

  it('a stage that edited the request: the translation carries its change; an untouched request still passes through', async () => {
    const plugins = path.join(ROOT, 'test/fixtures/plugins');
    const g = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  oai: { plugin: openai, baseUrl: "${oai.url}/v1", apiKey: test-openai-key, nativeResponses: true }
models:
  codex: { targets: [{ provider: oai, model: gpt-5.1-codex-max }] }
pipeline:
  - auth
  - validate
  - route
  - { stage: ${plugins}/cap-tokens-stage.ts, options: { max: 64 } }
  - retry
  - transform-response
  - log
`);
    try {
      const capped = await g.client().responses.create({ model: 'codex', input: 'What is the capital of France?', max_output_tokens: 500 });
      const sent = oai.requests.at(-1)!;
      expect(sent.url).toBe('/v1/chat/completions');
      expect(sent.body.max_completion_tokens).toBe(64);
      expect(capped.output_text).toContain('Paris');
      answer = 'responses-reasoning-encrypted';
      const untouched = await g.client().responses.create({ model: 'codex', input: 'Short, please.', max_output_tokens: 32 });
      expect(oai.requests.at(-1)!.url).toBe('/v1/responses');
      expect(oai.requests.at(-1)!.body).toEqual({ model: 'gpt-5.1-codex-max', input: 'Short, please.', max_output_tokens: 32, store: false });
      expect(untouched.id).toBe(recorded(answer).json.id);
    } finally {
      await g.close();
    }
  });
});

describe('azure-openai: the Responses API in both URL forms, the deployment in the body', () => {
  it('deployments: /openai/responses?api-version=…, api-key auth, plain and streamed', async () => {
    answer = 'responses-reasoning-encrypted';
    const r = await t.client().responses.create({ model: 'azure', ...TURN });
    const sent = azure.requests.at(-1)!;
    expect(sent.url).toBe('/openai/responses?api-version=2025-04-01-preview');
    expect(sent.headers['api-key']).toBe('test-azure-key');
    expect(sent.body).toEqual({ model: 'my-gpt5-deployment', ...TURN });
    expect(r.id).toBe(recorded(answer).json.id);
    answer = 'responses-stream-phase';
    const stream = await t.client().responses.create({ model: 'azure', input: 'AI news today?', stream: true });
    const events: unknown[] = [];
    for await (const e of stream) events.push(e);
    expect(events).toEqual(await recordedEvents(answer));
  });

  it('v1: /openai/v1/responses', async () => {
    answer = 'responses-reasoning-encrypted';
    const r = await t.client().responses.create({ model: 'azure-v1', input: 'Compute it.' });
    expect(azure.requests.at(-1)!.url).toBe('/openai/v1/responses');
    expect(azure.requests.at(-1)!.body).toEqual({ model: 'my-gpt5-deployment', input: 'Compute it.', store: false });
    expect(r.output_text).toContain('Final result: 570');
  });
});

describe('stored Responses on a pass-through: the gateway keeps what the upstream answered', () => {
  it('a passed-through answer is kept under its upstream id, readable by GET, and a next turn by previous_response_id goes up self-contained', async () => {
    answer = 'responses-reasoning-encrypted';
    const client = t.client();
    const first = await client.responses.create({ model: 'codex', input: 'Compute 12 + 7.' });
    const recordedBody = recorded('responses-reasoning-encrypted').json as { id: string; output: Array<{ id?: string }> };
    expect(first.id).toBe(recordedBody.id);
    // The gateway keeps the response itself, so the provider is told not to.
    expect(oai.requests.at(-1)!.body).toEqual({ model: 'gpt-5.1-codex-max', input: 'Compute 12 + 7.', store: false });
    const kept = await client.responses.retrieve(first.id);
    expect(kept.id).toBe(first.id);
    expect(kept.output.map((o) => o.id)).toEqual(recordedBody.output.map((o) => o.id));

    await client.responses.create({ model: 'codex', previous_response_id: first.id, input: 'Now times 3.' });
    const second = oai.requests.at(-1)!.body as { input: Array<{ id?: string; role?: string; content?: unknown }>; previous_response_id?: string; store?: boolean };
    // No state upstream: the chain's input and the upstream's own output items are in the body, in order.
    expect(second.previous_response_id).toBeUndefined();
    expect(second.store).toBe(false);
    expect(second.input[0]).toMatchObject({ role: 'user' });
    expect(second.input.slice(1, -1).map((i) => i.id)).toEqual(recordedBody.output.map((o) => o.id));
    expect(second.input.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(second.input.at(-1))).toContain('Now times 3.');
  });

  it('a passed-through stream is kept from its final event before the stream ends', async () => {
    answer = 'responses-stream-reasoning-encrypted';
    const client = t.client();
    let id = '';
    for await (const event of await client.responses.create({ model: 'codex', input: 'Compute it.', stream: true })) {
      if (event.type === 'response.completed') id = event.response.id;
    }
    expect(id).toMatch(/^resp_/);
    // Read at once, as a client chaining the next turn would.
    const kept = await client.responses.retrieve(id);
    expect(kept.status).toBe('completed');
    expect(kept.id).toBe(id);
  });
});
