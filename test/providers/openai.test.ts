/** The openai provider against fake OpenAI-compatible upstreams replaying recorded payloads. */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { chatRequests, DEV_KEY, expectValid, fakeUpstream, loadFixture, logLineFor, replay, splitStream, streamAnswer, useTestGateway, type Handler } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const UPSTREAM_KEY = 'sk-upstream-secret-abcdef123456';

const ok: Handler = () => replay(f('chat-basic'));
const primary = fakeUpstream(ok);
const backup = fakeUpstream(ok);
const t = useTestGateway(
  () =>
    configYaml({
      providers: [
        `  primary: { plugin: openai, baseUrl: "${primary.url}/v1", apiKey: ${UPSTREAM_KEY}, headers: { OpenAI-Organization: org-test } }`,
        `  backup: { plugin: openai, baseUrl: "${backup.url}/v1" }`,
        `  down: { plugin: openai, baseUrl: "http://127.0.0.1:9/v1" }`,
      ].join('\n'),
      models: [
        '  gpt: { retry: { attempts: 2, backoff: { initialMs: 1, maxMs: 5 } }, targets: [{ provider: primary, model: gpt-4o }] }',
        '  fast: { retry: { attempts: 2, backoff: { initialMs: 1, maxMs: 5 }, maxRetryAfterMs: 1000 }, targets: [{ provider: primary, model: gpt-4o-mini }, { provider: backup, model: llama-3.1-8b }] }',
        '  unreachable: { retry: { attempts: 1 }, targets: [{ provider: down, model: x }, { provider: backup, model: llama-3.1-8b }] }',
      ].join('\n'),
    }),
  { upstreams: [primary, backup] },
);

const { chat: ask } = chatRequests(t, { model: 'gpt', content: 'What is the capital of France?' });

/** USD at gpt-4o's rates (2.50 input, 1.25 cached input, 10.00 output per million), written out. */
function gpt4oCost(u: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } }): number {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  return Math.round(((u.prompt_tokens - cached) * 2.5 + cached * 1.25 + u.completion_tokens * 10) * 1e3) / 1e9;
}

