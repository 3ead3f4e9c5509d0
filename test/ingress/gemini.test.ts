/**
 * The Gemini API way in, driven by the real Google GenAI SDK (`@google/genai`, what Gemini CLI
 * uses) pointed at the gateway: generateContent, generateContentStream, countTokens,
 * embedContent, a function-calling round trip and errors, served by an OpenAI-compatible fake
 * upstream (translation) and by a gemini fake upstream replaying recorded Gemini answers (the
 * native pass-through).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, type Content } from '@google/genai';
import {
  DEV_KEY,
  loadFixture,
  logLineFor,
  replay,
  startFakeUpstream,
  startTestGateway,
  type FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

let t: TestGateway;
let chat: FakeUpstream;
let gemini: FakeUpstream;
const NARROW = 'sk-narrow-0123456789';
/** The SDK as an application builds it (3.x: apiVersion v1); `v1beta` is what Gemini CLI's SDK (1.x) calls. */
const sdk = (apiKey = DEV_KEY, apiVersion?: 'v1beta') => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: t.url, apiVersion, retryOptions: { attempts: 1 } } });
const WRITE_FILE = {
  name: 'write_file',
  description: 'Writes a file',
  parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
};

/** An OpenAI-compatible upstream playing a model: a tool call when offered tools, text after a tool result. */
function playModel(req: RecordedRequest): ScriptedResponse {
  if (req.url.endsWith('/embeddings')) {
    const input: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
    return {
      body: {
        object: 'list',
        model: 'text-embedding-3-small',
        data: input.map((_, index) => ({ object: 'embedding', index, embedding: [index, 0.5, -0.25] })),
        usage: { prompt_tokens: 7, total_tokens: 7 },
      },
    };
  }
  const last = req.body.messages.at(-1);
  const wantsTool = req.body.tools?.length && last.role !== 'tool';
  const message = wantsTool
    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_up_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"hello.txt","content":"hi"}' } }] }
    : { role: 'assistant', content: last.role === 'tool' ? 'The file is written.' : 'Hello from the chat upstream.', reasoning_content: 'Thinking it over.' };
  const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 3 } };
  const finish = wantsTool ? 'tool_calls' : 'stop';
  if (!req.body.stream) return { body: { id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'gpt-4o-2024', choices: [{ index: 0, message, finish_reason: finish }], usage } };
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-2024',
    choices: [{ index: 0, delta, finish_reason }],
  });
  const deltas = wantsTool
    ? [
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_up_1', type: 'function', function: { name: 'write_file', arguments: '{"path":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"hello.txt","content":"hi"}' } }] }),
      ]
    : [chunk({ role: 'assistant', content: 'Hello from ' }), chunk({ content: 'the chat upstream.' })];
  const events = [...deltas, chunk({}, finish), { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-2024', choices: [], usage }];
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'] };
}

beforeAll(async () => {
  chat = await startFakeUpstream(playModel);
  gemini = await startFakeUpstream(() => replay(loadFixture(fixturesOf('gemini'), 'generate-function-call-thought-signature')));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: narrow, key: ${NARROW}, models: [gpt] }
providers:
  oai: { plugin: openai, baseUrl: "${chat.url}/v1", apiKey: test-openai-key }
  goog: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: test-gemini-key, safetySettings: [{ category: HARM_CATEGORY_HARASSMENT, threshold: BLOCK_ONLY_HIGH }] }
models:
  gpt: { targets: [{ provider: oai, model: gpt-4o }] }
  flash: { targets: [{ provider: goog, model: gemini-2.5-flash }] }
  embed: { targets: [{ provider: oai, model: text-embedding-3-small }] }
  both: { targets: [{ provider: goog, model: gemini-2.5-flash }, { provider: oai, model: gpt-4o }] }
`);
});
afterEach(() => {
  chat.restore();
  gemini.restore();
});
afterAll(async () => {
  await t?.close();
  await chat?.close();
  await gemini?.close();
});

describe('translated to an OpenAI-compatible upstream', () => {
  it('generateContent: text, thoughts, usage in Gemini terms, the model that answered; a log line with ingress gemini', async () => {
    const r = await sdk().models.generateContent({
      model: 'gpt',
      contents: 'Say hello',
      config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 50, stopSequences: ['END'], thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 }, safetySettings: [] },
    });
    expect(r.text).toBe('Hello from the chat upstream.');
    expect(r.candidates?.[0].content?.parts?.[0]).toEqual({ text: 'Thinking it over.', thought: true });
    expect(r.candidates?.[0].finishReason).toBe('STOP');
    expect(r.modelVersion).toBe('gpt-4o-2024');
    expect(r.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 6, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 21 });
    const sent = chat.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'gpt-4o', temperature: 0.2, max_completion_tokens: 50, stop: ['END'], reasoning_effort: 'low' });
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    const id = r.sdkHttpResponse?.headers?.['x-request-id'];
    expect(id).toBeTruthy();
    const line = await logLineFor(t, id!);
    expect(line).toMatchObject({ ingress: 'gemini', model: 'gpt', provider: 'oai', status: 200, key: 'dev' });
  });

  it('generateContentStream: SSE events the SDK assembles, finishReason and usage on the last (under /v1beta, as Gemini CLI calls it)', async () => {
    const events = [];
    for await (const e of await sdk(DEV_KEY, 'v1beta').models.generateContentStream({ model: 'gpt', contents: 'Say hello' })) events.push(e);
    expect(events.map((e) => e.text ?? '').join('')).toBe('Hello from the chat upstream.');
    const last = events.at(-1)!;
    expect(last.candidates?.[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: 12, totalTokenCount: 21 });
    expect(chat.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('streamGenerateContent without alt=sse is one JSON array, written as it comes', async () => {
    const res = await fetch(`${t.url}/v1beta/models/gpt:streamGenerateContent?key=${DEV_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const items = (await res.json()) as Array<{ candidates?: Array<{ content: { parts: Array<{ text?: string }> } }> }>;
    expect(items.flatMap((i) => i.candidates?.[0]?.content.parts.map((p) => p.text ?? '') ?? []).join('')).toBe('Hello from the chat upstream.');
  });

  it('a function-calling round trip: the call with its id, then the response answering it', async () => {
    const tools = [{ functionDeclarations: [WRITE_FILE] }, { googleSearch: {} }];
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Write hello.txt' }] }];
    const first = await sdk().models.generateContent({ model: 'gpt', contents, config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } } } });
    const call = first.functionCalls?.[0];
    // A chat server runs no search of its own: dropped, and said so.
    expect(first.sdkHttpResponse?.headers?.['x-switchyard-dropped']).toBe('tools[1] (googleSearch)');
    expect(call).toEqual({ id: 'call_up_1', name: 'write_file', args: { path: 'hello.txt', content: 'hi' } });
    expect(first.candidates?.[0].finishReason).toBe('STOP');
    const up = chat.requests.at(-1)!.body;
    expect(up.tools).toEqual([{ type: 'function', function: { name: 'write_file', description: 'Writes a file', parameters: WRITE_FILE.parametersJsonSchema } }]);
    expect(up.tool_choice).toBe('required');
    contents.push(first.candidates![0].content!, { role: 'user', parts: [{ functionResponse: { id: call!.id, name: 'write_file', response: { output: 'ok' } } }] });
    const second = await sdk().models.generateContent({ model: 'gpt', contents, config: { tools } });
    expect(second.text).toBe('The file is written.');
    expect(chat.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_up_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"hello.txt","content":"hi"}' } }] },
      { role: 'tool', tool_call_id: 'call_up_1', content: '{"output":"ok"}' },
    ]);
  });

  it('a streamed function call arrives whole, in one part', async () => {
    const parts = [];
    for await (const e of await sdk().models.generateContentStream({ model: 'gpt', contents: 'Write hello.txt', config: { tools: [{ functionDeclarations: [WRITE_FILE] }] } }))
      parts.push(...(e.candidates?.[0]?.content?.parts ?? []));
    expect(parts.filter((p) => p.functionCall)).toEqual([{ functionCall: { id: 'call_up_1', name: 'write_file', args: { path: 'hello.txt', content: 'hi' } } }]);
  });

  it('countTokens estimates the translated request', async () => {
    const r = await sdk().models.countTokens({ model: 'gpt', contents: 'How many tokens is this sentence?' });
    expect(r.totalTokens).toBeGreaterThan(0);
  });

  it('embedContent: one vector per text, through the embeddings pipeline', async () => {
    const r = await sdk().models.embedContent({ model: 'embed', contents: ['one', 'two'], config: { outputDimensionality: 3 } });
    expect(r.embeddings).toEqual([{ values: [0, 0.5, -0.25] }, { values: [1, 0.5, -0.25] }]);
    expect(chat.requests.at(-1)!.body).toMatchObject({ model: 'text-embedding-3-small', input: ['one', 'two'], dimensions: 3 });
    const res = await fetch(`${t.url}/v1beta/models/embed:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'one' }] } }),
    });
    expect(await res.json()).toEqual({ embedding: { values: [0, 0.5, -0.25] } });
  });
});

describe('passed through to a gemini upstream', () => {
  it('the client body goes up as sent (model in the path), the answer comes back as Gemini sent it', async () => {
    const r = await sdk().models.generateContent({
      model: 'flash',
      contents: [{ role: 'user', parts: [{ text: 'put word: hello and word: world into a string' }] }],
      config: { tools: [{ functionDeclarations: [{ name: 'concatStringFunction', parametersJsonSchema: { type: 'object' } }] }, { googleSearch: {} }], safetySettings: [] },
    });
    const sent = gemini.requests.at(-1)!;
    expect(sent.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('test-gemini-key');
    expect(sent.body.tools[1]).toEqual({ googleSearch: {} });
    expect(r.candidates?.[0].content?.parts?.[0].thoughtSignature).toMatch(/^CpUCAdHt/);
    expect(r.functionCalls?.[0]).toMatchObject({ name: 'concatStringFunction', args: { firstString: 'hello', secondString: 'world' } });
    expect(r.usageMetadata?.thoughtsTokenCount).toBe(59);
    const line = await logLineFor(t, r.sdkHttpResponse!.headers!['x-request-id']);
    expect(line).toMatchObject({ ingress: 'gemini', provider: 'goog', status: 200 });
    // Passed through: nothing was dropped.
    expect(r.sdkHttpResponse?.headers?.['x-switchyard-dropped']).toBeUndefined();
    expect(line.dropped).toBeUndefined();
    expect(line).toMatchObject({ promptTokens: 65, completionTokens: 81, totalTokens: 146 });
  });

  it('a stream passes through event by event, thoughtSignature and all', async () => {
    gemini.setHandler(() => replay(loadFixture(fixturesOf('gemini'), 'stream-basic')));
    let text = '';
    let id: string | undefined;
    for await (const e of await sdk().models.generateContentStream({ model: 'flash', contents: 'Why is the sky blue?' })) {
      text += e.text ?? '';
      id ??= e.sdkHttpResponse?.headers?.['x-request-id'];
    }
    expect(gemini.requests.at(-1)!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    // The client sent no safetySettings: the provider's own apply (a client's, below, win).
    expect(gemini.requests.at(-1)!.body.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }]);
    expect(text).toContain('Rayleigh scattering');
    // Usage from the last usageMetadata (the prompt count changes mid-stream: 7, then 6).
    expect(await logLineFor(t, id!)).toMatchObject({ ingress: 'gemini', provider: 'goog', status: 200, promptTokens: 6, completionTokens: 377, totalTokens: 383 });
  });
});

describe('drops and failover', () => {
  const body = { contents: [{ parts: [{ text: 'hi' }] }], safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }] };
  const post = (model: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
    fetch(`${t.url}/v1beta/models/${model}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ ...body, ...extra }),
    });

  it('what a translated attempt leaves out is in x-switchyard-dropped, the log line and the counter; strict refuses it as INVALID_ARGUMENT', async () => {
    const res = await post('gpt');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-dropped')).toBe('safetySettings');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line.dropped).toEqual(['safetySettings']);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_dropped_fields_total\{ingress="gemini",field="safetySettings"\} [1-9]/);
    const strict = await post('gpt', { 'x-switchyard-strict': 'true' });
    expect(strict.status).toBe(400);
    expect(await strict.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: expect.stringContaining("'safetySettings'") } });
  });

  it('a context cache would change the question: a translated target refuses it, a gemini target keeps it (strict or not)', async () => {
    const cached = await post('gpt', {}, { cachedContent: 'cachedContents/x' });
    expect(cached.status).toBe(400);
    expect(await cached.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: expect.stringContaining("'cachedContent'") } });
    const native = await post('flash', { 'x-switchyard-strict': 'true' }, { cachedContent: 'cachedContents/x' });
    expect(native.status).toBe(200);
    expect(native.headers.get('x-switchyard-dropped')).toBeNull();
    expect(gemini.requests.at(-1)!.body).toMatchObject({ safetySettings: body.safetySettings, cachedContent: 'cachedContents/x' });
  });

  it('a failing gemini target falls back to a chat target: the answer is translated, and says what it dropped', async () => {
    gemini.setHandler(() => ({ status: 503, body: { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } } }));
    const res = await post('both');
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { candidates: Array<{ content: { parts: unknown[] } }> };
    expect(answer.candidates[0].content.parts).toEqual([{ text: 'Hello from the chat upstream.' }]);
    expect(res.headers.get('x-switchyard-provider')).toBe('oai');
    expect(res.headers.get('x-switchyard-dropped')).toBe('safetySettings');
    expect(gemini.requests.length).toBeGreaterThan(0);
  });
});

