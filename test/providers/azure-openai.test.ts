/** Azure OpenAI: deployment and v1 URLs, api-key auth, and Azure's stream and error quirks. */
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import {
  chatRequests,
  expectValid,
  failureOf,
  FakeClock,
  fakeUpstream,
  loadFixture,
  logLineFor,
  readSseEvents,
  replay,
  splitStream,
  streamAnswer,
  useTestGateway,
} from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('azure'), name);
const KEY = 'azure-test-key-0123456789';
const clock = new FakeClock(1);
const azure = fakeUpstream(() => replay(f('chat-basic')));
const t = useTestGateway(
  () =>
    configYaml({
      providers: `  az: { plugin: azure-openai, endpoint: "${azure.url}/", apiKey: ${KEY}, apiVersion: 2024-12-01-preview }\n  az1: { plugin: azure-openai, endpoint: "${azure.url}", apiKey: ${KEY}, mode: v1 }\n  mock: { plugin: mock }`,
      models: [
        '  nano: { retry: { attempts: 2, maxRetryAfterMs: 5000 }, fallbacks: { contentPolicy: [safe] }, targets: [{ provider: az, model: gpt-5-nano }] }',
        '  nano-v1: { targets: [{ provider: az1, model: gpt-5-nano }] }',
        '  safe: { targets: [{ provider: mock, model: safe-1 }] }',
        '  strict: { retry: { attempts: 1 }, targets: [{ provider: az, model: gpt-4o }] }',
      ].join('\n'),
    }),
  { upstreams: [azure], clock },
);
afterEach(() => {
  clock.sleeps.length = 0;
});

const { chat } = chatRequests(t, { model: 'nano', content: 'Hello!' });

describe('azure-openai', () => {
  it('calls the deployment URL with api-version and the api-key header', async () => {
    const r = await chat();
    expectValid('CreateChatCompletionResponse', r);
    expect(r.model).toBe('gpt-5-nano-2025-08-07');
    expect((r.choices[0] as unknown as { content_filter_results: unknown }).content_filter_results).toEqual({});
    expect(azure.requests[0].url).toBe('/openai/deployments/gpt-5-nano/chat/completions?api-version=2024-12-01-preview');
    expect(azure.requests[0].headers['api-key']).toBe(KEY);
    expect(azure.requests[0].headers.authorization).toBeUndefined();
    expect(azure.requests[0].body).toEqual({ model: 'gpt-5-nano', messages: [{ role: 'user', content: 'Hello!' }] });
  });

  it('the v1 form puts the model in the body', async () => {
    await chat({}, 'nano-v1');
    expect(azure.requests[0].url).toBe('/openai/v1/chat/completions');
    expect(azure.requests[0].body.model).toBe('gpt-5-nano');
  });

  it('folds the prompt_filter_results preamble of a stream into the first real chunk', async () => {
    azure.setHandler(() => replay(f('stream-basic-content-filter')));
    const stream = await t.client().chat.completions.create({ model: 'nano', stream: true, messages: [{ role: 'user', content: 'Hello!' }] });
    const chunks = [];
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk as typeof chunk & { prompt_filter_results?: unknown });
    }
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(chunks[0].prompt_filter_results).toBeDefined();
    expect(chunks.every((c) => c.id !== '' && c.model !== '')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
  });

  it('a content-filter 400 keeps its message and falls back to the contentPolicy alias', async () => {
    azure.setHandler(() => replay(f('error-400-content-filter')));
    const r = await chat();
    expect(r.model).toBe('safe-1');
  });

  it('a 429 with the wait only in its message is retried after that wait', async () => {
    azure.setHandler((_req, i) => (i === 0 ? replay(f('error-429-rate-limit')) : replay(f('chat-basic'))));
    await chat();
    expect(clock.sleeps).toEqual([2000]);
    azure.setHandler(() => replay(f('error-429-rate-limit')));
    const err = await failureOf(chat());
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toContain('az: Rate limit is exceeded. Try again in 2 seconds. (az code: 429)');
    expect(err.headers?.get('retry-after')).toBe('2');
  });

  it('the deployments URL carries exactly the client request, model set, headers as Azure wants', async () => {
    await chat();
    const req = azure.requests[0];
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('application/json');
    expect(Object.keys(req.headers).filter((h) => /key|auth/i.test(h))).toEqual(['api-key']);
    expect(req.raw).toBe(JSON.stringify({ model: 'gpt-5-nano', messages: [{ role: 'user', content: 'Hello!' }] }));
  });
});

