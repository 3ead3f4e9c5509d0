/**
 * Stored Responses with the official openai SDK against real gateways: two instances sharing a
 * real redis-server (a chain of five turns by previous_response_id moving between them, each
 * upstream request carrying the whole history), scoping (one key never reads, chains, deletes or
 * references another's), DELETE, store: false, retention (a short TTL), cancel, the replayed
 * stream, and a memory-backend gateway restarted on its state file. The upstream is a fake
 * OpenAI-compatible server on loopback that says how many messages it was sent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, startTestGateway, streamAnswer, type FakeUpstream, type RecordedRequest, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';

const ALICE = 'sk-alice-0123456789';
const BOB = 'sk-bob-0123456789';
const CAROL = 'sk-carol-0123456789';

type ChatMessage = { role: string; content: unknown; tool_calls?: unknown[] };

/** The reply to a chat request: it names the last user text and counts the messages it got. */
function replyOf(req: RecordedRequest): string {
  const messages = req.body.messages as ChatMessage[];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return `re ${textOf(last?.content)} (${messages.length} messages)`;
}

function answer(req: RecordedRequest) {
  const text = replyOf(req);
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!req.body.stream) {
    return {
      status: 200,
      body: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'house-1', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage },
    };
  }
  const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'house-1', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const half = Math.floor(text.length / 2);
  return streamAnswer([
    chunk({ role: 'assistant', content: text.slice(0, half) }),
    chunk({ content: text.slice(half) }),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'house-1', choices: [], usage })}\n\n`,
    'data: [DONE]\n\n',
  ]);
}

/** A chat message's text (a string, or text parts: stored input items keep the Responses API's parts). */
function textOf(content: unknown): string {
  return Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : String(content);
}

/** The user texts and assistant texts of a chat request, in order. */
function transcript(req: RecordedRequest): string[] {
  return (req.body.messages as ChatMessage[]).map((m) => `${m.role}: ${textOf(m.content)}`);
}

let redis: RedisServer;
let upstream: FakeUpstream;

beforeAll(async () => {
  redis = await startRedisServer();
  upstream = await startFakeUpstream(answer);
});
afterAll(async () => {
  await upstream?.close();
  await redis?.stop('SIGTERM');
});

function redisConfig(responses: string, prefix: string): string {
  return `state:
  backend: redis
  redis: { url: "${redis.url}", prefix: "${prefix}" }
  responses: ${responses}
