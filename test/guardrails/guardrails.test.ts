/**
 * The guardrails stage end to end (issue 23): a real gateway on loopback with the stage in its
 * pipeline, a fake OpenAI-compatible upstream that echoes what it received (in small stream
 * pieces, so placeholders and matches are split across chunks), driven by the official SDKs on
 * three ways in. The provider never sees a redacted original; the user sees it restored; a
 * secret is refused before any provider is called; an answer that leaks a card number is cut
 * mid-stream; verdicts are on the log line without the matched text.
 */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_KEY,
  failureOf,
  logLineFor,
  startFakeUpstream,
  startTestGateway,
  streamAnswer,
  type FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';

const OTHER_KEY = 'sk-other-0123456789';
const ADMIN_KEY = 'sk-admin-guard-0123456789';
const EMAIL = 'jane.doe@example.com';
const PHONE = '+44 20 7946 0958';
const CARD = '4111 1111 1111 1111';
const SECRET = `sk-proj-${'Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5'}`;

/** The last user text the upstream received. */
function lastUserText(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const content = body.messages.filter((m) => m.role === 'user').at(-1)?.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
}

/** Echoes the user's text (model `echo`), or leaks a card number (model `leaky`); streams in 3-character pieces. */
function upstreamTurn(req: RecordedRequest): ScriptedResponse {
  if (req.url.endsWith('/embeddings')) {
    const input = (req.body as { input: string[] | string }).input;
    const n = Array.isArray(input) ? input.length : 1;
    return {
      status: 200,
      body: { object: 'list', model: 'embed', data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] })), usage: { prompt_tokens: 3, total_tokens: 3 } },
    };
  }
  const body = req.body as { model: string; stream?: boolean; messages: Array<{ role: string; content: unknown }> };
  const text = body.model === 'leaky' ? `Your card is ${CARD}, keep it safe.` : `You wrote: ${lastUserText(body)}`;
  const base = { id: 'chatcmpl-g', created: 1_760_000_000, model: body.model };
  const usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };
  if (!body.stream) return { status: 200, body: { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage } };
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces: string[] = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < text.length; i += 3) pieces.push(chunk({ content: text.slice(i, i + 3) }, null));
  pieces.push(chunk({}, 'stop'), `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n');
  return streamAnswer(pieces);
}

let upstream: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream(upstreamTurn);
  t = await startTestGateway(`admin:
  keys:
    - { name: ops, key: ${ADMIN_KEY} }
keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: other, key: ${OTHER_KEY} }
providers:
  local: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-upstream }
models:
  gpt-test: { targets: [{ provider: local, model: echo }] }
  claude-test: { targets: [{ provider: local, model: echo }] }
  embed-test: { targets: [{ provider: local, model: embed }] }
  leaky: { targets: [{ provider: local, model: leaky }] }
pipeline:
  - auth
  - validate
  - route
  - stage: guardrails
    options:
      rules:
        pii: { detect: [email, phone], action: redact, restore: true, on: [request] }
        secrets: { detect: [secrets], action: block }
        cards-out: { detect: [card], action: block, on: [answer] }
      apply:
        - { rules: [secrets, cards-out] }
        - { rules: [pii], keys: [dev] }
  - retry
  - transform-response
  - log
