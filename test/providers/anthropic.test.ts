/** The anthropic provider end to end: exact native requests, recorded answers and streams, errors. */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import {
  chatRequests,
  expectValid,
  failureOf,
  fakeUpstream,
  loadFixture,
  logLineFor,
  readSseEvents,
  replay,
  splitStream,
  streamAnswer,
  useTestGateway,
  type ScriptedResponse,
} from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('anthropic'), name);
const SECRET = 'sk-ant-test-secret-000111';
const anthropic = fakeUpstream(() => replay(f('messages-system-prompt')));
const openai = fakeUpstream(() => replay(loadFixture(fixturesOf('openai'), 'error-500-server-error')));
const t = useTestGateway(
  () =>
    configYaml({
      providers: [
        `  claude: { plugin: anthropic, baseUrl: "${anthropic.url}", apiKey: ${SECRET}, maxTokens: 1024 }`,
        `  tuned: { plugin: anthropic, baseUrl: "${anthropic.url}/proxy", apiKey: ${SECRET}, version: "2099-01-01", beta: "extended-cache-ttl-2025-04-11", promptCaching: "1h", headers: { x-team: search } }`,
        `  oai: { plugin: openai, baseUrl: "${openai.url}/v1" }`,
      ].join('\n'),
      models: [
        '  claude: { retry: { attempts: 1 }, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  tuned: { retry: { attempts: 1 }, targets: [{ provider: tuned, model: claude-sonnet-4-5 }] }',
        '  patient: { retry: { attempts: 3, backoff: { initialMs: 1, maxMs: 1 } }, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  lenient: { retry: { attempts: 1 }, dropUnsupportedParams: true, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  mixed: { retry: { attempts: 1 }, targets: [{ provider: oai, model: gpt-4o }, { provider: claude, model: claude-3-opus-latest }] }',
      ].join('\n'),
    }),
  { upstreams: [anthropic, openai] },
);

const { chat, streamed, post } = chatRequests(t, { model: 'claude' });
const sent = () => anthropic.requests.at(-1)!;
/** Anthropic's own stream content type. */
const streamBody = (chunks: Array<string | Buffer>, extra: Partial<ScriptedResponse> = {}) => streamAnswer(chunks, { headers: { 'content-type': 'text/event-stream; charset=utf-8' }, ...extra });

