/**
 * The tolerant reader that fails loudly (issue 19): a Claude-Code-shaped Messages request, sent
 * with the real @anthropic-ai/sdk to a gateway whose model is an OpenAI-compatible server (a fake
 * on loopback), is served with what the translation left out named in `x-switchyard-dropped`, the
 * log line's `dropped` and `switchyard_dropped_fields_total`; strict (header, key, alias) turns the
 * same request into Anthropic's 400 naming the field; `thread` gets the 400 the SDK's tool runner
 * falls back on by itself.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import {
  DEV_KEY,
  loadFixture,
  replay,
  logLineFor,
  startFakeUpstream,
  startTestGateway,
  streamAnswer,
  type FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

const STRICT_KEY = 'sk-strict-0123456789';

/** Plays a model: a call to the client's first tool until a tool result came back, then text; streamed when asked. */
function modelTurn(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { model: string; stream?: boolean; tools?: Array<{ function: { name: string } }>; messages: Array<{ role: string }> };
  if (body.model === 'broken-llm') return { status: 500, body: { error: { message: 'the upstream fell over', type: 'server_error' } } };
  const tool = body.tools?.[0]?.function.name;
  const answered = body.messages.at(-1)?.role === 'tool';
  const message =
    tool && !answered
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: '{"path":"hello.txt","text":"hi"}' } }] }
      : { role: 'assistant', content: 'Done: the file is written.' };
  const finish = message.content === null ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 };
  const base = { id: 'chatcmpl-1', created: 1_760_000_000, model: body.model };
  if (!body.stream) return { status: 200, body: { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage } };
  const chunk = (delta: unknown, finishReason: string | null, extra = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  const delta = message.content === null ? { role: 'assistant', tool_calls: message.tool_calls?.map((c, index) => ({ index, ...c })) } : { role: 'assistant', content: message.content };
  return streamAnswer([chunk(delta, null), chunk({}, finish), `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n']);
}

let upstream: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream(modelTurn);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: careful, key: ${STRICT_KEY}, strict: true }
providers:
  local: { plugin: openai, baseUrl: "${upstream.url}/v1" }
models:
  claude-opus-5: { targets: [{ provider: local, model: small-llm, reasoning: false }] }
  thinker: { targets: [{ provider: local, model: reasoning-llm }] }
  careful: { strict: true, targets: [{ provider: local, model: small-llm, reasoning: false }] }
  broken: { targets: [{ provider: local, model: broken-llm }] }
`);
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

const client = (options: { apiKey?: string; headers?: Record<string, string> } = {}) =>
  new Anthropic({ apiKey: options.apiKey ?? DEV_KEY, baseURL: t.url, maxRetries: 0, defaultHeaders: options.headers });

const WRITE_FILE = {
  name: 'Write',
  description: 'Write a file',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
};

/** What Claude Code sends on a turn (beta Messages): context editing, thinking, its tools and a server tool only Anthropic runs. */
function claudeCodeTurn(model = 'claude-opus-5') {
  return {
    model,
    max_tokens: 16_000,
    system: [{ type: 'text' as const, text: 'You are Claude Code.' }],
    thinking: { type: 'enabled' as const, budget_tokens: 8_192 },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' as const }] },
    tools: [WRITE_FILE, { type: 'code_execution_20250825' as const, name: 'code_execution' as const }],
    metadata: { user_id: 'user_abc_session_1' },
    messages: [{ role: 'user' as const, content: 'Write hi to hello.txt' }],
    betas: ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'],
  };
}

const EXPECTED_HEADER = 'tools[1] (code_execution_20250825), context_management, reasoning_effort (medium)';

async function scrapeDropped(): Promise<Map<string, number>> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^switchyard_dropped_fields_total\{([^}]*)\} (\d+)/gm)) counts.set(m[1], Number(m[2]));
  return counts;
}