const fixture = (provider: 'openai' | 'azure', name: string) => loadFixture(fixturesOf(provider), name);
const { post } = chatRequests(t, { model: 'strict', content: 'x' });

describe('azure-openai requests', () => {
  it('tools, tool_choice and tool results go as OpenAI sent them; the v1 form has the same body', async () => {
    azure.setHandler(() => replay(fixture('openai', 'chat-tool-result-followup')));
    const request = {
      messages: [
        { role: 'user' as const, content: 'What is the capital of France?' },
        { role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'get_capital', arguments: '{"country":"France"}' } }] },
        { role: 'tool' as const, tool_call_id: 'call_1', content: 'Paris' },
      ],
      tools: [{ type: 'function' as const, function: { name: 'get_capital', parameters: { type: 'object', properties: { country: { type: 'string' } } } } }],
      tool_choice: 'required' as const,
      parallel_tool_calls: false,
      temperature: 0.2,
      seed: 7,
      response_format: { type: 'json_object' as const },
    };
    const r = await t.client().chat.completions.create({ model: 'strict', ...request });
    expectValid('CreateChatCompletionResponse', r);
    expect(azure.requests[0].url).toBe('/openai/deployments/gpt-4o/chat/completions?api-version=2024-12-01-preview');
    expect(azure.requests[0].body).toEqual({ model: 'gpt-4o', ...request });
    await t.client().chat.completions.create({ model: 'nano-v1', ...request });
    expect(azure.requests[1].url).toBe('/openai/v1/chat/completions');
    expect(azure.requests[1].body).toEqual({ model: 'gpt-5-nano', ...request });
  });

  it('streams ask for usage upstream; the client gets it only when asked, in a final chunk', async () => {
    azure.setHandler(() => replay(f('stream-model-router-usage')));
    const stream = await t.client().chat.completions.create({ model: 'strict', stream: true, messages: [{ role: 'user', content: 'Capital of Denmark?' }] });
    const chunks = [];
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk);
    }
    expect(azure.requests[0].headers.accept).toBe('text/event-stream');
    expect(azure.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks[0]).toHaveProperty('prompt_filter_results');

    const withUsage = await t
      .client()
      .chat.completions.create({ model: 'strict', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Capital of Denmark?' }] });
    const all = [];
    for await (const chunk of withUsage) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      all.push(chunk);
    }
    expect(all.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93 } });
    expect(all.map((c) => c.choices[0]?.delta.content ?? '').join('')).toMatch(/^Capital of Denmark/);
  });

  it('a streamed tool call is assembled by the SDK', async () => {
    azure.setHandler(() => replay(fixture('openai', 'stream-tool-call')));
    const runner = t.client().chat.completions.stream({
      model: 'strict',
      messages: [{ role: 'user', content: 'Capital of France?' }],
      tools: [{ type: 'function', function: { name: 'get_capital', parameters: { type: 'object' } } }],
    });
    runner.on('chunk', (chunk) => expectValid('CreateChatCompletionStreamResponse', chunk));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls![0]).toMatchObject({ type: 'function', function: { name: 'get_capital' } });
  });

  it('an output content filter ends the stream with finish_reason content_filter', async () => {
    const events = splitStream(f('stream-basic-content-filter')).map((b) => b.toString());
    const last = events.length - 2; // the finish chunk, before [DONE]
    events[last] = events[last].replace('"finish_reason":"stop"', '"finish_reason":"content_filter"');
    azure.setHandler(() => streamAnswer(events));
    const res = await post();
    const finishes = (await readSseEvents(res))
      .filter((e) => e !== 'data: [DONE]')
      .map((e) => JSON.parse(e.slice(6)))
      .flatMap((c) => c.choices.map((x: { finish_reason: string | null }) => x.finish_reason))
      .filter(Boolean);
    expect(finishes).toEqual(['content_filter']);
  });
});