teams: { red: {}, blue: {} }
keys:
  - { name: alice, key: ${ALICE}, team: red }
  - { name: bob, key: ${BOB}, team: blue }
  - { name: carol, key: ${CAROL}, team: red }
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: test-upstream-key }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-1 }] }
`;
}

describe('two gateway instances sharing Redis', () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    a = await startTestGateway(redisConfig('{ scope: key }', 'sy-a:'));
    b = await startTestGateway(redisConfig('{ scope: key }', 'sy-a:'));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('a chain of five turns by previous_response_id, alternating instances: each upstream request carries the whole history', async () => {
    upstream.reset();
    let previous: string | undefined;
    const said: string[] = [];
    for (let turn = 1; turn <= 5; turn++) {
      const client = (turn % 2 ? a : b).client(ALICE);
      const input = `turn ${turn}`;
      // Turns 2 and 4 stream: the next turn is sent the moment the stream's last event is read.
      const response =
        turn % 2
          ? await client.responses.create({ model: 'm', input, previous_response_id: previous })
          : await client.responses.stream({ model: 'm', input, previous_response_id: previous }).finalResponse();
      // `store` is on the wire (and in OpenAI's schema) though the SDK's type leaves it out.
      expect(response).toMatchObject({ store: true, previous_response_id: previous ?? null });
      said.push(`user: ${input}`, `assistant: ${response.output_text}`);
      expect(transcript(upstream.requests.at(-1)!)).toEqual(said.slice(0, -1));
      expect(response.output_text).toBe(`re ${input} (${2 * turn - 1} messages)`);
      previous = response.id;
    }
    expect(upstream.requests).toHaveLength(5);
    // The upstream never sees the gateway's chain (it gets every message instead).
    for (const req of upstream.requests) expect(JSON.stringify(req.body)).not.toContain('previous_response_id');
  });

  it('retrieve on either instance gives the response as it was answered; input_items lists its input, paged', async () => {
    const created = await a.client(ALICE).responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'first' },
        { role: 'user', content: [{ type: 'input_text', text: 'second' }] },
      ],
    });
    const got = await b.client(ALICE).responses.retrieve(created.id);
    expect(got).toEqual(JSON.parse(JSON.stringify(created)));
    const all = await b.client(ALICE).responses.inputItems.list(created.id, { order: 'asc' });
    expect(all.data.map((i) => (i.type === 'message' ? i.role : i.type))).toEqual(['user', 'user']);
    expect(all.data.every((i) => typeof i.id === 'string' && i.id.startsWith('msg_'))).toBe(true);
    const page = await a.client(ALICE).responses.inputItems.list(created.id, { limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.data[0]!.id).toBe(all.data[1]!.id); // default order: desc
    expect(page.has_more).toBe(true);
    const next = await a.client(ALICE).responses.inputItems.list(created.id, { limit: 1, after: page.data[0]!.id });
    expect(next.data.map((i) => i.id)).toEqual([all.data[0]!.id]);
    expect(next.has_more).toBe(false);
  });

  it("key B can never read, chain, reference or delete key A's response: 404 as for an unknown id", async () => {
    const mine = await a.client(ALICE).responses.create({ model: 'm', input: 'private' });
    const item = mine.output[0]!.id!;
    upstream.reset();
    const bob = b.client(BOB);
    const unknown = await bob.responses.retrieve('resp_does_not_exist').catch((e: unknown) => e);
    const theirs = await bob.responses.retrieve(mine.id).catch((e: unknown) => e);
    expect(theirs).toBeInstanceOf(OpenAI.NotFoundError);
    expect((theirs as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual({
      message: `Response with id '${mine.id}' not found.`,
      type: 'invalid_request_error',
      param: null,
      code: 'response_not_found',
    });
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).status).toBe(404);
    expect(await bob.responses.delete(mine.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await bob.responses.inputItems.list(mine.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    const chained = await bob.responses.create({ model: 'm', input: 'and?', previous_response_id: mine.id }).catch((e: unknown) => e);
    expect(chained).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chained as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'previous_response_not_found',
      param: 'previous_response_id',
      message: `Previous response with id '${mine.id}' not found.`,
    });
    const referenced = await bob.responses.create({ model: 'm', input: [{ type: 'item_reference', id: item }] }).catch((e: unknown) => e);
    expect(referenced).toBeInstanceOf(OpenAI.NotFoundError);
    // Carol is in Alice's team, but the scope here is the key.
    expect(
      await b
        .client(CAROL)
        .responses.retrieve(mine.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
    expect(upstream.requests).toHaveLength(0);
    // Still there for its owner.
    expect((await b.client(ALICE).responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it('an item_reference is resolved from the stored output (the AI SDK default), across instances', async () => {
    const first = await a.client(ALICE).responses.create({ model: 'm', input: 'hello' });
    upstream.reset();
    const second = await b.client(ALICE).responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'hello' },
        { type: 'item_reference', id: first.output[0]!.id! },
        { role: 'user', content: 'again' },
      ],
    });
    expect(transcript(upstream.requests[0]!)).toEqual(['user: hello', `assistant: ${first.output_text}`, 'user: again']);
    expect(second.output_text).toBe('re again (3 messages)');
  });

  it('DELETE answers the deleted object, then GET is 404 and the id cannot be chained', async () => {
    const r = await b.client(ALICE).responses.create({ model: 'm', input: 'to delete' });
    expect(await a.client(ALICE).responses.delete(r.id)).toEqual({ id: r.id, object: 'response', deleted: true });
    expect(
      await b
        .client(ALICE)
        .responses.retrieve(r.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
    expect(
      await a
        .client(ALICE)
        .responses.delete(r.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
    expect(
      await a
        .client(ALICE)
        .responses.create({ model: 'm', input: 'x', previous_response_id: r.id })
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('store: false keeps nothing', async () => {
    const r = await a.client(ALICE).responses.create({ model: 'm', input: 'forget me', store: false });
    expect(r).toMatchObject({ store: false });
    const s = await a.client(ALICE).responses.stream({ model: 'm', input: 'forget me too', store: false }).finalResponse();
    expect(s).toMatchObject({ store: false });
    for (const id of [r.id, s.id]) {
      expect(
        await b
          .client(ALICE)
          .responses.retrieve(id)
          .catch((e: unknown) => e),
      ).toBeInstanceOf(OpenAI.NotFoundError);
    }
    expect(
      await a
        .client(ALICE)
        .responses.create({ model: 'm', input: 'x', previous_response_id: r.id })
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.BadRequestError);
    expect(
      await a
        .client(ALICE)
        .responses.create({ model: 'm', input: [{ type: 'item_reference', id: r.output[0]!.id! }] })
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('cancel: 400 for a stored (synchronous) response, 404 for an unknown one', async () => {
    const r = await a.client(ALICE).responses.create({ model: 'm', input: 'x' });
    const refused = await b
      .client(ALICE)
      .responses.cancel(r.id)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/Cannot cancel a synchronous response/);
    expect(
      await b
        .client(ALICE)
        .responses.cancel('resp_nope')
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('retrieve with stream: true replays the stored response as events the SDK reads', async () => {
    const r = await a.client(ALICE).responses.create({ model: 'm', input: 'replay me' });
    const stream = await b.client(ALICE).responses.retrieve(r.id, { stream: true });
    const types: string[] = [];
    let text = '';
    let final: unknown;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') final = event.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).toBe(r.output_text);
    // The SDK adds `output_text` to what create() returns; the event carries the object as stored.
    const { output_text: _, ...stored } = JSON.parse(JSON.stringify(r));
    expect(final).toEqual(stored);
  });
});

describe('the Conversations API, in the same store', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway(redisConfig('{}', 'sy-conv:'));
  });
  afterAll(async () => {
    await g?.close();
  });

  it('responses with `conversation` see its items and add their turn to it; items and metadata by the SDK', async () => {
    const alice = g.client(ALICE);
    const conversation = await alice.conversations.create({ items: [{ type: 'message', role: 'user', content: 'My name is Ada.' }], metadata: { topic: 'names' } });
    expect(conversation).toMatchObject({ object: 'conversation', metadata: { topic: 'names' } });
    expect(conversation.id).toMatch(/^conv_/);
    upstream.reset();
    const first = await alice.responses.create({ model: 'm', input: 'Who am I?', conversation: conversation.id });
    expect(first).toMatchObject({ conversation: { id: conversation.id } });
    const second = await alice.responses.stream({ model: 'm', input: 'And again?', conversation: { id: conversation.id } }).finalResponse();
    expect(transcript(upstream.requests[0]!)).toEqual(['user: My name is Ada.', 'user: Who am I?']);
    expect(transcript(upstream.requests[1]!)).toEqual(['user: My name is Ada.', 'user: Who am I?', `assistant: ${first.output_text}`, 'user: And again?']);
    const items = await alice.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((i) => (i.type === 'message' ? i.role : i.type))).toEqual(['user', 'user', 'assistant', 'user', 'assistant']);
    expect(items.data.at(-1)!.id).toBe(second.output[0]!.id);
    const added = await alice.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'one more' }] });
    expect(added.data).toHaveLength(1);
    const addedId = added.data[0]!.id!;
    const one = await alice.conversations.items.retrieve(addedId, { conversation_id: conversation.id });
    expect(one).toMatchObject({ type: 'message', role: 'user', content: 'one more' });
    await alice.conversations.items.delete(addedId, { conversation_id: conversation.id });
    expect((await alice.conversations.items.list(conversation.id)).data).toHaveLength(5);
    expect(await alice.conversations.update(conversation.id, { metadata: { topic: 'done' } })).toMatchObject({ metadata: { topic: 'done' } });
    // Another key sees none of it.
    const bob = g.client(BOB);
    expect(await bob.conversations.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await bob.conversations.items.list(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await bob.responses.create({ model: 'm', input: 'x', conversation: conversation.id }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await alice.conversations.delete(conversation.id)).toEqual({ id: conversation.id, object: 'conversation.deleted', deleted: true });
    expect(await alice.conversations.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    // A conversation is not a response, and a response is not a conversation.
    expect(await alice.responses.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await alice.conversations.retrieve(first.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('what is kept', () => {
  it('a stream the upstream cuts after its first output is kept as failed, with the output it had', async () => {
    const g = await startTestGateway(redisConfig('{}', 'sy-cut:'));
    upstream.setHandler((req) => ({ ...answer(req), destroyAfterChunks: 2, gapMs: 20 }));
    try {
      const res = await fetch(`${g.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input: 'cut me', stream: true }),
      });
      const text = await res.text();
      expect(text).toContain('event: response.failed');
      const id = /"id":"(resp_[^"]+)"/.exec(text)?.[1];
      expect(id).toBeDefined();
      const kept = await g.client(ALICE).responses.retrieve(id!);
      expect(kept.status).toBe('failed');
      expect(kept.output_text.length).toBeGreaterThan(0);
    } finally {
      upstream.restore();
      await g.close();
    }
  });

  it('two requests with the same client-chosen x-request-id get distinct response ids, both kept', async () => {
    const g = await startTestGateway(redisConfig('{}', 'sy-rid:'));
    try {
      const options = { headers: { 'x-request-id': 'my-fixed-id' } };
      const one = await g.client(ALICE).responses.create({ model: 'm', input: 'one' }, options);
      const two = await g.client(ALICE).responses.create({ model: 'm', input: 'two' }, options);
      expect(one.id).toMatch(/^resp_my-fixed-id-/);
      expect(two.id).not.toBe(one.id);
      expect((await g.client(ALICE).responses.retrieve(one.id)).output_text).toBe('re one (1 messages)');
      expect((await g.client(ALICE).responses.retrieve(two.id)).output_text).toBe('re two (1 messages)');
    } finally {
      await g.close();
    }
  });

  it('Redis keeps at most maxEntries responses, the oldest out first', async () => {
    const g = await startTestGateway(redisConfig('{ maxEntries: 2 }', 'sy-max:'));
    try {
      const ids: string[] = [];
      for (const input of ['one', 'two', 'three']) ids.push((await g.client(ALICE).responses.create({ model: 'm', input })).id);
      expect(
        await g
          .client(ALICE)
          .responses.retrieve(ids[0]!)
          .catch((e: unknown) => e),
      ).toBeInstanceOf(OpenAI.NotFoundError);
      for (const id of ids.slice(1)) expect((await g.client(ALICE).responses.retrieve(id)).id).toBe(id);
    } finally {
      await g.close();
    }
  });
});