describe('request translation', () => {
  it('POST /v1/messages with x-api-key and anthropic-version; system and developer messages become `system`', async () => {
    const r = await chat({
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      user: 'u-42',
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().method).toBe('POST');
    expect(sent().url).toBe('/v1/messages');
    expect(sent().headers['x-api-key']).toBe(SECRET);
    expect(sent().headers['anthropic-version']).toBe('2023-06-01');
    expect(sent().headers['content-type']).toBe('application/json');
    expect(sent().headers).not.toHaveProperty('authorization');
    expect(sent().body).toEqual({
      model: 'claude-3-opus-latest',
      max_tokens: 1024,
      system: 'You are a helpful assistant.\n\nBe brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
    });
  });

  it('provider options: base path, version, beta, extra headers and prompt caching', async () => {
    await chat({}, 'tuned');
    expect(sent().url).toBe('/proxy/v1/messages');
    expect(sent().headers).toMatchObject({ 'anthropic-version': '2099-01-01', 'anthropic-beta': 'extended-cache-ttl-2025-04-11', 'x-team': 'search', 'x-api-key': SECRET });
    expect(sent().body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }], cache_control: { type: 'ephemeral', ttl: '1h' } });
  });

  it('multi-turn with tool calls and results: tool_use and tool_result blocks, turns merged', async () => {
    anthropic.setHandler(() => replay(f('messages-parallel-tool-results-followup')));
    const r = await chat({
      max_completion_tokens: 1000,
      messages: [
        { role: 'user', content: 'Use the test_tool with count 1, then use it again with count 2' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'test_tool', arguments: '{"count":1}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'test_tool', arguments: '{"count":2}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'one' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'two' },
        { role: 'user', content: 'Now summarise.' },
      ],
      tools: [{ type: 'function', function: { name: 'test_tool', description: 'A test tool', parameters: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().body).toEqual({
      model: 'claude-3-opus-latest',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'Use the test_tool with count 1, then use it again with count 2' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'test_tool', input: { count: 1 } },
            { type: 'tool_use', id: 'toolu_2', name: 'test_tool', input: { count: 2 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'one' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'two' },
            { type: 'text', text: 'Now summarise.' },
          ],
        },
      ],
      tools: [{ name: 'test_tool', description: 'A test tool', input_schema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
  });

  it('images: data URLs become base64 blocks, https URLs url blocks', async () => {
    anthropic.setHandler(() => replay(f('messages-image-input-base64')));
    const image = f('messages-image-input-base64').request.messages[0].content[1].source.data as string;
    const r = await chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this vegetable?' },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${image}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toContain('potato');
    expect(sent().body.messages[0].content).toEqual([
      { type: 'text', text: 'What is this vegetable?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: image } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    ]);
  });

  it('tool_choice forms', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    for (const [choice, expected] of [
      ['auto', { type: 'auto' }],
      ['none', { type: 'none' }],
      ['required', { type: 'any' }],
      [
        { type: 'function', function: { name: 'f' } },
        { type: 'tool', name: 'f' },
      ],
    ] as const) {
      await chat({ tools, tool_choice: choice as never });
      expect(sent().body.tool_choice).toEqual(expected);
    }
  });

  it('response_format json_schema is Anthropic structured output (output_config.format)', async () => {
    const schema = { type: 'object', properties: { capital: { type: 'string' } }, required: ['capital'], additionalProperties: false };
    const r = await chat({ response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema } } });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(sent().body).not.toHaveProperty('response_format');
  });

  it('a parameter Anthropic cannot honour is a 400 naming it, or dropped when the alias allows', async () => {
    const err = await failureOf(chat({ seed: 7 }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('seed');
    expect(err.message).toContain("'seed'");
    expectValid('ErrorResponse', { error: err.error });
    expect(anthropic.requests).toHaveLength(0);
    const format = await failureOf(chat({ response_format: { type: 'json_object' } }));
    expect(format.param).toBe('response_format');
    expect(anthropic.requests).toHaveLength(0);

    const r = await chat({ seed: 7, frequency_penalty: 0.5 }, 'lenient');
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toContain('Paris');
    expect(sent().body).toEqual({ model: 'claude-3-opus-latest', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] });
    expect(t.logs.some((l) => l.msg === "dropped unsupported parameter 'seed'")).toBe(true);
    expect(t.logs.some((l) => l.msg === "dropped unsupported parameter 'frequency_penalty'")).toBe(true);
  });
});

describe('answers', () => {
  it('maps parallel tool use, the reported model and cache usage (also in the log line)', async () => {
    anthropic.setHandler(() => replay(f('messages-parallel-tool-use')));
    const tools = await chat({});
    expectValid('CreateChatCompletionResponse', tools);
    expect(tools.model).toBe('claude-opus-4-8');
    expect(tools.choices[0].finish_reason).toBe('tool_calls');
    expect(tools.choices[0].message.tool_calls!.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"count":1}', '{"count":2}']);

    anthropic.setHandler(() => replay(f('messages-usage-cache-read')));
    const { data: cached, response } = await chat({}).withResponse();
    expectValid('CreateChatCompletionResponse', cached);
    expect(cached.model).toBe('claude-sonnet-4-5-20250929');
    expect(cached.usage).toEqual({
      prompt_tokens: 3 + 1111 + 418,
      completion_tokens: 33,
      total_tokens: 1532 + 33,
      prompt_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418 },
      cost: expect.any(Number),
    });
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'claude', upstreamModel: 'claude-sonnet-4-5-20250929' });
    expect(JSON.stringify(line)).toContain('1532');
  });

  it('a text stream: the upstream model, one finish, and usage only when asked', async () => {
    anthropic.setHandler(() => replay(f('stream-basic')));
    const plain = await streamed();
    expect(sent().body.stream).toBe(true);
    expect(sent().headers.accept).toBe('text/event-stream');
    expect(plain.text).toBe('Hello there!');
    expect(plain.finishes).toEqual(['stop']);
    expect(plain.chunks[0].choices[0].delta.role).toBe('assistant');
    expect(plain.chunks.every((c) => c.model === 'claude-opus-4-8' && c.id === 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK')).toBe(true);
    expect(plain.chunks.some((c) => 'usage' in c)).toBe(false);

    const withUsage = await streamed({ stream_options: { include_usage: true } });
    expect(withUsage.chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 } });
  });

  it('stream usage counts cache reads and writes as prompt tokens', async () => {
    const basic = f('stream-basic')
      .body.toString('utf8')
      .replace(
        '"usage":{"input_tokens":11,"output_tokens":1}',
        '"usage":{"input_tokens":11,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}',
      );
    anthropic.setHandler(() => streamBody(basic.split(/(?<=\n\n)/)));
    const { chunks } = await streamed({ stream_options: { include_usage: true } });
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 3211,
      completion_tokens: 6,
      total_tokens: 3217,
      prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 200 },
      cost: expect.any(Number),
    });
  });

  it('a streamed tool call: the SDK assembles the call from id, name and argument fragments', async () => {
    anthropic.setHandler(() => replay(f('stream-tool-use')));
    const runner = t.client().chat.completions.stream({
      model: 'claude',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
    });
    runner.on('chunk', (chunk) => expectValid('CreateChatCompletionStreamResponse', chunk));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.content).toBe("I'll check the current weather in Paris for you.");
    expect(final.choices[0].message.tool_calls).toEqual([{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '{"location": "Paris"}' } }]);
  });

  it('streams extended thinking as reasoning_content deltas, text as content', async () => {
    anthropic.setHandler(() => replay(f('stream-thinking')));
    const { chunks, text } = await streamed({ messages: [{ role: 'user', content: 'How do I cross the street?' }], thinking: { type: 'enabled', budget_tokens: 1024 } } as never);
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(sent().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(reasoning).toContain('pedestrian safety');
    expect(text).toContain('crossing streets.');
  });

  it('a stream cut by max_tokens mid tool input finishes with length', async () => {
    anthropic.setHandler(() => replay(f('stream-max-tokens-partial-tool-input')));
    const { finishes } = await streamed();
    expect(finishes).toEqual(['length']);
  });
});

