/**
 * The exact response cache (issue 23) end to end: real gateways on loopback with the `cache`
 * stage, a fake upstream that counts what it served, the official SDKs. A repeated request is
 * answered without calling the upstream (plain and streamed, the stream replayed chunk for
 * chunk), free; scopes never share across tenants; TTL, Cache-Control bypasses, errors never
 * kept; two instances share entries through a real redis-server.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';

const TEAMMATE = 'sk-teammate-0123456789';
const STRANGER = 'sk-stranger-0123456789';
const LIMITED = 'sk-limited-0123456789';
const ADMIN = 'sk-admin-cache-0123456789';

let served = 0;
/** Answers `answer #n to: <text>` (n counts what the upstream served, so a replay is recognisable); model `broken` fails. */
function upstreamTurn(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { model: string; stream?: boolean; messages: Array<{ content: string }> };
  if (body.model === 'broken') return { status: 500, body: { error: { message: 'down', type: 'server_error' } } };
  served++;
  const text = `answer #${served} to: ${body.messages.at(-1)?.content}`;
  const base = { id: `chatcmpl-${served}`, created: 1_760_000_000, model: `${body.model}-2026` };
  const usage = { prompt_tokens: 1_000, completion_tokens: 1_000, total_tokens: 2_000 };
  if (!body.stream) return { status: 200, body: { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage } };
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < text.length; i += 5) pieces.push(chunk({ content: text.slice(i, i + 5) }, null));
  return streamAnswer([...pieces, chunk({}, 'stop'), `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n']);
}

function config(upstreamUrl: string, cache: string): string {
  return `admin:
  keys:
    - { name: ops, key: ${ADMIN} }
teams:
  blue: {}
  red: {}
keys:
  - { name: dev, key: ${DEV_KEY}, team: blue }
  - { name: teammate, key: ${TEAMMATE}, team: blue }
  - { name: stranger, key: ${STRANGER}, team: red }
  - { name: limited, key: ${LIMITED}, limits: { rpm: 2 }, budget: { usd: 10, period: daily } }
providers:
  local: { plugin: openai, baseUrl: "${upstreamUrl}/v1", apiKey: sk-upstream }
models:
  gpt-test: { targets: [{ provider: local, model: echo, price: { input: 1, output: 2 } }] }
  team-model: { targets: [{ provider: local, model: echo, price: { input: 1, output: 2 } }] }
  short-lived: { targets: [{ provider: local, model: echo }] }
  broken: { targets: [{ provider: local, model: broken }] }
pipeline:
  - auth
  - route
  - stage: cache
    options:
${cache}
  - retry
  - transform-response
  - log
`;
}

const CACHE = `      ttl: 600
      apply:
        - { models: [team-model], scope: team }
        - { models: [short-lived], ttl: 1 }
        - { models: [gpt-test, broken] }`;

let upstream: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream(upstreamTurn);
  t = await startTestGateway(config(upstream.url, CACHE));
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

const openai = (apiKey = DEV_KEY, gateway = t) => new OpenAI({ apiKey, baseURL: gateway.baseURL, maxRetries: 0 });
let n = 0;
/** A question never asked before in this file. */
const fresh = () => `question ${++n} at ${Date.now()}`;

describe('exact cache', () => {
  it('answers a repeated request from the cache: no upstream call, the same answer, free', async () => {
    const q = fresh();
    const first = await openai()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] })
      .withResponse();
    const second = await openai()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] })
      .withResponse();
    expect(upstream.requests).toHaveLength(1);
    expect(first.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(second.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(second.data.choices[0].message.content).toBe(first.data.choices[0].message.content);
    expect(second.data.model).toBe('echo-2026');
    expect(first.response.headers.get('x-switchyard-cost-usd')).toBe('0.003');
    expect(second.response.headers.get('x-switchyard-cost-usd')).toBeNull();
    const line = await logLineFor(t, second.response.headers.get('x-request-id') as string);
    expect(line.cache).toEqual({ result: 'hit', savedUsd: 0.003 });
    expect(line.costUsd).toBeUndefined();
  });

  it('a request that differs in anything the model reads is a miss; transport fields are not', async () => {
    const q = fresh();
    await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] });
    await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }], temperature: 0.5 });
    await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }], user: 'someone', metadata: { run: '7' } });
    expect(upstream.requests).toHaveLength(2);
  });

  it('replays a stream as a stream, chunk for chunk', async () => {
    const q = fresh();
    const read = async () => {
      const pieces: string[] = [];
      const stream = await openai().chat.completions.create({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: q }] });
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta?.content ?? '');
      return pieces;
    };
    const first = await read();
    const second = await read();
    expect(upstream.requests).toHaveLength(1);
    expect(second).toEqual(first);
    expect(first.filter(Boolean).length).toBeGreaterThan(3);
  });

  it('serves the other ways in from the same entry (Messages, with the Anthropic SDK)', async () => {
    const q = fresh();
    const anthropic = new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
    const a = await anthropic.messages.create({ model: 'gpt-test', max_tokens: 50, messages: [{ role: 'user', content: q }] });
    const b = await anthropic.messages.create({ model: 'gpt-test', max_tokens: 50, messages: [{ role: 'user', content: q }] });
    expect(upstream.requests).toHaveLength(1);
    expect(b.content).toEqual(a.content);
  });

  it('never shares across scopes: another key misses; a teammate shares a team-scoped entry, a stranger does not', async () => {
    const q = fresh();
    await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] });
    await openai(TEAMMATE).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] });
    expect(upstream.requests).toHaveLength(2);
    upstream.reset();
    const t1 = await openai().chat.completions.create({ model: 'team-model', messages: [{ role: 'user', content: q }] });
    const t2 = await openai(TEAMMATE).chat.completions.create({ model: 'team-model', messages: [{ role: 'user', content: q }] });
    const t3 = await openai(STRANGER).chat.completions.create({ model: 'team-model', messages: [{ role: 'user', content: q }] });
    expect(upstream.requests).toHaveLength(2);
    expect(t2.choices[0].message.content).toBe(t1.choices[0].message.content);
    expect(t3.choices[0].message.content).not.toBe(t1.choices[0].message.content);
  });

  it('expires entries after their TTL', async () => {
    const q = fresh();
    await openai().chat.completions.create({ model: 'short-lived', messages: [{ role: 'user', content: q }] });
    await openai().chat.completions.create({ model: 'short-lived', messages: [{ role: 'user', content: q }] });
    expect(upstream.requests).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_100));
    await openai().chat.completions.create({ model: 'short-lived', messages: [{ role: 'user', content: q }] });
    expect(upstream.requests).toHaveLength(2);
  });

  it('Cache-Control: no-cache skips the lookup (and refreshes the entry); no-store keeps nothing', async () => {
    const q = fresh();
    const ask = (control?: string) =>
      openai()
        .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] }, control ? { headers: { 'cache-control': control } } : undefined)
        .withResponse();
    const stored = await ask('no-store');
    expect(stored.response.headers.get('x-switchyard-cache')).toBe('bypass');
    const afterNoStore = await ask();
    expect(afterNoStore.response.headers.get('x-switchyard-cache')).toBe('miss');
    const refreshed = await ask('no-cache');
    expect(refreshed.response.headers.get('x-switchyard-cache')).toBe('bypass');
    const hit = await ask();
    expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(hit.data.choices[0].message.content).toBe(refreshed.data.choices[0].message.content);
    expect(upstream.requests).toHaveLength(3);
  });

  it('a hit counts against rpm, and against no budget', async () => {
    const q = fresh();
    const ask = () =>
      openai(LIMITED)
        .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] })
        .withResponse();
    const miss = await ask();
    const hit = await ask();
    expect(hit.response.headers.get('x-switchyard-cache')).toBe('hit');
    const err = await failureOf(ask().then((r) => r.data));
    expect(err.status).toBe(429);
    expect(upstream.requests).toHaveLength(1);
    const usage = (await (await fetch(`${t.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: Array<{ name: string; budget?: { spent_usd: number } }> };
    expect(usage.data.find((k) => k.name === 'limited')?.budget?.spent_usd).toBeCloseTo(0.003, 6);
    expect(miss.response.headers.get('x-switchyard-cache')).toBe('miss');
  });

  it('never keeps an error', async () => {
    for (let i = 0; i < 2; i++) await failureOf(openai().chat.completions.create({ model: 'broken', messages: [{ role: 'user', content: 'same' }] }));
    expect(upstream.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('counts hits, misses, bypasses and the spend saved', async () => {
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const value = (name: string) => Number(text.match(new RegExp(`^${name} ([0-9.e-]+)`, 'm'))?.[1] ?? Number.NaN);
    expect(value('switchyard_cache_requests_total\\{result="hit"\\}')).toBeGreaterThanOrEqual(5);
    expect(value('switchyard_cache_requests_total\\{result="miss"\\}')).toBeGreaterThanOrEqual(5);
    expect(value('switchyard_cache_requests_total\\{result="bypass"\\}')).toBeGreaterThanOrEqual(2);
    expect(value('switchyard_cache_saved_usd_total')).toBeGreaterThanOrEqual(0.003);
  });
});

describe('shared through Redis', () => {
  let redis: RedisServer;
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    redis = await startRedisServer();
    const options = `      redis: { url: "${redis.url}", prefix: "cache-test:" }\n      ttl: 60`;
    a = await startTestGateway(config(upstream.url, options));
    b = await startTestGateway(config(upstream.url, options));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop('SIGTERM');
  });

  it('an answer one instance got is served by the other, plain and streamed', async () => {
    const q = fresh();
    const first = await openai(DEV_KEY, a).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] });
    const { data, response } = await openai(DEV_KEY, b)
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] })
      .withResponse();
    expect(response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(data.choices[0].message.content).toBe(first.choices[0].message.content);
    const streamed = async (g: TestGateway) => {
      let text = '';
      for await (const c of await openai(DEV_KEY, g).chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: `${q} (stream)` }] }))
        text += c.choices[0]?.delta?.content ?? '';
      return text;
    };
    const fromA = await streamed(a);
    const fromB = await streamed(b);
    expect(fromB).toBe(fromA);
    expect(upstream.requests).toHaveLength(2);
  });

  it('a stranger on the other instance does not get it', async () => {
    const q = fresh();
    await openai(DEV_KEY, a).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] });
    const { response } = await openai(STRANGER, b)
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: q }] })
      .withResponse();
    expect(response.headers.get('x-switchyard-cache')).toBe('miss');
  });
});

describe('with guardrails in front', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway(
      config(upstream.url, '      scope: global').replace(
        '  - stage: cache',
        '  - stage: guardrails\n    options:\n      rules:\n        pii: { detect: [email], action: redact, restore: true, on: [request] }\n  - stage: cache',
      ),
    );
  });
  afterAll(async () => {
    await g?.close();
  });

  it('keeps the answer before the originals are restored: a shared entry never carries one user’s data to another', async () => {
    const q = fresh();
    const a = await openai(DEV_KEY, g).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `${q}: mail alice@example.com` }] });
    const { data: b, response } = await openai(STRANGER, g)
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `${q}: mail bob@example.org` }] })
      .withResponse();
    expect(upstream.requests).toHaveLength(1);
    expect(response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(a.choices[0].message.content).toContain('alice@example.com');
    expect(b.choices[0].message.content).toContain('bob@example.org');
    expect(b.choices[0].message.content).not.toContain('alice');
  });
});
