/** The anthropic provider end to end: exact native requests, recorded answers and streams, errors. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { loadFixture, replay, splitStream, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { configYaml, DEV_KEY, failureOf, logLineFor, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { expectValid } from '../helpers/schema.ts';

const f = (name: string) => loadFixture('anthropic', name);
const SECRET = 'sk-ant-test-secret-000111';
let anthropic: FakeUpstream;
let openai: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeUpstream(() => replay(f('messages-system-prompt')));
  openai = await startFakeUpstream(() => replay(loadFixture('openai', 'error-500-server-error')));
  t = await startTestGateway(
    configYaml({
      providers: `  claude: { plugin: anthropic, baseUrl: "${anthropic.url}", apiKey: ${SECRET}, maxTokens: 1024 }\n  oai: { plugin: openai, baseUrl: "${openai.url}/v1" }`,
      models: [
        '  claude: { retry: { attempts: 1 }, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  patient: { retry: { attempts: 3, backoff: { initialMs: 1, maxMs: 1 } }, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  lenient: { retry: { attempts: 1 }, dropUnsupportedParams: true, targets: [{ provider: claude, model: claude-3-opus-latest }] }',
        '  mixed: { retry: { attempts: 1 }, targets: [{ provider: oai, model: gpt-4o }, { provider: claude, model: claude-3-opus-latest }] }',
      ].join('\n'),
    }),
  );
});
afterEach(() => {
  anthropic.setHandler(() => replay(f('messages-system-prompt')));
  anthropic.reset();
  openai.reset();
});
afterAll(async () => {
  await t.close();
  await anthropic.close();
  await openai.close();
});

const chat = (body: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming>, model = 'claude') =>
  t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], ...body } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
const sent = () => anthropic.requests.at(-1)!;

describe('request translation', () => {
  it('system and developer messages become `system`; headers carry the key and version', async () => {
    const r = await chat({ messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'developer', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }], temperature: 0.5, top_p: 0.9, stop: 'END', user: 'u-42' });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().url).toBe('/v1/messages');
    expect(sent().headers['x-api-key']).toBe(SECRET);
    expect(sent().headers['anthropic-version']).toBe('2023-06-01');
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

  it('multi-turn with tool calls and results: tool_use and tool_result blocks, turns merged', async () => {
    anthropic.setHandler(() => replay(f('messages-parallel-tool-results-followup')));
    await chat({
      max_completion_tokens: 1000,
      messages: [
        { role: 'user', content: 'Use the test_tool with count 1, then use it again with count 2' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'test_tool', arguments: '{"count":1}' } }, { id: 'toolu_2', type: 'function', function: { name: 'test_tool', arguments: '{"count":2}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'one' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'two' },
        { role: 'user', content: 'Now summarise.' },
      ],
      tools: [{ type: 'function', function: { name: 'test_tool', description: 'A test tool', parameters: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
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
    await chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this vegetable?' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${image}` } }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] });
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
      [{ type: 'function', function: { name: 'f' } }, { type: 'tool', name: 'f' }],
    ] as const) {
      await chat({ tools, tool_choice: choice as never });
      expect(sent().body.tool_choice).toEqual(expected);
    }
  });

  it('a parameter Anthropic cannot honour is a 400 naming it, or dropped when the alias allows', async () => {
    const err = await failureOf(chat({ seed: 7 }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('seed');
    expect(anthropic.requests).toHaveLength(0);
    const format = await failureOf(chat({ response_format: { type: 'json_object' } }));
    expect(format.param).toBe('response_format');

    const r = await chat({ seed: 7, frequency_penalty: 0.5 }, 'lenient');
    expect(r.choices[0].message.content).toContain('Paris');
    expect(sent().body).not.toHaveProperty('seed');
    expect(t.logs.some((l) => l.msg === "dropped unsupported parameter 'seed'")).toBe(true);
  });
});

describe('answers', () => {
  it('maps tool use, stop reasons and cache usage', async () => {
    anthropic.setHandler(() => replay(f('messages-parallel-tool-use')));
    const tools = await chat({});
    expectValid('CreateChatCompletionResponse', tools);
    expect(tools.choices[0].finish_reason).toBe('tool_calls');
    expect(tools.choices[0].message.tool_calls!.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"count":1}', '{"count":2}']);

    anthropic.setHandler(() => replay(f('messages-usage-cache-read')));
    const cached = await chat({});
    expect(cached.model).toBe('claude-sonnet-4-5-20250929');
    expect(cached.usage).toMatchObject({ prompt_tokens: 3 + 1111 + 418, completion_tokens: 33, total_tokens: 1532 + 33, prompt_tokens_details: { cached_tokens: 1111 } });
  });

  it('streams extended thinking as reasoning_content deltas, text as content', async () => {
    anthropic.setHandler(() => replay(f('stream-thinking')));
    const stream = await t.client().chat.completions.create({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'How do I cross the street?' }], thinking: { type: 'enabled', budget_tokens: 1024 } } as never);
    let reasoning = '';
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
    }
    expect(sent().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(reasoning).toContain('pedestrian safety');
    expect(text.length).toBeGreaterThan(20);
  });

  it('a stream cut by max_tokens mid tool input finishes with length', async () => {
    anthropic.setHandler(() => replay(f('stream-max-tokens-partial-tool-input')));
    const stream = await t.client().chat.completions.create({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const finishes: string[] = [];
    for await (const chunk of stream) for (const c of chunk.choices) if (c.finish_reason) finishes.push(c.finish_reason);
    expect(finishes).toEqual(['length']);
  });
});

describe('errors', () => {
  const streamBody = (chunks: Array<string | Buffer>, extra = {}) => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, chunks, ...extra });
  const post = (model = 'claude') =>
    fetch(`${t.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'x' }] }) });

  it('an error event before any chunk is a proper HTTP error (overloaded → 503)', async () => {
    anthropic.setHandler(() => replay(f('stream-error-overloaded')));
    const res = await post();
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string } };
    expectValid('ErrorResponse', body);
    expect(body.error.message).toBe('claude: Overloaded (claude code: overloaded_error)');
  });

  it('an error event after the first chunk is an in-stream error, then [DONE]', async () => {
    const basic = splitStream(f('stream-basic'));
    anthropic.setHandler(() => streamBody([basic[0], basic[1], ...splitStream(f('stream-error-overloaded'))]));
    const res = await post();
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(JSON.parse(events.at(-2)!.slice(6)).error).toMatchObject({ code: 'provider_unavailable', message: 'claude: Overloaded (claude code: overloaded_error)' });
    expect(events.at(-1)).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ streamError: true, error: 'provider_unavailable' });
  });

  it('a truncated stream (no message_stop) and a malformed body are provider faults', async () => {
    const basic = splitStream(f('stream-basic'));
    anthropic.setHandler(() => streamBody(basic.slice(0, 4)));
    const events = (await (await post()).text()).split('\n\n').filter(Boolean);
    expect(JSON.parse(events.at(-2)!.slice(6)).error).toMatchObject({ code: 'upstream_error' });
    expect(events.at(-2)).toContain('the stream ended before message_stop');
    anthropic.setHandler(() => ({ status: 200, body: '{"content": "not a list"}' }));
    const err = await failureOf(chat({}));
    expect(err.status).toBe(502);
  });

  it('x-should-retry is honoured both ways', async () => {
    const answer = (retry: string) => ({ status: 500, headers: { 'content-type': 'application/json', 'x-should-retry': retry }, body: { type: 'error', error: { type: 'api_error', message: 'nope' } } });
    anthropic.setHandler(() => answer('false'));
    await failureOf(chat({}, 'patient'));
    expect(anthropic.requests).toHaveLength(1);
    anthropic.reset();
    anthropic.setHandler(() => answer('true'));
    await failureOf(chat({}, 'patient'));
    expect(anthropic.requests).toHaveLength(3);
  });
});

describe('fallback across providers', () => {
  it('an OpenAI target failing over to Anthropic: each attempt is translated for its provider', async () => {
    const { data, response } = await chat({ messages: [{ role: 'system', content: 'Be helpful.' }, { role: 'user', content: 'What is the capital of France?' }] }, 'mixed').withResponse();
    expectValid('CreateChatCompletionResponse', data);
    expect(openai.requests[0].body).toMatchObject({ model: 'gpt-4o', messages: [{ role: 'system', content: 'Be helpful.' }, { role: 'user', content: 'What is the capital of France?' }] });
    expect(sent().body).toMatchObject({ model: 'claude-3-opus-latest', system: 'Be helpful.', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    expect(data.model).toBe('claude-3-opus-20240229');
    expect(response.headers.get('x-switchyard-provider')).toBe('claude');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
  });
});
