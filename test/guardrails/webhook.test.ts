/**
 * The external guard (issue 23): a guard on loopback that blocks, redacts (with spans, restored
 * in the answer), answers late or fails; rules that fail open and fail closed; the request, a
 * plain answer and a streamed answer (the guard reads it at the finish and can still end it).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import type { WebhookAnswer, WebhookRequest } from '../../src/guardrails/webhook.ts';

/** The guard: its verdict by what the texts say. */
function decide(body: WebhookRequest): WebhookAnswer | 'slow' | 'fail' {
  const all = body.texts.map((t) => t.text).join('\n');
  if (all.includes('slow')) return 'slow';
  if (all.includes('crash')) return 'fail';
  if (all.includes('forbidden')) return { verdict: 'block', findings: [{ index: body.texts.findIndex((t) => t.text.includes('forbidden')), start: 0, end: 1, label: 'TOPIC' }] };
  const findings = body.texts.flatMap((t, index) => [...t.text.matchAll(/Alice/g)].map((m) => ({ index, start: m.index, end: m.index + 5, label: 'NAME' })));
  return findings.length ? { verdict: 'redact', findings } : { verdict: 'allow' };
}

const asked: WebhookRequest[] = [];
/** What the judge's model was asked. */
const judged: string[] = [];
const JUDGE_KEY = 'sk-judge-0123456789';
const authorizations: (string | undefined)[] = [];
let guard: Server;
let guardUrl: string;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/** The upstream echoes the user's text; model `secretive` answers with something the guard forbids. */
function upstreamTurn(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { model: string; stream?: boolean; messages: Array<{ role: string; content: string }> };
  if (body.model === 'judge') judged.push(body.messages[0].content);
  const text =
    body.model === 'judge'
      ? body.messages[0].content.split('\n\n').slice(1).join('\n\n').includes('forbidden')
        ? 'BLOCK: it is about a forbidden topic'
        : 'ALLOW'
      : body.model === 'secretive'
        ? 'This is a forbidden answer about Alice.'
        : `You wrote: ${body.messages.at(-1)?.content}`;
  const base = { id: 'chatcmpl-w', created: 1_760_000_000, model: body.model };
  if (!body.stream)
    return {
      status: 200,
      body: {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      },
    };
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < text.length; i += 4) pieces.push(chunk({ content: text.slice(i, i + 4) }, null));
  return streamAnswer([...pieces, chunk({}, 'stop'), 'data: [DONE]\n\n']);
}

let upstream: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  guard = createServer(async (req, res) => {
    const body = (await readJson(req)) as WebhookRequest;
    asked.push(body);
    authorizations.push(req.headers.authorization);
    const verdict = decide(body);
    if (verdict === 'slow') return void setTimeout(() => res.end('{"verdict":"allow"}'), 3000).unref();
    if (verdict === 'fail') {
      res.writeHead(500).end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(verdict));
  });
  await new Promise<void>((r) => guard.listen(0, '127.0.0.1', r));
  guardUrl = `http://127.0.0.1:${(guard.address() as AddressInfo).port}/check`;
  upstream = await startFakeUpstream(upstreamTurn);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: judge, key: ${JUDGE_KEY} }
providers:
  local: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-upstream }
models:
  open: { targets: [{ provider: local, model: echo }] }
  closed: { targets: [{ provider: local, model: echo }] }
  secretive: { targets: [{ provider: local, model: secretive }] }
  judged: { targets: [{ provider: local, model: echo }] }
  judge-model: { targets: [{ provider: local, model: judge }] }
pipeline:
  - auth
  - route
  - stage: guardrails
    options:
      rules:
        dlp: { webhook: { url: "${guardUrl}", timeoutMs: 300, headers: { authorization: Bearer guard-token } }, restore: true }
        dlp-closed: { webhook: { url: "${guardUrl}", timeoutMs: 300, onError: block }, on: [request] }
        tone: { judge: { model: judge-model, key: ${JUDGE_KEY}, prompt: "Answer BLOCK if this is about a forbidden topic, else ALLOW.\\n\\n{{text}}" } }
      apply:
        - { rules: [dlp], models: [open, secretive] }
        - { rules: [dlp-closed], models: [closed] }
        - { rules: [tone], models: [judged, judge-model] }
  - retry
  - transform-response
  - log