describe('errors', () => {
  const basic = () => splitStream(f('stream-basic'));
  const overloaded = () => splitStream(f('stream-error-overloaded'));

  it('an error event before any content is a proper HTTP error (overloaded → 503)', async () => {
    // message_start, content_block_start and ping carry nothing for the client: no chunk yet.
    anthropic.setHandler(() => streamBody([...basic().slice(0, 3), ...overloaded()]));
    const res = await post();
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string } };
    expectValid('ErrorResponse', body);
    expect(body.error.message).toBe('claude: Overloaded (claude code: overloaded_error)');
  });

  it('so an overloaded stream is retried before the client sees a byte', async () => {
    anthropic.setHandler((_req, i) => (i === 0 ? streamBody([...basic().slice(0, 3), ...overloaded()]) : replay(f('stream-basic'))));
    const { text, finishes } = await streamed({}, 'patient');
    expect(text).toBe('Hello there!');
    expect(finishes).toEqual(['stop']);
    expect(anthropic.requests).toHaveLength(2);
  });

  it('an error event after the first chunk is an in-stream error, then [DONE]', async () => {
    anthropic.setHandler(() => streamBody([...basic().slice(0, 5), ...overloaded()]));
    const res = await post();
    expect(res.status).toBe(200);
    const events = await readSseEvents(res);
    expect(JSON.parse(events[0].slice(6)).choices[0].delta).toEqual({ role: 'assistant', content: 'Hello' });
    const error = JSON.parse(events.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error).toMatchObject({ code: 'provider_unavailable', message: 'claude: Overloaded (claude code: overloaded_error)' });
    expect(events.at(-1)).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ streamError: true, error: 'provider_unavailable' });
  });

  it('a connection cut mid-stream is an in-stream upstream_error, then [DONE]', async () => {
    // The gap lets the gateway read each event before the reset (a reset discards unread bytes).
    anthropic.setHandler(() => ({ ...replay(f('stream-basic')), destroyAfterChunks: 5, gapMs: 20 }));
    const res = await post();
    expect(res.status).toBe(200);
    const events = await readSseEvents(res);
    expect(events.slice(0, -2).map((e) => JSON.parse(e.slice(6)).choices[0].delta.content)).toEqual(['Hello', ' there']);
    const error = JSON.parse(events.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error.code).toBe('upstream_error');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('a connection cut before the first chunk is a 502', async () => {
    for (const destroyAfterChunks of [0, 3]) {
      anthropic.setHandler(() => ({ ...replay(f('stream-basic')), destroyAfterChunks, gapMs: 10 }));
      const res = await post();
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expectValid('ErrorResponse', body);
      expect(body.error.code).toBe('upstream_error');
      expect(body.error.message).toMatch(/^claude: /);
    }
  });

  it('a stream that ends cleanly without message_stop ended early', async () => {
    anthropic.setHandler(() => streamBody(basic().slice(0, 6)));
    const events = await readSseEvents(await post());
    const error = JSON.parse(events.at(-2)!.slice(6));
    expect(error.error.code).toBe('upstream_error');
    expect(error.error.message).toContain('the stream ended early (no message_stop)');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('a malformed answer is the provider’s fault: 502', async () => {
    anthropic.setHandler(() => ({ status: 200, body: '{"content": "not a list"}' }));
    const shape = await failureOf(chat({}));
    expect(shape.status).toBe(502);
    expect(shape.code).toBe('upstream_error');
    anthropic.setHandler(() => ({ status: 200, body: '<html>bad gateway</html>' }));
    const notJson = await failureOf(chat({}));
    expect(notJson.status).toBe(502);
    expect(notJson.message).toContain('not valid JSON');
    anthropic.setHandler(() => streamBody(['event: message_start\ndata: {"type":"message_start",\n\n']));
    expect((await post()).status).toBe(502);
  });

  it('x-should-retry is honoured both ways', async () => {
    const answer = (retry: string) => ({
      status: 500,
      headers: { 'content-type': 'application/json', 'x-should-retry': retry },
      body: { type: 'error', error: { type: 'api_error', message: 'nope' } },
    });
    anthropic.setHandler(() => answer('false'));
    await failureOf(chat({}, 'patient'));
    expect(anthropic.requests).toHaveLength(1);
    anthropic.reset();
    anthropic.setHandler(() => answer('true'));
    await failureOf(chat({}, 'patient'));
    expect(anthropic.requests).toHaveLength(3);
  });

  it('the recorded 529 is retried, then answered 503 with the provider’s words; the key never leaks', async () => {
    anthropic.setHandler(() => replay(f('error-529-overloaded')));
    const err = await failureOf(chat({}, 'patient'));
    expect(anthropic.requests).toHaveLength(3);
    expect(err.status).toBe(503);
    expect(err.code).toBe('provider_unavailable');
    expect(err.message).toContain('claude: Overloaded (claude code: overloaded_error)');
    expect(t.logText()).not.toContain(SECRET);
  });
});

describe('fallback across providers', () => {
  it('an OpenAI target failing over to Anthropic: each attempt is translated for its provider', async () => {
    const { data, response } = await chat(
      {
        messages: [
          { role: 'system', content: 'Be helpful.' },
          { role: 'user', content: 'What is the capital of France?' },
        ],
      },
      'mixed',
    ).withResponse();
    expectValid('CreateChatCompletionResponse', data);
    expect(openai.requests[0].body).toMatchObject({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be helpful.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
    });
    expect(sent().body).toMatchObject({ model: 'claude-3-opus-latest', system: 'Be helpful.', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    expect(data.model).toBe('claude-3-opus-20240229');
    expect(response.headers.get('x-switchyard-provider')).toBe('claude');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
  });
});