describe('a Claude Code turn on an OpenAI-compatible model', () => {
  it('is served, with what was dropped in the header, the log line and the counter', async () => {
    const before = await scrapeDropped();
    const { data, response } = await client().beta.messages.create(claudeCodeTurn()).withResponse();
    expect(data.stop_reason).toBe('tool_use');
    expect(data.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'Write', input: { path: 'hello.txt' } });

    const sent = upstream.requests.at(-1)!.body;
    expect(sent.model).toBe('small-llm');
    expect(sent.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['Write']);
    for (const field of ['reasoning_effort', 'context_management', 'thinking']) expect(sent).not.toHaveProperty(field);

    expect(response.headers.get('x-switchyard-dropped')).toBe(EXPECTED_HEADER);
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line.dropped).toEqual(['tools[1]', 'context_management', 'reasoning_effort']);

    const after = await scrapeDropped();
    for (const field of ['reasoning_effort', 'context_management', 'tools']) {
      const labels = `field="${field}",ingress="messages"`;
      const key = [...after.keys()].find((k) => k.includes(`field="${field}"`) && k.includes('ingress="messages"'));
      expect(key, labels).toBeDefined();
      expect(after.get(key!)! - (before.get(key!) ?? 0)).toBe(1);
    }
  });

  it('streamed: the header on the event stream, and the SDK assembles the answer', async () => {
    const { data: stream, response } = await client()
      .beta.messages.create({ ...claudeCodeTurn(), stream: true })
      .withResponse();
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('message_stop');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-switchyard-dropped')).toBe(EXPECTED_HEADER);
    expect(upstream.requests.at(-1)!.body.stream).toBe(true);
  });

  it('a model that reasons keeps reasoning_effort: only the Anthropic-only fields are dropped', async () => {
    const { response } = await client().beta.messages.create(claudeCodeTurn('thinker')).withResponse();
    expect(upstream.requests.at(-1)!.body.reasoning_effort).toBe('medium');
    expect(response.headers.get('x-switchyard-dropped')).toBe('tools[1] (code_execution_20250825), context_management');
  });

  it('an error answer names what was dropped too', async () => {
    const err = await client()
      .beta.messages.create(claudeCodeTurn('broken'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    const headers = (err as InstanceType<typeof Anthropic.APIError>).headers;
    expect(headers?.get('x-switchyard-dropped')).toBe('tools[1] (code_execution_20250825), context_management');
  });

  it('a request with nothing dropped has no header', async () => {
    const { response } = await client()
      .messages.create({ model: 'claude-opus-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.has('x-switchyard-dropped')).toBe(false);
    expect((await logLineFor(t, response.headers.get('x-request-id')!)).dropped).toBeUndefined();
  });
});

describe('strict: the same turn is refused with a 400 naming the field, before any upstream call', () => {
  it.each([
    ['the x-switchyard-strict header', { headers: { 'x-switchyard-strict': 'true' } }, 'claude-opus-5', 'tools[1]'],
    ['a strict key', { apiKey: STRICT_KEY }, 'claude-opus-5', 'tools[1]'],
    ['a strict alias', {}, 'careful', 'tools[1]'],
  ])('%s', async (_, options, model, field) => {
    const err = await client(options)
      .beta.messages.create(claudeCodeTurn(model))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const apiError = err as InstanceType<typeof Anthropic.APIError>;
    const body = apiError.error as { type: string; error: { type: string; message: string }; request_id: string };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain(`'${field}'`);
    expect(body.error.message).toContain('strict');
    expect(body.request_id).toBe(apiError.requestID);
    expect(upstream.requests).toHaveLength(0);
  });

  it('a strict request that drops only reasoning_effort is refused naming it', async () => {
    const err = await client({ headers: { 'x-switchyard-strict': 'true' } })
      .messages.create({ model: 'claude-opus-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain("'reasoning_effort'");
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('the tool runner (message threads) on a translated model', () => {
  it('gets thread_unsupported_request, falls back to the full history by itself, and finishes the loop', async () => {
    const written: string[] = [];
    const write = betaTool({
      name: 'Write',
      description: 'Write a file',
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
      run: ({ path, text }) => {
        written.push(`${path}=${text}`);
        return 'written';
      },
    });
    const final = await client().beta.messages.toolRunner({ model: 'claude-opus-5', max_tokens: 1000, tools: [write], messages: [{ role: 'user', content: 'Write hi to hello.txt' }] });
    expect(written).toEqual(['hello.txt=hi']);
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Done: the file is written.' })]);

    // The refused first turn (it carried `thread`) never reached the upstream; the resent turns did, the last one with the tool result.
    const refused = t.logs.filter((l) => l.msg === 'request' && l.status === 400 && String(l.errorMessage).includes("'thread'"));
    expect(refused).toHaveLength(1);
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1].body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('the 400 carries the details the SDK reads', async () => {
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': DEV_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 10, thread: { type: 'create' }, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; details: { error_code: string } }; request_id: string };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.details.error_code).toBe('thread_unsupported_request');
    expect(body.request_id).toBe(res.headers.get('request-id'));
  });
});

describe('chat: a parameter newer than the gateway', () => {
  let claude: FakeUpstream;
  let g: TestGateway;
  beforeAll(async () => {
    claude = await startFakeUpstream(() => replay(loadFixture(fixturesOf('anthropic'), 'messages-system-prompt')));
    g = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  local: { plugin: openai, baseUrl: "${upstream.url}/v1" }
  plain: { plugin: openai, baseUrl: "${upstream.url}/v1", developerRole: false }
  claude: { plugin: anthropic, baseUrl: "${claude.url}", apiKey: test-anthropic-key }
models:
  local: { targets: [{ provider: local, model: small-llm }] }
  plain: { targets: [{ provider: plain, model: small-llm }] }
  sonnet: { targets: [{ provider: claude, model: claude-sonnet-5 }] }
`);
  });
  afterAll(async () => {
    await g?.close();
    await claude?.close();
  });

  const post = (model: string, headers: Record<string, string> = {}) =>
    fetch(`${g.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], a_new_param: { on: true } }),
    });

  it('goes as it is to an OpenAI-compatible server, nothing reported', async () => {
    const res = await post('local');
    expect(res.status).toBe(200);
    expect(upstream.requests.at(-1)!.body.a_new_param).toEqual({ on: true });
    expect(res.headers.has('x-switchyard-dropped')).toBe(false);
  });

  it('is dropped and reported for a translated target; refused when strict', async () => {
    const res = await post('sonnet');
    expect(res.status).toBe(200);
    expect(claude.requests.at(-1)!.body).not.toHaveProperty('a_new_param');
    expect(res.headers.get('x-switchyard-dropped')).toBe('a_new_param');
    const strict = await post('sonnet', { 'x-switchyard-strict': 'true' });
    expect(strict.status).toBe(400);
    const body = (await strict.json()) as { error: { code: string; param: string } };
    expect(body.error).toMatchObject({ code: 'unsupported_parameter', param: 'a_new_param' });
  });

  it('a developer message reaches a server without that role (developerRole: false) as system, reported', async () => {
    const res = await fetch(`${g.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'plain',
        messages: [
          { role: 'developer', content: 'Be terse.' },
          { role: 'user', content: 'hi' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(upstream.requests.at(-1)!.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(res.headers.get('x-switchyard-dropped')).toBe('messages[0].role (developer)');
  });
});