describe("keys and errors in Google's envelope", () => {
  it('a key as ?key= or a bearer token works too', async () => {
    const body = JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] });
    const viaQuery = await fetch(`${t.url}/v1beta/models/gpt:generateContent?key=${DEV_KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(viaQuery.status).toBe(200);
    const viaBearer = await fetch(`${t.url}/v1/models/gpt:generateContent`, { method: 'POST', headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' }, body });
    expect(viaBearer.status).toBe(200);
    expect(t.logText()).not.toContain(DEV_KEY);
  });

  it('a bad key is 401 UNAUTHENTICATED, a model the key may not use 403 PERMISSION_DENIED, with the request id', async () => {
    const bad = await sdk('sk-wrong-0123456789')
      .models.generateContent({ model: 'gpt', contents: 'hi' })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect((bad as ApiError).status).toBe(401);
    const envelope = JSON.parse((bad as ApiError).message);
    expect(envelope.error).toMatchObject({
      code: 401,
      status: 'UNAUTHENTICATED',
      details: expect.arrayContaining([expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: expect.any(String) })]),
    });
    const denied = await sdk(NARROW)
      .models.generateContent({ model: 'flash', contents: 'hi' })
      .catch((e: unknown) => e);
    expect((denied as ApiError).status).toBe(403);
    expect(JSON.parse((denied as ApiError).message).error.status).toBe('PERMISSION_DENIED');
    const missing = await sdk()
      .models.generateContent({ model: 'nope', contents: 'hi' })
      .catch((e: unknown) => e);
    expect((missing as ApiError).status).toBe(404);
    expect(JSON.parse((missing as ApiError).message).error.status).toBe('NOT_FOUND');
  });

  it('a malformed body is 400 INVALID_ARGUMENT naming the field', async () => {
    const res = await fetch(`${t.url}/v1beta/models/gpt:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: 'nope' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining("'contents'") } });
  });

  it("GET /v1beta/models lists the aliases the key may use, in Gemini's shape", async () => {
    const names = [];
    for await (const m of await sdk(NARROW).models.list()) names.push(m.name);
    expect(names).toEqual(['models/gpt']);
    const one = await sdk().models.get({ model: 'flash' });
    expect(one).toMatchObject({ name: 'models/flash', supportedActions: expect.arrayContaining(['generateContent', 'countTokens']) });
    // Gemini CLI's SDK (1.x) asks under /v1beta; OpenAI clients still get OpenAI's list at /v1/models.
    const beta = await fetch(`${t.url}/v1beta/models?key=${NARROW}`);
    expect(await beta.json()).toMatchObject({ models: [{ name: 'models/gpt' }] });
    const openai = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${NARROW}` } });
    expect(await openai.json()).toMatchObject({ object: 'list', data: [{ id: 'gpt' }] });
  });

  it('an unknown method is a 404, logged as an unknown route', async () => {
    const res = await fetch(`${t.url}/v1beta/models/gpt:predictLongRunning`, { method: 'POST', headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    expect(t.logs.some((l) => l.msg === 'unknown route' && l.path === '/v1beta/models/gpt:predictLongRunning' && l.key === 'dev')).toBe(true);
  });
});
