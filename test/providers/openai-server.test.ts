/**
 * `server: openai | compatible` on the openai provider: the same loopback upstream configured as
 * OpenAI's own API (which refuses parameters it does not know, as api.openai.com answers
 * `Unrecognized request argument supplied: top_k`) and as a compatible server (vLLM-style, which
 * reads them). Gemini CLI's `topK` and Anthropic's `top_k` arrive as `top_k`; chat clients may
 * send vLLM's `min_p` or `repetition_penalty` themselves.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, logLineFor, startFakeUpstream, startTestGateway, type FakeUpstream, type RecordedRequest, type ScriptedResponse, type TestGateway } from 'switchyard-gateway/kit/testing';
import { CHAT_PARAMS } from '../../src/providers/unknown-params.ts';

/** A chat parameter newer than the gateway, which OpenAI (in this test) knows. */
const NEW_OPENAI_PARAM = 'some_new_openai_param';

/** Plays both servers: under /openai/v1 OpenAI's own API (unknown fields are a 400, in its envelope), under /local/v1 a server that takes any. */
function serve(req: RecordedRequest): ScriptedResponse {
  const body = req.body as Record<string, unknown>;
  if (req.url.startsWith('/openai/')) {
    const unknown = Object.keys(body).find((k) => !CHAT_PARAMS.has(k) && k !== NEW_OPENAI_PARAM);
    if (unknown) return { status: 400, body: { error: { message: `Unrecognized request argument supplied: ${unknown}`, type: 'invalid_request_error', param: null, code: null } } };
  }
  const message = { role: 'assistant', content: 'Sampled.' };
  return {
    status: 200,
    body: {
      id: 'chatcmpl-s',
      object: 'chat.completion',
      created: 1,
      model: String(body.model),
      choices: [{ index: 0, message, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    },
  };
}

let upstream: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream(serve);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  openai: { plugin: openai, baseUrl: "${upstream.url}/openai/v1", apiKey: sk-upstream-0123456789, server: openai }
  local: { plugin: openai, baseUrl: "${upstream.url}/local/v1" }
models:
  real: { targets: [{ provider: openai, model: gpt-5.2 }] }
  vllm: { targets: [{ provider: local, model: qwen3-8b }] }
`);
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

const SAMPLING = { top_k: 40, min_p: 0.05, repetition_penalty: 1.1, temperature: 0.7, [NEW_OPENAI_PARAM]: true };

function chat(model: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...SAMPLING }),
  });
}

describe('server: openai (OpenAI’s own API)', () => {
  it('drops the sampling parameters OpenAI refuses, reported in the header, the log line and the counter; a newer OpenAI parameter still goes up', async () => {
    const res = await chat('real');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-switchyard-dropped')).toBe('top_k (40), min_p (0.05), repetition_penalty (1.1)');
    const sent = upstream.requests[0]!.body;
    expect(sent).toEqual({ model: 'gpt-5.2', messages: [{ role: 'user', content: 'hi' }], temperature: 0.7, [NEW_OPENAI_PARAM]: true });
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line.dropped).toEqual(['top_k', 'min_p', 'repetition_penalty']);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_dropped_fields_total\{ingress="chat",field="top_k"\} [1-9]/);
  });

  it('strict: the 400 names the parameter and nothing goes up', async () => {
    const res = await chat('real', { 'x-switchyard-strict': 'true' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("'top_k'");
    expect(upstream.requests).toHaveLength(0);
  });

  it('Gemini CLI’s topK (the Gemini way in) is dropped for it, not refused by OpenAI', async () => {
    const res = await fetch(`${t.url}/v1beta/models/real:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 1, topP: 0.95, topK: 64 } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-switchyard-dropped')).toBe('top_k (64)');
    expect(upstream.requests[0]!.body).toMatchObject({ temperature: 1, top_p: 0.95 });
    expect(upstream.requests[0]!.body).not.toHaveProperty('top_k');
  });

  it('Anthropic’s top_k (the Messages way in) likewise', async () => {
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': DEV_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'real', max_tokens: 64, top_k: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-switchyard-dropped')).toBe('top_k (5)');
    expect(upstream.requests[0]!.body).not.toHaveProperty('top_k');
  });
});

describe('server: compatible (the default off api.openai.com)', () => {
  it('every field goes up as the client sent it, nothing reported', async () => {
    const res = await chat('vllm');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-dropped')).toBeNull();
    expect(upstream.requests[0]!.body).toEqual({ model: 'qwen3-8b', messages: [{ role: 'user', content: 'hi' }], ...SAMPLING });
  });
});