describe('azure-openai errors', () => {
  it('a content-filter 400 without a fallback: 400, and the message says content filter', async () => {
    azure.setHandler(() => replay(f('error-400-content-filter')));
    const err = await failureOf(t.client().chat.completions.create({ model: 'strict', messages: [{ role: 'user', content: 'x' }] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('upstream_bad_request');
    expect(err.param).toBe('messages');
    expect(err.message).toContain("az: The response was filtered due to the prompt triggering Azure OpenAI's content management policy.");
    expect(err.message).toContain('(content filter: violence (medium)) (az code: content_filter)');
    expectValid('ErrorResponse', { error: err.error });
  });

  it('a Retry-After header wins over the wait in the message', async () => {
    azure.setHandler(() => replay(f('error-429-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '7' } }));
    const err = await failureOf(t.client().chat.completions.create({ model: 'strict', messages: [{ role: 'user', content: 'x' }] }));
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('7');
  });

  it('401, 404: the operator’s problem (502), the key never echoed', async () => {
    azure.setHandler(() => ({
      status: 401,
      body: {
        error: {
          code: '401',
          message:
            'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        },
      },
    }));
    const auth = await failureOf(t.client().chat.completions.create({ model: 'strict', messages: [{ role: 'user', content: 'x' }] }));
    expect(auth.status).toBe(502);
    expect(auth.code).toBe('upstream_auth_failed');
    expect(auth.error).toMatchObject({ message: "az rejected the gateway's credentials (HTTP 401); the gateway operator must fix providers.az in gateway.yaml" });
    azure.setHandler(() => ({ status: 404, body: { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } } }));
    const missing = await failureOf(t.client().chat.completions.create({ model: 'strict', messages: [{ role: 'user', content: 'x' }] }));
    expect(missing.status).toBe(502);
    expect(missing.code).toBe('upstream_model_not_found');
    expect(missing.message).toContain('(az code: DeploymentNotFound)');
    expect(t.logText()).not.toContain(KEY);
  });

  it('an error event after the first chunk is an in-stream error, then [DONE]', async () => {
    const events = splitStream(f('stream-basic-content-filter')).map((b) => b.toString());
    azure.setHandler(() => streamAnswer([...events.slice(0, 3), 'data: {"error":{"code":"server_error","message":"The server had an error while processing your request."}}\n\n']));
    const res = await post();
    expect(res.status).toBe(200);
    const out = await readSseEvents(res);
    const first = JSON.parse(out[0].slice(6));
    expectValid('CreateChatCompletionStreamResponse', first);
    expect(first.prompt_filter_results).toBeDefined();
    const error = JSON.parse(out.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error.message).toContain('az: The server had an error while processing your request.');
    expect(out.at(-1)).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ streamError: true });
  });

  it('a truncated stream: cut mid-way is an in-stream error; ended without a finish likewise; cut before the first chunk is a 502', async () => {
    azure.setHandler(() => ({ ...replay(f('stream-basic-content-filter')), destroyAfterChunks: 4, gapMs: 20 }));
    const cut = await readSseEvents(await post());
    expect(JSON.parse(cut.at(-2)!.slice(6)).error.code).toBe('upstream_error');
    expect(cut.at(-1)).toBe('data: [DONE]');

    const events = splitStream(f('stream-basic-content-filter')).map((b) => b.toString());
    azure.setHandler(() => streamAnswer(events.slice(0, 4)));
    const early = await readSseEvents(await post());
    expect(JSON.parse(early.at(-2)!.slice(6)).error.message).toContain('no finish_reason');

    // The preamble alone is no chunk: a cut right after it is still an HTTP error.
    azure.setHandler(() => ({ ...replay(f('stream-basic-content-filter')), destroyAfterChunks: 1, gapMs: 10 }));
    const res = await post();
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
  });
});
