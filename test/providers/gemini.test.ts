/** The gemini provider end to end: exact native requests, recorded answers and streams, errors. */
import { afterEach, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import {
  chatRequests,
  DEV_KEY,
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
  type RequestFields,
} from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('gemini'), name);
const SECRET = 'gemini-test-key-0123456789';
const clock = new FakeClock(3);
const gemini = fakeUpstream(() => replay(f('generate-multi-turn')));
const t = useTestGateway(
  () =>
    configYaml({
      providers: [
        `  g: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: ${SECRET} }`,
        `  alt: { plugin: gemini, baseUrl: "${gemini.url}/proxy/", apiKey: ${SECRET}, apiVersion: v1alpha, headers: { x-goog-user-project: my-project }, safetySettings: [{ category: HARM_CATEGORY_HARASSMENT, threshold: BLOCK_ONLY_HIGH }] }`,
      ].join('\n'),
      models: [
        '  flash: { retry: { attempts: 2 }, targets: [{ provider: g, model: gemini-2.0-flash }] }',
        '  once: { retry: { attempts: 1 }, targets: [{ provider: g, model: gemini-2.0-flash }] }',
        '  three: { retry: { attempts: 1 }, targets: [{ provider: g, model: gemini-3-flash-preview }] }',
        '  lenient: { retry: { attempts: 1 }, dropUnsupportedParams: true, targets: [{ provider: g, model: gemini-2.0-flash }] }',
        '  alt: { retry: { attempts: 1 }, targets: [{ provider: alt, model: models/gemini-2.5-flash }] }',
      ].join('\n'),
    }),
  { upstreams: [gemini], clock },
);
afterEach(() => {
  clock.sleeps.length = 0;
});

const { chat, streamed, post } = chatRequests(t, { model: 'flash' });
/** A completion, checked against the OpenAI schema. */
async function valid(body: RequestFields<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {}, model = 'flash') {
  const r = await chat(body, model);
  expectValid('CreateChatCompletionResponse', r);
  return r;
}
const sent = () => gemini.requests.at(-1)!;
const sse = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;
/** A recorded request body without the empty `generationConfig` Google's SDKs always send. */
// biome-ignore lint/suspicious/noExplicitAny: a recorded JSON body, whose fields the tests read as they find them
function recorded(name: string): Record<string, any> {
  const { generationConfig, ...rest } = f(name).request;
  return Object.keys(generationConfig ?? {}).length ? { ...rest, generationConfig } : rest;
}

