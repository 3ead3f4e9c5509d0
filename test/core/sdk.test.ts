/** The official openai SDK against the real gateway with the built-in mock provider. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { DEV_KEY, expectValid, logLineFor, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml } from '../helpers/repo.ts';

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway(
    configYaml({
      keys: `  - { name: dev, key: ${DEV_KEY}, models: ["*"] }\n  - { name: narrow, key: sk-test-narrow-0123456789, models: ["demo"] }`,
      providers: '  mock: { plugin: mock }\n  nokey: { plugin: openai, baseUrl: "http://127.0.0.1:9", apiKey: "${UNSET_TEST_KEY}" }',
      models:
        '  demo: { targets: [{ provider: mock, model: mock-1, price: { input: 2.5, output: 10 } }] }\n  other: { targets: [{ provider: mock, model: mock-2 }] }\n  needs-key: { targets: [{ provider: nokey, model: gpt-4o }] }',
    }),
  );
});
afterAll(() => t.close());

describe('openai SDK against the mock provider', () => {
  it('creates a chat completion whose model names the upstream model', async () => {
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    expectValid('CreateChatCompletionResponse', data);
    expect(data.model).toBe('mock-1');
    expect(data.choices[0].message.content).toContain('mock provider');
    expect(data.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: expect.any(Number) });
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(response.headers.get('x-switchyard-provider')).toBe('mock');
    expect(response.headers.get('x-switchyard-attempts')).toBe('1');
  });

  it('streams chunks that each validate, with usage only when asked', async () => {
    const stream = await t.client().chat.completions.create({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    const chunks = [];
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toContain('mock provider');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.some((c) => 'usage' in c)).toBe(false);

    const withUsage = await t.client().chat.completions.create({ model: 'demo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] });
    const all = [];
    for await (const chunk of withUsage) all.push(chunk);
    const last = all.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 5, total_tokens: expect.any(Number) });
  });

  it('streams with the SDK helper and a tool call when tool_choice requires one', async () => {
    const runner = t.client().chat.completions.stream({
      model: 'demo',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{}' } });
  });

  it('logs one line per request with tokens, and the key name but never the key', async () => {
    const { response } = await t
      .client()
      .chat.completions.create({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'count me' }] })
      .withResponse();
    const reqId = response.headers.get('x-request-id')!;
    const line = await logLineFor(t, reqId);
    expect(line).toMatchObject({ key: 'dev', model: 'demo', provider: 'mock', upstreamModel: 'mock-1', status: 200, stream: true, promptTokens: 6, attempts: 1 });
    expect(line.completionTokens).toBeGreaterThan(0);
    expect(line.costUsd).toBeCloseTo((line.promptTokens * 2.5 + line.completionTokens * 10) / 1e6, 12);
    expect(line.durationMs).toBeGreaterThanOrEqual(0);
    expect(t.logText()).not.toContain(DEV_KEY);
  });

  it('lists and retrieves the models the key may use', async () => {
    const all = await t.client().models.list();
    expect(all.data.map((m) => m.id).sort()).toEqual(['demo', 'needs-key', 'other']);
    for (const m of all.data) expectValid('Model', m);
    const narrow = await t.client('sk-test-narrow-0123456789').models.list();
    expect(narrow.data.map((m) => m.id)).toEqual(['demo']);
    expect((await t.client().models.retrieve('other')).id).toBe('other');
    await expect(t.client('sk-test-narrow-0123456789').models.retrieve('other')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // Without a valid key nothing is told, not even whether a model exists.
    await expect(t.client('sk-wrong-key-123456').models.retrieve('no-such-model')).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(t.client('sk-wrong-key-123456').models.retrieve('demo')).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('errors arrive as the SDK own classes', () => {
  async function expectError(promise: Promise<unknown>, cls: unknown, status: number, code: string) {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(cls as never);
    const apiError = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(status);
    expect(apiError.code).toBe(code);
    expectValid('ErrorResponse', { error: apiError.error });
    expect(apiError.headers?.get('x-request-id')).toBeTruthy();
    return apiError;
  }

  it('401 for a wrong key, without echoing it', async () => {
    const e = await expectError(
      t.client('sk-wrong-key-123456').chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'x' }] }),
      OpenAI.AuthenticationError,
      401,
      'invalid_api_key',
    );
    expect(e.message).not.toContain('sk-wrong-key-123456');
  });

  it('403 when the key may not use the model', async () => {
    const e = await expectError(
      t.client('sk-test-narrow-0123456789').chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'x' }] }),
      OpenAI.PermissionDeniedError,
      403,
      'model_not_allowed',
    );
    expect(e.param).toBe('model');
  });

  it('404 for an unknown model', async () => {
    await expectError(t.client().chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }), OpenAI.NotFoundError, 404, 'model_not_found');
  });

  it('400 naming the bad field', async () => {
    const e = await expectError(t.client().chat.completions.create({ model: 'demo', messages: [{ role: 'robot', content: 'x' } as never] }), OpenAI.BadRequestError, 400, 'invalid_request');
    expect(e.param).toBe('messages[0].role');
    expect(e.message).toContain('"robot"');
    const empty = await expectError(t.client().chat.completions.create({ model: 'demo', messages: [] }), OpenAI.BadRequestError, 400, 'invalid_request');
    expect(empty.param).toBe('messages');
    const missing = await expectError(t.client().chat.completions.create({ model: 'demo' } as never), OpenAI.BadRequestError, 400, 'missing_required_parameter');
    expect(missing.param).toBe('messages');
    expect(missing.message).toBe("400 Missing required parameter: 'messages'.");
    const temp = await expectError(t.client().chat.completions.create({ model: 'demo', temperature: 7, messages: [{ role: 'user', content: 'x' }] }), OpenAI.BadRequestError, 400, 'invalid_request');
    expect(temp.param).toBe('temperature');
  });

  it('503 when the provider key is not configured: no configuration detail for the client, no SDK retry', async () => {
    const e = await expectError(t.client().chat.completions.create({ model: 'needs-key', messages: [{ role: 'user', content: 'x' }] }), OpenAI.InternalServerError, 503, 'provider_unavailable');
    expect(e.message).toContain('temporarily unavailable');
    expect(e.message).not.toMatch(/UNSET_TEST_KEY|\.yaml|:\d+:\d+/);
    expect(e.headers?.get('x-should-retry')).toBe('false');
    // With its default retries the SDK makes exactly one request: it honours x-should-retry.
    let requests = 0;
    const counting = t.client(DEV_KEY, {
      maxRetries: 2,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        requests++;
        return fetch(url, init);
      },
    });
    await expect(counting.chat.completions.create({ model: 'needs-key', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    expect(requests).toBe(1);
    // The operator sees why, at /readyz (and in the log).
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { providers: Record<string, { reason?: string }> };
    expect(JSON.stringify(ready.providers)).toContain('UNSET_TEST_KEY');
  });
});