describe('forwarding', () => {
  it('sends the client request with the target model, the upstream key and extra headers', async () => {
    const r = await ask({ temperature: 0.2, some_future_param: { x: 1 } } as never);
    expect(r.choices[0].message.content).toBe('The capital of France is Paris.');
    const sent = primary.requests[0];
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent.headers['openai-organization']).toBe('org-test');
    expect(sent.body).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: 'What is the capital of France?' }], temperature: 0.2, some_future_param: { x: 1 } });
  });

  it('returns every recorded completion unchanged but for required nullable fields', async () => {
    for (const name of ['chat-basic', 'chat-tool-call', 'chat-tool-result-followup', 'chat-structured-output', 'chat-reasoning-usage-details', 'chat-image-url-after-tool', 'chat-system-prompt']) {
      const fixture = f(name);
      primary.setHandler(() => replay(fixture));
      const r = await t.client().chat.completions.create({ ...fixture.request, model: 'gpt' });
      expectValid('CreateChatCompletionResponse', r);
      const expected = structuredClone(fixture.json);
      for (const c of expected.choices) c.logprobs ??= null;
      // The gateway's one addition: usage.cost, at gpt-4o's listed rates.
      expected.usage.cost = gpt4oCost(expected.usage);
      expect(r).toEqual(expected);
      expect(primary.requests.at(-1)!.body).toEqual({ ...fixture.request, model: 'gpt-4o' });
    }
  });

  it('replays every recorded stream chunk for chunk, asking upstream for usage', async () => {
    for (const name of ['stream-tool-call', 'stream-logprobs', 'stream-refusal', 'stream-structured-output', 'stream-tool-result-followup']) {
      const fixture = f(name);
      primary.setHandler(() => replay(fixture));
      const stream = await t.client().chat.completions.create({ model: 'gpt', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] });
      const got = [];
      for await (const chunk of stream) {
        expectValid('CreateChatCompletionStreamResponse', chunk);
        got.push(chunk);
      }
      const recorded = splitStream(fixture)
        .map((b) =>
          b
            .toString()
            .replace(/^data: /, '')
            .trim(),
        )
        .filter((d) => d !== '[DONE]')
        .map((d) => JSON.parse(d));
      for (const chunk of recorded) if (chunk.usage) chunk.usage.cost = gpt4oCost(chunk.usage);
      expect(got).toEqual(recorded);
      expect(primary.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    }
  });

  it('keeps the usage chunk from clients that did not ask, but still logs the tokens', async () => {
    primary.setHandler(() => replay(f('stream-tool-call')));
    const { data: stream, response } = await t
      .client()
      .chat.completions.create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const got = [];
    for await (const chunk of stream) got.push(chunk);
    expect(got.every((c) => !('usage' in c))).toBe(true);
    expect(got.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    expect(primary.requests[0].body.stream_options).toEqual({ include_usage: true });
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ promptTokens: 53, completionTokens: 15, totalTokens: 68, upstreamModel: 'gpt-4o-mini-2024-07-18', provider: 'primary' });
  });

  it('writes a chunk nothing changed as the upstream wrote it, and serialises the ones it changed', async () => {
    // Same values either way; the bytes tell which: the upstream escapes é, JSON.stringify does not.
    const asSent = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"caf\\u00e9"},"finish_reason":null}]}';
    const unnormal = '{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","system_fingerprint":null,"created":1,"choices":[{"index":0,"delta":{"content":"\\u00e9"},"finish_reason":null}]}';
    const multiLine = '{"id":"c1","object":"chat.completion.chunk","created":1,\ndata: "model":"gpt-4o","choices":[{"index":0,"delta":{"content":"\\u00e9!"},"finish_reason":null}]}';
    const finish = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}';
    const usage = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}';
    primary.setHandler(() => streamAnswer([asSent, unnormal, multiLine, finish, usage, '[DONE]'].map((d) => `data: ${d}\n\n`)));
    const body = async (extra: Record<string, unknown>) => {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }], ...extra }),
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const cost = gpt4oCost({ prompt_tokens: 5, completion_tokens: 2 });
    expect(await body({ stream_options: { include_usage: true } })).toBe(
      [
        asSent,
        '{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","created":1,"choices":[{"index":0,"delta":{"content":"é"},"finish_reason":null}]}',
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"é!"},"finish_reason":null}]}',
        finish,
        `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"cost":${cost}}}`,
        '[DONE]',
      ]
        .map((d) => `data: ${d}\n\n`)
        .join(''),
    );
    // Without include_usage the gateway takes the usage out: a chunk that had the key is serialised without it.
    const without = await body({});
    expect(without.startsWith(`data: ${asSent}\n\n`)).toBe(true);
    expect(without).toContain('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
    expect(without).not.toContain('usage');
  });

  it('frames chunks sent as the upstream wrote them by their UTF-8 bytes, one event a read as in a slow stream', async () => {
    // Characters of 1 to 4 bytes, unescaped: a chunk framed by its length in characters would cut the body. One event past 4 KB.
    const texts = ['é', '€ and €', '😀', '€'.repeat(2000), 'plain'];
    const events = texts.map(
      (text, i) =>
        `{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":${i === texts.length - 1 ? '"stop"' : 'null'}}]}`,
    );
    primary.setHandler(() =>
      streamAnswer(
        [...events, '[DONE]'].map((d) => `data: ${d}\n\n`),
        { gapMs: 20 },
      ),
    );
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe([...events, '[DONE]'].map((d) => `data: ${d}\n\n`).join(''));
  });

  it('carries the client x-request-id through', async () => {
    const { response } = await ask()
      .withResponse()
      .catch(() => ({ response: undefined as never }));
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', 'x-request-id': 'trace-abc.123' },
      body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
  });
});