describe('the upstream request', () => {
  it('POST /v1beta/models/{model}:generateContent with x-goog-api-key; the recorded multi-turn body', async () => {
    const fixture = recorded('generate-multi-turn');
    const [first, answer, second] = fixture.contents.map((c: { parts: Array<{ text: string }> }) => c.parts[0].text);
    await valid({
      messages: [
        { role: 'user', content: first },
        { role: 'assistant', content: answer },
        { role: 'user', content: second },
      ],
    });
    const req = sent();
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(req.headers['x-goog-api-key']).toBe(SECRET);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.raw).not.toContain(DEV_KEY);
    expect(req.body).toEqual(fixture);
  });

  it('streams use :streamGenerateContent?alt=sse and accept text/event-stream; the recorded body', async () => {
    gemini.setHandler(() => replay(f('stream-wire-exact')));
    await streamed({
      temperature: 0,
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
    });
    expect(sent().url).toBe('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    expect(sent().headers.accept).toBe('text/event-stream');
    expect(sent().body).toEqual(recorded('stream-wire-exact'));
  });

  it('provider options: a base URL with a path, the API version, extra headers and safetySettings', async () => {
    await valid({}, 'alt');
    expect(sent().url).toBe('/proxy/v1alpha/models/gemini-2.5-flash:generateContent');
    expect(sent().headers['x-goog-user-project']).toBe('my-project');
    expect(sent().body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] });
  });

  it('parameters → generationConfig, JSON schema output', async () => {
    await valid({
      temperature: 0.3,
      top_p: 0.8,
      max_tokens: 64,
      stop: ['END'],
      seed: 1,
      n: 2,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      logprobs: true,
      top_logprobs: 2,
      user: 'u-1',
      response_format: { type: 'json_schema', json_schema: { name: 'mood', schema: { type: 'object', properties: { mood: { type: 'string' } } } } },
    });
    expect(sent().body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: {
        temperature: 0.3,
        topP: 0.8,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        seed: 1,
        candidateCount: 2,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseLogprobs: true,
        logprobs: 2,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { mood: { type: 'string' } } },
      },
    });
  });

  it('images: a data URL → inlineData, an https URL → fileData', async () => {
    const { mimeType, data } = f('image-input-base64').request.contents[0].parts[1].inlineData;
    await valid({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What fruit?' },
            { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/k.png' } },
          ],
        },
      ],
    });
    expect(sent().body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What fruit?' }, { inlineData: { mimeType, data } }, { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/k.png' } }] },
    ]);
  });

  it('a tool round trip with the SDK: the call, then its result and the thought signature sent back', async () => {
    const fixture = f('generate-function-call-thought-signature');
    const declaration = fixture.request.tools[0].functionDeclarations[0];
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema } }];
    const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'put word: hello and word: world into a string' };
    gemini.setHandler(() => replay(fixture));
    const first = await valid({ messages: [question], tools, tool_choice: { type: 'function', function: { name: declaration.name } } }, 'three');
    expect(sent().url).toBe('/v1beta/models/gemini-3-flash-preview:generateContent');
    expect(sent().body).toEqual(recorded('generate-function-call-thought-signature'));
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(JSON.parse(call.function.arguments)).toEqual({ firstString: 'hello', secondString: 'world' });

    gemini.setHandler(() => replay(f('generate-function-response-followup')));
    await valid({ messages: [question, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'hello world' }], tools }, 'three');
    const signature = fixture.json.candidates[0].content.parts[0].thoughtSignature;
    expect(sent().body.contents).toEqual([
      { role: 'user', parts: [{ text: 'put word: hello and word: world into a string' }] },
      { role: 'model', parts: [{ functionCall: { name: 'concatStringFunction', args: { firstString: 'hello', secondString: 'world' } }, thoughtSignature: signature }] },
      { role: 'user', parts: [{ functionResponse: { name: 'concatStringFunction', response: { output: 'hello world' } } }] },
    ]);
  });

  it('logit_bias cannot be honoured: 400 naming it, or dropped (and logged) with dropUnsupportedParams', async () => {
    const err = await failureOf(chat({ logit_bias: { '50256': -100 } }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('logit_bias');
    expect(gemini.requests).toHaveLength(0);
    await valid({ logit_bias: { '50256': -100 } }, 'lenient');
    expect(sent().body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(t.logs.some((l) => l.msg === "dropped unsupported parameter 'logit_bias'")).toBe(true);
  });
});

describe('answers', () => {
  const answers = [
    'generate-basic-max-tokens',
    'generate-function-call',
    'generate-function-call-thought-signature',
    'generate-function-response-followup',
    'generate-multi-turn',
    'generate-system-instruction',
    'generate-thinking-thought-part',
    'image-input-base64',
  ];

  it('every recorded answer: valid, id and model from the answer, usage adding up to totalTokenCount', async () => {
    for (const name of answers) {
      const fixture = f(name);
      gemini.setHandler(() => replay(fixture));
      const r = await valid();
      expect(r.id, name).toBe(`chatcmpl-${fixture.json.responseId}`);
      expect(r.model, name).toBe(fixture.json.modelVersion);
      expect(r.usage!.total_tokens, name).toBe(fixture.json.usageMetadata.totalTokenCount);
    }
  });

  it('thinking: thought summaries as reasoning_content, thinking tokens as reasoning_tokens (also in the log line)', async () => {
    gemini.setHandler(() => replay(f('generate-thinking-thought-part')));
    const { data: r, response } = await chat().withResponse();
    expectValid('CreateChatCompletionResponse', r);
    const message = r.choices[0].message as OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string };
    expect(message.content).toBe('');
    expect(message.reasoning_content).toContain('Breaking Down the Sum of Natural Numbers');
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage).toEqual({
      prompt_tokens: 17,
      completion_tokens: 19,
      total_tokens: 36,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 19 },
      cost: expect.any(Number),
    });
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'flash', upstreamModel: 'gemini-2.0-flash-thinking-exp-01-21', promptTokens: 17, completionTokens: 19, totalTokens: 36 });
  });

  it('safety: a blocked prompt is an empty content_filter answer, a SAFETY stop is content_filter', async () => {
    gemini.setHandler(() => ({
      body: {
        promptFeedback: { blockReason: 'SAFETY', safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'HIGH' }] },
        usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
        modelVersion: 'gemini-2.0-flash',
        responseId: 'blocked1',
      },
    }));
    const blocked = await valid();
    expect(blocked.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
    expect(blocked.usage!.prompt_tokens).toBe(5);
    gemini.setHandler(() => ({ body: { candidates: [{ content: { parts: [{ text: 'partial' }], role: 'model' }, finishReason: 'SAFETY', safetyRatings: [] }], modelVersion: 'gemini-2.0-flash' } }));
    const stopped = await valid();
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'partial' } });
  });

  it('logprobs and several candidates come back as OpenAI logprobs and choices', async () => {
    const logprobsResult = {
      topCandidates: [
        {
          candidates: [
            { token: 'Yes', logProbability: -0.01 },
            { token: 'No', logProbability: -4.6 },
          ],
        },
      ],
      chosenCandidates: [{ token: 'Yes', logProbability: -0.01 }],
    };
    gemini.setHandler(() => ({
      body: {
        candidates: [
          { index: 0, content: { parts: [{ text: 'Yes' }] }, finishReason: 'STOP', logprobsResult },
          { index: 1, content: { parts: [{ text: 'Sure' }] }, finishReason: 'STOP' },
        ],
        modelVersion: 'gemini-2.0-flash',
      },
    }));
    const r = await valid({ n: 2, logprobs: true, top_logprobs: 2 });
    expect(r.choices.map((c) => c.message.content)).toEqual(['Yes', 'Sure']);
    expect(r.choices[0].logprobs!.content![0]).toEqual({
      token: 'Yes',
      logprob: -0.01,
      bytes: [89, 101, 115],
      top_logprobs: [
        { token: 'Yes', logprob: -0.01, bytes: [89, 101, 115] },
        { token: 'No', logprob: -4.6, bytes: [78, 111] },
      ],
    });
  });
});

