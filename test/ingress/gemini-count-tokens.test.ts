/**
 * `:countTokens` on the Gemini way in, counted by whoever can count: a gemini target counts the
 * client's own request, passed through (hosted tools, thought signatures and safety settings
 * count as sent) and answered as Gemini answered; a bedrock target counts the translation with
 * CountTokens; an OpenAI-compatible server cannot count, so the gateway estimates.
 * `x-switchyard-token-count` says which. The fakes answer the documented count shapes
 * (https://ai.google.dev/api/tokens, Bedrock's CountTokens).
 */
import { GoogleGenAI } from '@google/genai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, logLineFor, startFakeUpstream, startTestGateway, type FakeUpstream, type RecordedRequest, type ScriptedResponse, type TestGateway } from 'switchyard-gateway/kit/testing';

// biome-ignore lint/suspicious/noExplicitAny: request bodies as the fakes received them
type Body = any;

/** The fake's count: one token per word of text, five per tool; what a real counter does differently does not matter, only that the answer is its own. */
function wordsIn(request: Body): number {
  const text = JSON.stringify(request.contents ?? []).match(/"text":"([^"]*)"/g) ?? [];
  const words = text.reduce((n: number, t: string) => n + t.slice(8, -1).split(/\s+/).filter(Boolean).length, 0);
  return words + 5 * (request.tools?.length ?? 0);
}

/** Gemini's countTokens: `{contents}` or `{generateContentRequest}` (not both), the latter naming its model. */
function geminiCount(req: RecordedRequest): ScriptedResponse {
  const body: Body = req.body;
  if (!req.url.endsWith(':countTokens')) return { status: 404, body: { error: { code: 404, message: 'not here', status: 'NOT_FOUND' } } };
  if (body.contents && body.generateContentRequest)
    return { status: 400, body: { error: { code: 400, message: 'contents and generateContentRequest are mutually exclusive', status: 'INVALID_ARGUMENT' } } };
  const request = body.generateContentRequest ?? body;
  if (body.generateContentRequest && !/^models\//.test(String(request.model))) {
    return { status: 400, body: { error: { code: 400, message: 'generateContentRequest.model is required', status: 'INVALID_ARGUMENT' } } };
  }
  const total = wordsIn(request);
  return { status: 200, body: { totalTokens: total, cachedContentTokenCount: 0, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] } };
}

/** Bedrock's CountTokens: the Converse fields under `input.converse`, answered `{inputTokens}`. */
function bedrockCount(req: RecordedRequest): ScriptedResponse {
  if (!req.url.endsWith('/count-tokens') || !req.body?.input?.converse) return { status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message: `unexpected ${req.url}` } };
  return { status: 200, body: { inputTokens: 31 } };
}

let gemini: FakeUpstream;
let bedrock: FakeUpstream;
let chat: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  [gemini, bedrock, chat] = await Promise.all([startFakeUpstream(geminiCount), startFakeUpstream(bedrockCount), startFakeUpstream(() => ({ status: 500, body: {} }))]);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  gemini: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: upstream-gemini-key }
  bedrock: { plugin: bedrock, region: us-east-1, endpoint: "${bedrock.url}", auth: { type: aws-keys, accessKeyId: AKIDCOUNT000001, secretAccessKey: count-secret-0123456789 } }
  local: { plugin: openai, baseUrl: "${chat.url}/v1" }
models:
  flash: { targets: [{ provider: gemini, model: gemini-2.5-flash }] }
  nova: { targets: [{ provider: bedrock, model: "us.amazon.nova-micro-v1:0" }] }
  llama: { targets: [{ provider: local, model: llama-3.1-8b }] }
`);
});
afterEach(() => {
  gemini.reset();
  bedrock.reset();
  chat.reset();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([gemini, bedrock, chat].map((u) => u?.close()));
});

/** A request only the Gemini API can carry whole: a signed function call, a hosted tool, safety settings. */
const REQUEST = {
  contents: [
    { role: 'user', parts: [{ text: 'Find the weather in Paris please' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmVkLXRob3VnaHQ=' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { celsius: 21 } } }] },
  ],
  tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }, { googleSearch: {} }],
  safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
};

function count(model: string, body: unknown): Promise<Response> {
  return fetch(`${t.url}/v1beta/models/${model}:countTokens`, { method: 'POST', headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe(':countTokens on the Gemini way in', () => {
  it('a gemini target counts the client’s own request, passed through; its answer comes back as it sent it, exact', async () => {
    const res = await count('flash', REQUEST);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-switchyard-token-count')).toBe('exact');
    expect(res.headers.get('x-switchyard-dropped')).toBeNull();
    const total = wordsIn(REQUEST);
    expect(await res.json()).toEqual({ totalTokens: total, cachedContentTokenCount: 0, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] });
    const sent = gemini.requests[0]!;
    expect(sent.url).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(sent.headers['x-goog-api-key']).toBe('upstream-gemini-key');
    expect(sent.body).toEqual({ generateContentRequest: { ...REQUEST, model: 'models/gemini-2.5-flash' } });
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ ingress: 'gemini', operation: 'count_tokens', provider: 'gemini', status: 200 });
  });

  it('the generateContentRequest form too, with the target’s model in place of the alias (the GenAI SDK’s own call)', async () => {
    const res = await count('flash', { generateContentRequest: { model: 'models/flash', contents: REQUEST.contents.slice(0, 1) } });
    expect(res.status).toBe(200);
    expect(gemini.requests[0]!.body).toEqual({ generateContentRequest: { model: 'models/gemini-2.5-flash', contents: REQUEST.contents.slice(0, 1) } });
    const sdk = new GoogleGenAI({ apiKey: DEV_KEY, httpOptions: { baseUrl: t.url, apiVersion: 'v1beta', retryOptions: { attempts: 1 } } });
    const counted = await sdk.models.countTokens({ model: 'flash', contents: 'one two three four' });
    expect(counted.totalTokens).toBe(4);
  });

  it('a bedrock target counts the translation with CountTokens: exact, what the translation leaves out reported', async () => {
    const res = await count('nova', REQUEST);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-switchyard-token-count')).toBe('exact');
    expect(await res.json()).toEqual({ totalTokens: 31 });
    expect(res.headers.get('x-switchyard-dropped')).toContain('safetySettings');
    expect(bedrock.requests[0]!.url).toBe(`/model/${encodeURIComponent('us.amazon.nova-micro-v1:0')}/count-tokens`);
    expect(bedrock.requests[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('a server that cannot count: the gateway’s estimate, marked so, no upstream call', async () => {
    const res = await count('llama', REQUEST);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-token-count')).toBe('estimate');
    expect(((await res.json()) as { totalTokens: number }).totalTokens).toBeGreaterThan(5);
    expect(chat.requests).toHaveLength(0);
  });
});
