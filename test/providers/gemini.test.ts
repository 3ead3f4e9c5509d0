/** The gemini provider end to end: exact native requests, recorded answers and streams, errors. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { loadFixture, replay, splitStream, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { configYaml, DEV_KEY, failureOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { FakeClock } from '../helpers/clock.ts';
import { expectValid } from '../helpers/schema.ts';

const f = (name: string) => loadFixture('gemini', name);
const SECRET = 'gemini-test-key-0123456789';
let gemini: FakeUpstream;
let t: TestGateway;
const clock = new FakeClock(3);

beforeAll(async () => {
  gemini = await startFakeUpstream(() => replay(f('generate-multi-turn')));
  t = await startTestGateway(
    configYaml({
      providers: `  g: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: ${SECRET} }`,
      models: '  flash: { retry: { attempts: 2 }, targets: [{ provider: g, model: gemini-2.0-flash }] }',
    }),
    { clock },
  );
});
afterEach(() => {
  gemini.setHandler(() => replay(f('generate-multi-turn')));
  gemini.reset();
  clock.sleeps.length = 0;
});
afterAll(async () => {
  await t.close();
  await gemini.close();
});

const chat = (body: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {}) =>
  t.client().chat.completions.create({ model: 'flash', messages: [{ role: 'user', content: 'hi' }], ...body } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
const sent = () => gemini.requests.at(-1)!;

async function streamText(body: Record<string, unknown> = {}) {
  const stream = await t.client().chat.completions.create({ model: 'flash', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }], ...body } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
  let text = '';
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) {
    expectValid('CreateChatCompletionStreamResponse', chunk);
    chunks.push(chunk);
    text += chunk.choices[0]?.delta.content ?? '';
  }
  return { text, chunks };
}

describe('request translation', () => {
  it('system → systemInstruction, parameters → generationConfig, the key in x-goog-api-key', async () => {
    await chat({
      messages: [{ role: 'system', content: 'Answer in one word.' }, { role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi!' }, { role: 'user', content: 'How are you?' }],
      temperature: 0.3,
      top_p: 0.8,
      max_tokens: 64,
      stop: ['END'],
      seed: 1,
      n: 2,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'mood', schema: { type: 'object', properties: { mood: { type: 'string' } } } } },
    });
    expect(sent().url).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(sent().headers['x-goog-api-key']).toBe(SECRET);
    expect(sent().body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Hi!' }] },
        { role: 'user', parts: [{ text: 'How are you?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Answer in one word.' }] },
      generationConfig: {
        temperature: 0.3,
        topP: 0.8,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        seed: 1,
        candidateCount: 2,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { mood: { type: 'string' } } },
      },
    });
  });

  it('tools, tool calls and tool results: functionDeclarations, functionCall, functionResponse by name', async () => {
    const recorded = f('generate-function-response-followup').request;
    gemini.setHandler(() => replay(f('generate-function-response-followup')));
    await chat({
      messages: [
        { role: 'user', content: 'Divide 10 by 2 using the customDivide function' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":10}' } }] },
        { role: 'tool', tool_call_id: 'call_a', content: '{"output": 42}' },
      ],
      tools: [{ type: 'function', function: { name: 'customDivide', description: 'Custom divide function', parameters: { properties: { denominator: { type: 'number' }, numerator: { type: 'number' } }, type: 'object' } } }],
      tool_choice: 'auto',
    });
    const { generationConfig: _empty, ...expected } = recorded;
    expect(sent().body).toEqual(expected);
  });

  it('named tool_choice, plain-text tool results and images', async () => {
    const image = f('image-input-base64').request.contents[0].parts.find((p: { inlineData?: unknown }) => p.inlineData).inlineData;
    await chat({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What fruit?' }, { type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } }, { type: 'image_url', image_url: { url: 'https://example.com/k.png' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'a kiwi' },
      ],
      tools: [{ type: 'function', function: { name: 'look' } }],
      tool_choice: { type: 'function', function: { name: 'look' } },
    });
    expect(sent().body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What fruit?' }, { inlineData: { mimeType: image.mimeType, data: image.data } }, { fileData: { fileUri: 'https://example.com/k.png' } }] },
      { role: 'model', parts: [{ functionCall: { name: 'look', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'look', response: { result: 'a kiwi' } } }] },
    ]);
    expect(sent().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['look'] } });
    expect(sent().body.tools).toEqual([{ functionDeclarations: [{ name: 'look' }] }]);
  });

  it('logprobs cannot be honoured: 400 naming it', async () => {
    const err = await failureOf(chat({ logprobs: true }));
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('logprobs');
  });
});

describe('answers and streams', () => {
  it('thinking parts and tokens: reasoning_content and reasoning_tokens', async () => {
    gemini.setHandler(() => replay(f('generate-system-instruction')));
    const r = await chat();
    expectValid('CreateChatCompletionResponse', r);
    expect(r.model).toBe('gemini-2.5-flash');
    expect(r.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 21, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 20 } });
    gemini.setHandler(() => replay(f('generate-thinking-thought-part')));
    const thought = await chat();
    expectValid('CreateChatCompletionResponse', thought);
  });

  it('MAX_TOKENS → length, function calls with generated ids', async () => {
    gemini.setHandler(() => replay(f('generate-basic-max-tokens')));
    expect((await chat()).choices[0].finish_reason).toBe('length');
    gemini.setHandler(() => replay(f('generate-function-call-thought-signature')));
    const call = await chat();
    expectValid('CreateChatCompletionResponse', call);
    expect(call.choices[0].finish_reason).toBe('tool_calls');
    expect(call.choices[0].message.tool_calls![0].id).toMatch(/^call_/);
  });

  it('a prompt blocked for safety is an empty content_filter answer', async () => {
    gemini.setHandler(() => ({ body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, modelVersion: 'gemini-2.0-flash' } }));
    const r = await chat();
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: '' } });
    gemini.setHandler(() => ({ body: { candidates: [{ content: { parts: [{ text: 'partial' }], role: 'model' }, finishReason: 'SAFETY' }], modelVersion: 'gemini-2.0-flash' } }));
    expect((await chat()).choices[0].finish_reason).toBe('content_filter');
  });

  it('streams the byte-exact CRLF capture, with the last cumulative usage', async () => {
    gemini.setHandler(() => replay(f('stream-wire-exact')));
    const { text, chunks } = await streamText();
    expect(sent().url).toBe('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    expect(text.length).toBeGreaterThan(10);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
    const usage = chunks.at(-1)!.usage!;
    const lastRecorded = splitStream(f('stream-wire-exact')).map((b) => JSON.parse(b.toString().slice(6))).at(-1).usageMetadata;
    expect(usage.prompt_tokens).toBe(lastRecorded.promptTokenCount);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('Vertex chunks (createTime, no index, usage only at the end) stream the same', async () => {
    gemini.setHandler(() => replay(f('vertex-stream-basic')));
    const { text, chunks } = await streamText();
    expect(text).toContain('Rayleigh scattering');
    expect(chunks.at(-1)!.usage!.prompt_tokens).toBeGreaterThan(0);
  });
});

describe('errors', () => {
  it('a 404 on the streaming endpoint, JSON despite text/event-stream, is upstream_model_not_found', async () => {
    gemini.setHandler(() => replay(f('error-404-model-not-found-on-stream')));
    const res = await fetch(`${t.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flash', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_model_not_found');
    expect(body.error.message).toContain('g: models/custom-gemini-2.0-flash is not found');
  });

  it('RetryInfo in a 429 body sets the wait', async () => {
    gemini.setHandler((_r, i) => (i === 0 ? { status: 429, body: { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }] } } } : replay(f('generate-multi-turn'))));
    await chat();
    expect(clock.sleeps).toEqual([3000]);
  });

  it('a truncated stream and a malformed body are provider faults', async () => {
    const chunks = splitStream(f('stream-basic'));
    gemini.setHandler(() => ({ status: 200, chunks: chunks.slice(0, 2) }));
    const res = await fetch(`${t.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flash', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-2)).toContain('the stream ended before a finishReason');
    expect(events.at(-1)).toBe('data: [DONE]');
    gemini.setHandler(() => ({ status: 200, body: '{"candidates": ' }));
    expect((await failureOf(chat())).status).toBe(502);
  });
});