describe('streams', () => {
  const wire = () => f('stream-wire-exact');

  it('the byte-exact CRLF capture, whole or cut inside its separators, gives the same chunks', async () => {
    gemini.setHandler(() => streamAnswer([wire().body]));
    const whole = await streamed({ stream_options: { include_usage: true } });
    expect(whole.text).toBe('The capital of France is Paris.\n');
    expect(whole.finishes).toEqual(['stop']);
    expect(whole.chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: 'The' });
    expect(whole.chunks.every((c) => c.id === 'chatcmpl-w1peaMz6INOvnvgPgYfPiQY' && c.model === 'gemini-2.0-flash-exp')).toBe(true);
    expect(whole.chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 } });

    // Cut between every \r and \n: the core's SSE decoder must join CRLF pairs across reads.
    const text = wire().body.toString('utf8');
    const pieces = text.split(/(?<=\r)(?=\n)/);
    expect(pieces.length).toBeGreaterThan(6);
    gemini.setHandler(() => streamAnswer(pieces, { gapMs: 5 }));
    const cut = await streamed({ stream_options: { include_usage: true } });
    expect(cut.chunks.map((c) => [c.choices, c.usage])).toEqual(whole.chunks.map((c) => [c.choices, c.usage]));
  });

  it('usage only when asked: no usage chunk without include_usage, the log line has it anyway', async () => {
    gemini.setHandler(() => replay(wire()));
    const res = await post();
    const events = await readSseEvents(res);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
    for (const c of chunks) expectValid('CreateChatCompletionStreamResponse', c);
    expect(chunks.some((c) => 'usage' in c && c.usage)).toBe(false);
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ upstreamModel: 'gemini-2.0-flash-exp', promptTokens: 13, completionTokens: 8, totalTokens: 21 });
  });

  it('every recorded stream validates, with one finish and a final usage chunk', async () => {
    for (const [name, finish] of [
      ['stream-basic', 'stop'],
      ['stream-system-instruction', 'stop'],
      ['stream-function-call', 'tool_calls'],
      ['vertex-stream-basic', 'stop'],
    ] as const) {
      gemini.setHandler(() => replay(f(name)));
      const { chunks, finishes } = await streamed({ stream_options: { include_usage: true } });
      expect(finishes, name).toEqual([finish]);
      expect(chunks.at(-1)!.choices, name).toEqual([]);
      expect(chunks.at(-1)!.usage!.prompt_tokens, name).toBeGreaterThan(0);
    }
  });

  it('Vertex chunks: no index, createTime, counts only in the last event', async () => {
    gemini.setHandler(() => replay(f('vertex-stream-basic')));
    const { text, chunks } = await streamed({ stream_options: { include_usage: true } });
    expect(text).toMatch(/^The sky appears blue due to a phenomenon called \*\*Rayleigh scattering\*\*/);
    expect(text).toMatch(/reach your eyes directly\.$/);
    expect(chunks.every((c) => c.created === 1761291946 && c.id === 'chatcmpl-qi77aNGcN7PQnvgP3Kaf8Ac')).toBe(true);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 475 + 1214, completion_tokens_details: { reasoning_tokens: 1214 } });
  });

  it('a streamed function call: the SDK assembles a complete call', async () => {
    gemini.setHandler(() => replay(f('stream-function-call')));
    const runner = t.client().chat.completions.stream({
      model: 'flash',
      messages: [{ role: 'user', content: 'what is the result of 100/2' }],
      tools: [{ type: 'function', function: { name: 'customDivide', parameters: { type: 'object' } } }],
    });
    runner.on('chunk', (chunk) => expectValid('CreateChatCompletionStreamResponse', chunk));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    const call = final.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":100}' } });
    expect(call.id).toMatch(/^call_req_[0-9a-f]+_0$/);
  });

  it('a prompt blocked in a stream: one empty content_filter finish', async () => {
    gemini.setHandler(() =>
      streamAnswer([sse({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, modelVersion: 'gemini-2.0-flash', responseId: 'b2' })]),
    );
    const { chunks, finishes, text } = await streamed({ stream_options: { include_usage: true } });
    expect(finishes).toEqual(['content_filter']);
    expect(text).toBe('');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 0 });
  });
});