`);
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

const openai = (apiKey = DEV_KEY) => new OpenAI({ apiKey, baseURL: t.baseURL, maxRetries: 0 });
const PROMPT = `Mail ${EMAIL} or call ${PHONE} about it.`;

function expectUpstreamSawPlaceholders(): void {
  const seen = JSON.stringify(upstream.requests.at(-1)?.body);
  expect(seen).toContain('[EMAIL_1]');
  expect(seen).toContain('[PHONE_1]');
  expect(seen).not.toContain(EMAIL);
  expect(seen).not.toContain('7946');
}

describe('redact and restore', () => {
  it('chat: the provider sees placeholders, the user sees the originals', async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    expectUpstreamSawPlaceholders();
    expect(data.choices[0].message.content).toBe(`You wrote: ${PROMPT}`);
    const line = await logLineFor(t, response.headers.get('x-request-id') as string);
    expect(line.guardrails).toEqual([{ rule: 'pii', action: 'redact', site: 'request', found: { EMAIL: 1, PHONE: 1 } }]);
    expect(JSON.stringify(line)).not.toContain(EMAIL);
    // The console's request detail has the verdicts, and not the text.
    const detail = (await (await fetch(`${t.url}/admin/v1/console/requests/${line.reqId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { guardrails: unknown };
    expect(detail.guardrails).toEqual(line.guardrails);
    expect(JSON.stringify(detail)).not.toContain(EMAIL);
  });

  it('chat stream: placeholders split across chunks are restored as the text flows', async () => {
    const stream = await openai().chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    let text = '';
    let contentChunks = 0;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) {
        text += piece;
        contentChunks++;
      }
    }
    expectUpstreamSawPlaceholders();
    expect(text).toBe(`You wrote: ${PROMPT}`);
    // The stream stayed a stream: many pieces, not one held answer.
    expect(contentChunks).toBeGreaterThan(5);
  });

  it('Messages (Anthropic SDK), streamed: the same', async () => {
    const anthropic = new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
    const stream = anthropic.messages.stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    const message = await stream.finalMessage();
    expectUpstreamSawPlaceholders();
    expect(message.content[0]).toMatchObject({ type: 'text', text: `You wrote: ${PROMPT}` });
  });

  it('Responses (OpenAI SDK), plain: the same', async () => {
    const answer = await openai().responses.create({ model: 'gpt-test', input: PROMPT, store: false });
    expectUpstreamSawPlaceholders();
    expect(answer.output_text).toBe(`You wrote: ${PROMPT}`);
  });

  it('Messages (Anthropic SDK), plain: the same', async () => {
    const anthropic = new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    expectUpstreamSawPlaceholders();
    expect(message.content[0]).toMatchObject({ type: 'text', text: `You wrote: ${PROMPT}` });
  });

  it('Responses (OpenAI SDK), streamed: the same', async () => {
    const stream = await openai().responses.create({ model: 'gpt-test', input: PROMPT, store: false, stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expectUpstreamSawPlaceholders();
    expect(text).toBe(`You wrote: ${PROMPT}`);
  });

  it('Gemini (Google GenAI SDK), plain and streamed: the same', async () => {
    const genai = new GoogleGenAI({ apiKey: DEV_KEY, httpOptions: { baseUrl: t.url, retryOptions: { attempts: 1 } } });
    const plain = await genai.models.generateContent({ model: 'gpt-test', contents: PROMPT });
    expectUpstreamSawPlaceholders();
    expect(plain.text).toBe(`You wrote: ${PROMPT}`);
    let text = '';
    for await (const chunk of await genai.models.generateContentStream({ model: 'gpt-test', contents: PROMPT })) text += chunk.text ?? '';
    expectUpstreamSawPlaceholders();
    expect(text).toBe(`You wrote: ${PROMPT}`);
  });

  it('embeddings input: the provider embeds the placeholders', async () => {
    await openai().embeddings.create({ model: 'embed-test', input: [PROMPT, 'plain text'] });
    const seen = JSON.stringify(upstream.requests.at(-1)?.body);
    expect(seen).toContain('[EMAIL_1]');
    expect(seen).not.toContain(EMAIL);
  });

  it('a key no rule covers is not redacted', async () => {
    const data = await openai(OTHER_KEY).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }] });
    expect(JSON.stringify(upstream.requests.at(-1)?.body)).toContain(EMAIL);
    expect(data.choices[0].message.content).toBe(`You wrote: ${PROMPT}`);
  });
});

describe('block', () => {
  it('a secret in the request is refused before any provider is called, without echoing it', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `my key is ${SECRET}` }] }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('content_policy_violation');
    expect(err.message).toContain('guardrail "secrets"');
    expect(err.message).toContain('api key');
    expect(JSON.stringify(err.error)).not.toContain(SECRET.slice(8));
    expect(upstream.requests).toHaveLength(0);
  });

  it('Messages: the refusal has Anthropic shape', async () => {
    const anthropic = new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
    const err = (await anthropic.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: `key ${SECRET}` }] }).catch((e: unknown) => e)) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(JSON.stringify(err.error)).not.toContain(SECRET.slice(8));
  });

  it('an answer leaking a card number: a plain answer becomes the error', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'leaky', messages: [{ role: 'user', content: 'what is my card?' }] }));
    expect(err.code).toBe('content_policy_violation');
    expect(JSON.stringify(err.error)).not.toContain('1111');
  });

  it('an answer leaking a card number split across chunks: the stream ends with an in-stream error before the number', async () => {
    const stream = await openai().chat.completions.create({ model: 'leaky', stream: true, messages: [{ role: 'user', content: 'what is my card?' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(String((err as Error)?.message)).toContain('guardrail "cards-out"');
    expect(text.startsWith('Your card is')).toBe(true);
    expect(text).not.toContain('1111');
  });
});

describe('verdicts', () => {
  it('are counted by rule, action and site', async () => {
    await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }] });
    await failureOf(openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `key ${SECRET}` }] }));
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const count = (labels: string) => Number(text.match(new RegExp(`^switchyard_guardrail_verdicts_total\\{${labels}\\} (\\d+)`, 'm'))?.[1] ?? 0);
    expect(count('rule="pii",action="redact",site="request"')).toBeGreaterThanOrEqual(1);
    expect(count('rule="secrets",action="block",site="request"')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(EMAIL);
  });
});

describe('configuration', () => {
  it("the README's example is a valid pipeline", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Guardrails'));
    const yaml = section.slice(section.indexOf('```yaml\n') + 8, section.indexOf('```', section.indexOf('```yaml\n') + 8));
    const g = await startTestGateway(
      `providers:\n  local: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-upstream }\nmodels:\n  gpt-test: { targets: [{ provider: local, model: echo }] }\nkeys:\n  - { name: dev, key: ${DEV_KEY} }\n${yaml}`,
    );
    try {
      const data = await new OpenAI({ apiKey: DEV_KEY, baseURL: g.baseURL, maxRetries: 0 }).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });
      expect(data.choices[0].message.content).toBe('You wrote: hello');
    } finally {
      await g.close();
    }
  });

  it('an unknown detector is a config error at its position', async () => {
    const err = await startTestGateway(
      `providers:\n  local: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-upstream }\nmodels:\n  gpt-test: { targets: [{ provider: local, model: echo }] }\npipeline:\n  - route\n  - { stage: guardrails, options: { rules: { pii: { detect: [emails], action: redact } } } }\n  - transform-response\n`,
    ).catch((e: unknown) => e);
    expect(String(err)).toMatch(/gateway\.yaml:7:\d+ pipeline\[1\].*unknown detector "emails"/);
  });
});