`);
});
afterEach(() => {
  upstream.reset();
  asked.length = 0;
  judged.length = 0;
});
afterAll(async () => {
  await t?.close();
  await upstream?.close();
  await new Promise((r) => guard?.close(r));
});

const openai = () => new OpenAI({ apiKey: DEV_KEY, baseURL: t.baseURL, maxRetries: 0 });

describe('webhook guard', () => {
  it('is sent the texts with their places, the rule, the request id, key and model', async () => {
    const { response } = await openai()
      .chat.completions.create({
        model: 'open',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello' },
        ],
      })
      .withResponse();
    expect(asked[0]).toEqual({
      rule: 'dlp',
      site: 'request',
      requestId: response.headers.get('x-request-id'),
      key: 'dev',
      model: 'open',
      texts: [
        { path: 'messages[0].content', text: 'Be brief.' },
        { path: 'messages[1].content', text: 'hello' },
      ],
    });
    expect(asked[1]).toMatchObject({ site: 'answer', texts: [{ path: 'choices[0].message.content', text: 'You wrote: hello' }] });
    expect(authorizations.at(-1)).toBe('Bearer guard-token');
  });

  it('redacts the spans it names; the provider never sees them and the user gets them back', async () => {
    const data = await openai().chat.completions.create({ model: 'open', messages: [{ role: 'user', content: 'Tell Alice hi' }] });
    expect(JSON.stringify(upstream.requests[0].body)).toContain('Tell [NAME_1] hi');
    expect(JSON.stringify(upstream.requests[0].body)).not.toContain('Alice');
    expect(data.choices[0].message.content).toBe('You wrote: Tell Alice hi');
  });

  it('blocks a request with the protocol 400, before any provider is called', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'open', messages: [{ role: 'user', content: 'a forbidden topic' }] }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('content_policy_violation');
    expect(err.message).toContain('guardrail "dlp"');
    expect(upstream.requests).toHaveLength(0);
  });

  it('blocks a plain answer', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'secretive', messages: [{ role: 'user', content: 'tell me' }] }));
    expect(err.code).toBe('content_policy_violation');
    expect(JSON.stringify(err.error)).not.toContain('forbidden');
  });

  it('reads a streamed answer at its finish and ends it with an in-stream error', async () => {
    const stream = await openai().chat.completions.create({ model: 'secretive', stream: true, messages: [{ role: 'user', content: 'tell me' }] });
    let finished = false;
    const err = await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) finished = true;
    })().catch((e: unknown) => e);
    expect(String((err as Error)?.message)).toContain('guardrail "dlp"');
    expect(finished).toBe(false);
    expect(asked.at(-1)).toMatchObject({ site: 'answer', texts: [{ path: 'choices[0].delta.content', text: 'This is a forbidden answer about Alice.' }] });
  });

  it('fails open by default: a late or failing guard lets the request through, and says so in the log', async () => {
    const { response } = await openai()
      .chat.completions.create({ model: 'open', messages: [{ role: 'user', content: 'slow please' }] })
      .withResponse();
    const line = await logLineFor(t, response.headers.get('x-request-id') as string);
    expect(line.guardrails).toContainEqual({ rule: 'dlp', action: 'log', site: 'request', found: { GUARD_UNAVAILABLE: 1 } });
    const again = await openai().chat.completions.create({ model: 'open', messages: [{ role: 'user', content: 'crash please' }] });
    expect(again.choices[0].message.content).toBe('You wrote: crash please');
  });

  it('fails closed when the rule says so: 503 guardrail_unavailable, no provider called', async () => {
    for (const content of ['slow please', 'crash please']) {
      const err = await failureOf(openai().chat.completions.create({ model: 'closed', messages: [{ role: 'user', content }] }));
      expect(err.status).toBe(503);
      expect(err.code).toBe('guardrail_unavailable');
      expect(err.headers?.get('retry-after')).toBe('1');
    }
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('LLM judge', () => {
  it("asks one of the gateway's aliases through the gateway, booked to the judge's key, and lets an allowed request through", async () => {
    const data = await openai().chat.completions.create({ model: 'judged', messages: [{ role: 'user', content: 'a fine topic' }] });
    expect(data.choices[0].message.content).toBe('You wrote: a fine topic');
    // Asked twice (request, then answer), each through the gateway: the judge is not judged in turn.
    expect(judged).toHaveLength(2);
    expect(judged[0]).toContain('a fine topic');
    const judgeLines = t.logs.filter((l) => l.msg === 'request' && l.key === 'judge');
    expect(judgeLines.length).toBeGreaterThanOrEqual(2);
  });

  it('blocks what the judge says to block, with the protocol 400', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'judged', messages: [{ role: 'user', content: 'a forbidden topic' }] }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('content_policy_violation');
    expect(err.message).toContain('its judge refused the request');
    expect(upstream.requests.filter((r) => (r.body as { model: string }).model === 'echo')).toHaveLength(0);
  });

  it('a client cannot skip the judge by sending its header', async () => {
    const err = await failureOf(openai().chat.completions.create({ model: 'judged', messages: [{ role: 'user', content: 'a forbidden topic' }] }, { headers: { 'x-switchyard-judge': 'guess' } }));
    expect(err.code).toBe('content_policy_violation');
  });
});