describe('errors', () => {
  it('a 404 on the streaming endpoint, JSON despite text/event-stream, is 502 upstream_model_not_found', async () => {
    gemini.setHandler(() => replay(f('error-404-model-not-found-on-stream')));
    const res = await post();
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expectValid('ErrorResponse', body);
    expect(body.error.code).toBe('upstream_model_not_found');
    expect(body.error.message).toMatch(/^g: models\/custom-gemini-2\.0-flash is not found for API version v1beta.* \(g code: NOT_FOUND\)$/);
    expect(gemini.requests).toHaveLength(1); // a 404 is not retried
  });

  it("400 API_KEY_INVALID is the gateway credential: 502 upstream_auth_failed, Google's message and the key not echoed", async () => {
    gemini.setHandler(() => replay(f('error-400-api-key-invalid')));
    const err = await failureOf(chat());
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_auth_failed');
    expect(err.message).not.toContain('API key not valid');
    expect(err.message).not.toContain(SECRET);
  });

  it("400 INVALID_ARGUMENT is the client's: 400 upstream_bad_request with Google's message", async () => {
    gemini.setHandler(() => replay(f('vertex-error-400-invalid-argument')));
    const err = await failureOf(chat());
    expect(err.status).toBe(400);
    expect(err.code).toBe('upstream_bad_request');
    expect(err.message).toContain('g: Cannot fetch content from the provided URL');
  });

  it('429 RESOURCE_EXHAUSTED: Retry-After carried over; RetryInfo in the body sets the wait', async () => {
    gemini.setHandler(() => replay(f('error-429-resource-exhausted'), { headers: { 'content-type': 'application/json; charset=UTF-8', 'retry-after': '7' } }));
    const err = await failureOf(chat({}, 'once'));
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.headers?.get('retry-after')).toBe('7');
    expect((err.error as { message: string }).message).toBe('g: Resource has been exhausted (e.g. check quota). (g code: RESOURCE_EXHAUSTED)');

    gemini.reset();
    gemini.setHandler((_r, i) =>
      i === 0
        ? { status: 429, body: { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }] } } }
        : replay(f('generate-multi-turn')),
    );
    await valid();
    expect(clock.sleeps).toEqual([3000]);
  });

  it('500 INTERNAL → 502 upstream_error after a retry; 503 UNAVAILABLE → 503 provider_unavailable', async () => {
    gemini.setHandler(() => ({ status: 500, body: { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } } }));
    const internal = await failureOf(chat());
    expect(internal.status).toBe(502);
    expect(internal.code).toBe('upstream_error');
    expect(gemini.requests).toHaveLength(2);
    gemini.setHandler(() => ({ status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } }));
    const unavailable = await failureOf(chat({}, 'once'));
    expect(unavailable.status).toBe(503);
    expect(unavailable.code).toBe('provider_unavailable');
  });

  it('a malformed JSON body, or JSON without candidates, is a 502', async () => {
    gemini.setHandler(() => ({ status: 200, body: '{"candidates": ' }));
    const cut = await failureOf(chat({}, 'once'));
    expect(cut.status).toBe(502);
    expect(cut.code).toBe('upstream_error');
    gemini.setHandler(() => ({ status: 200, body: { modelVersion: 'gemini-2.0-flash' } }));
    const empty = await failureOf(chat({}, 'once'));
    expect(empty.status).toBe(502);
    expect(empty.message).toContain('the provider sent a malformed answer');
  });

  it('a stream cut after its first chunks: an in-stream upstream_error, then [DONE]', async () => {
    gemini.setHandler(() => streamAnswer(splitStream(f('stream-basic')).slice(0, 2)));
    const res = await post();
    expect(res.status).toBe(200);
    const events = await readSseEvents(res);
    expect(JSON.parse(events[0].slice(6)).choices[0].delta).toEqual({ role: 'assistant', content: 'The' });
    const error = JSON.parse(events.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error.code).toBe('upstream_error');
    expect(error.error.message).toContain('the stream ended before a finishReason');
    expect(events.at(-1)).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ streamError: true, error: 'upstream_error' });
  });

  it('a stream that fails before its first chunk is retried, and is a proper HTTP error when it keeps failing', async () => {
    // An empty 200 stream, then an error event: nothing reached the client, so the core can retry.
    gemini.setHandler((_r, i) => (i === 0 ? streamAnswer([]) : streamAnswer([sse({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })])));
    const res = await post();
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'provider_unavailable', message: 'g: The model is overloaded. (g code: UNAVAILABLE)' });
    expect(gemini.requests).toHaveLength(2);

    gemini.setHandler((_r, i) => (i === 0 ? streamAnswer([]) : replay(f('stream-basic'))));
    const { finishes } = await streamed();
    expect(finishes).toEqual(['stop']);
  });
});