describe('retention', () => {
  it('a response is gone once its TTL passed (Redis expiry)', async () => {
    const g = await startTestGateway(redisConfig('{ retentionSeconds: 1 }', 'sy-ttl:'));
    try {
      const r = await g.client(ALICE).responses.create({ model: 'm', input: 'short-lived' });
      expect((await g.client(ALICE).responses.retrieve(r.id)).id).toBe(r.id);
      await sleep(1_300);
      expect(
        await g
          .client(ALICE)
          .responses.retrieve(r.id)
          .catch((e: unknown) => e),
      ).toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await g.close();
    }
  });
});

describe('state.responses.enabled: false', () => {
  it('keeps nothing, says store: false, and refuses what needs the store with a 400 naming the field', async () => {
    const g = await startTestGateway(`state: { responses: { enabled: false } }
keys: [{ name: alice, key: ${ALICE} }]
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: test-upstream-key }
models:
  m: { targets: [{ provider: up, model: house-1 }] }
`);
    try {
      const alice = g.client(ALICE);
      const r = await alice.responses.create({ model: 'm', input: 'hi' });
      expect(r).toMatchObject({ store: false });
      expect(await alice.responses.retrieve(r.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      const refusals = [
        ['previous_response_id', alice.responses.create({ model: 'm', input: 'x', previous_response_id: r.id }).catch((e: unknown) => e)],
        ['conversation', alice.responses.create({ model: 'm', input: 'x', conversation: 'conv_1' }).catch((e: unknown) => e)],
        ['input[0]', alice.responses.create({ model: 'm', input: [{ type: 'item_reference', id: r.output[0]!.id! }] }).catch((e: unknown) => e)],
      ] as const;
      for (const [param, call] of refusals) {
        const err = await call;
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_parameter', param });
      }
    } finally {
      await g.close();
    }
  });
});

describe('memory backend (the SQLite state file)', () => {
  it('keeps responses across a restart, and scope: team shares them within a team only', async () => {
    const text = `state:
  responses: { scope: team }
teams: { red: {}, blue: {} }
keys:
  - { name: alice, key: ${ALICE}, team: red }
  - { name: bob, key: ${BOB}, team: blue }
  - { name: carol, key: ${CAROL}, team: red }
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: test-upstream-key }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-1 }] }
`;
    const first = await startTestGateway(text);
    const r = await first.client(ALICE).responses.create({ model: 'm', input: 'remember me' });
    await first.close();
    const again = await startTestGateway({ file: first.configFile });
    try {
      expect((await again.client(ALICE).responses.retrieve(r.id)).output_text).toBe(r.output_text);
      // Carol is in Alice's team: she may chain it; Bob may not see it.
      upstream.reset();
      const next = await again.client(CAROL).responses.create({ model: 'm', input: 'and now?', previous_response_id: r.id });
      expect(transcript(upstream.requests[0]!)).toEqual(['user: remember me', `assistant: ${r.output_text}`, 'user: and now?']);
      expect(next.previous_response_id).toBe(r.id);
      expect(
        await again
          .client(BOB)
          .responses.retrieve(r.id)
          .catch((e: unknown) => e),
      ).toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await again.close();
    }
  });
});

describe('Redis unavailable', () => {
  it('answers are still served (not kept, a warning logged); reading a chain is 503 store_unavailable; it recovers', async () => {
    const g = await startTestGateway(redisConfig('{}', 'sy-down:'));
    try {
      const before = await g.client(ALICE).responses.create({ model: 'm', input: 'before' });
      await redis.stop();
      const during = await g.client(ALICE).responses.create({ model: 'm', input: 'during' });
      expect(during.output_text).toBe('re during (1 messages)');
      expect(g.logs.some((l) => l.msg === 'response not stored: the state backend failed' && l.responseId === during.id)).toBe(true);
      const chained = await g
        .client(ALICE)
        .responses.create({ model: 'm', input: 'x', previous_response_id: before.id })
        .catch((e: unknown) => e);
      expect(chained).toBeInstanceOf(OpenAI.APIError);
      expect((chained as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((chained as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'store_unavailable', type: 'service_unavailable_error' });
      await redis.start();
      // The restarted Redis is empty: a new chain works once the connection is back.
      await eventually(async () => {
        const r = await g.client(ALICE).responses.create({ model: 'm', input: 'after' });
        expect((await g.client(ALICE).responses.retrieve(r.id)).id).toBe(r.id);
      });
    } finally {
      await g.close();
    }
  });
});

/** Retries `check` until it passes or `timeoutMs` runs out. */
async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}