describe('upstream errors', () => {
  it('a 400 is the client mistake: the provider message is kept with its param, and not retried', async () => {
    primary.setHandler(() => replay(f('error-400-param-not-supported')));
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain('primary: Web search options not supported with this model.');
    expect(err.param).toBe('web_search_options');
    expect(primary.requests).toHaveLength(1);
  });

  it('Groq-style 400 extras and OpenRouter numeric codes are tolerated', async () => {
    primary.setHandler(() => replay(f('error-400-tool-use-failed-groq')));
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(400);
    expect(err.message).toContain('tool_use_failed');
    primary.setHandler(() => replay(f('error-429-upstream-rate-limited-openrouter')));
    const limited = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.message).toContain('Provider returned error');
  });

  it('an upstream message quoting the provider key is scrubbed from the client error and the log', async () => {
    primary.setHandler(() => ({ status: 500, body: { error: { message: `bad key ${UPSTREAM_KEY} rejected`, type: 'server_error', param: null, code: null } } }));
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.message).toContain('bad key [REDACTED] rejected');
    await new Promise((r) => setTimeout(r, 20));
    expect(t.logText()).not.toContain(UPSTREAM_KEY);
  });

  it("an upstream 401 is the gateway's misconfiguration (502) and never echoes the key", async () => {
    primary.setHandler(() => replay(f('error-401-invalid-api-key')));
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_auth_failed');
    expect(err.message).not.toMatch(/sk-/);
    expect(t.logText()).not.toContain(UPSTREAM_KEY);
  });

  it('5xx is retried with backoff, then answered 502 with the attempts counted', async () => {
    primary.setHandler(() => replay(f('error-500-server-error')));
    const { response, error } = await ask()
      .withResponse()
      .then(
        (r) => ({ response: r.response, error: undefined }),
        (e: InstanceType<typeof OpenAI.APIError>) => ({ response: undefined, error: e }),
      );
    expect(response).toBeUndefined();
    expect(error!.status).toBe(502);
    expect(error!.code).toBe('upstream_error');
    expect(error!.headers?.get('x-switchyard-attempts')).toBe('2');
    expect(primary.requests).toHaveLength(2);
  });

  it('a 429 is retried after retry-after-ms, then succeeds', async () => {
    primary.setHandler((_req, i) => (i === 0 ? replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after-ms': '20' } }) : replay(f('chat-basic'))));
    const { data, response } = await ask().withResponse();
    expect(data.model).toBe('gpt-4o-2024-08-06');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
  });

  it('a 429 whose retry-after exceeds the cap falls back to the next target at once', async () => {
    primary.setHandler(() => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '30' } }));
    const started = Date.now();
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests[0].body.model).toBe('llama-3.1-8b');
    expect(data.model).toBe('gpt-4o-2024-08-06');
    expect(response.headers.get('x-switchyard-provider')).toBe('backup');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line.attemptLog).toMatchObject([
      { provider: 'primary', status: 429, outcome: 'error' },
      { provider: 'backup', status: 200, outcome: 'ok' },
    ]);
  });

  it('when every target is rate limited the client gets 429 with Retry-After', async () => {
    const limited = () => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '30' } });
    primary.setHandler(limited);
    backup.setHandler(limited);
    const err = (await t
      .client()
      .chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers?.get('retry-after')).toBe('30');
  });

  it('a refused connection fails over to the next target', async () => {
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'unreachable', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(data.choices[0].message.content).toContain('Paris');
    expect(response.headers.get('x-switchyard-provider')).toBe('backup');
  });

  it('a malformed 200 body is the provider fault: 502', async () => {
    primary.setHandler(() => ({ status: 200, body: '{"choices": [' }));
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.message).toContain('malformed');
  });
});

describe('streams', () => {
  const streamAsk = (model = 'gpt') => t.client().chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'x' }] });

  it('fails over before the first byte: a stream cut before any chunk goes to the next target', async () => {
    primary.setHandler(() => ({ status: 200, chunks: ['data: {"id":"x"'], destroyAfterChunks: 1 }));
    backup.setHandler(() => replay(f('stream-tool-result-followup')));
    const { data: stream, response } = await streamAsk('fast').withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(response.headers.get('x-switchyard-provider')).toBe('backup');
  });

  it('after the first byte an upstream failure becomes an in-stream error, then [DONE]', async () => {
    const chunks = splitStream(f('stream-tool-call'));
    // The gap lets the gateway read each chunk before the cut (a reset discards unread bytes).
    primary.setHandler(() => ({ status: 200, chunks, destroyAfterChunks: 3, gapMs: 20 }));
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events).toHaveLength(5);
    const error = JSON.parse(events[3].slice('data: '.length));
    expectValid('ErrorResponse', error);
    expect(error.error.code).toBe('upstream_error');
    expect(events[4]).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 200, streamError: true, error: 'upstream_error' });
  });

  it('an upstream error event inside a 200 stream is mapped too', async () => {
    primary.setHandler(() => ({
      status: 200,
      chunks: [splitStream(f('stream-tool-call'))[0], 'data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}\n\n'],
    }));
    const stream = await streamAsk();
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const chunk of stream) seen.push(chunk);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(String((err as Error).message)).toContain('primary: The server had an error');
  });

  it('a client that disconnects aborts the upstream request', async () => {
    primary.setHandler(() => ({ status: 200, chunks: splitStream(f('stream-tool-call')), gapMs: 100 }));
    const controller = new AbortController();
    const stream = await t.client().chat.completions.create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal });
    for await (const _chunk of stream) {
      controller.abort();
      break;
    }
    const deadline = Date.now() + 2000;
    while (primary.aborted === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(primary.aborted).toBe(1);
  });
});
