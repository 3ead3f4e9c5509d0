/**
 * Codex CLI's requests through POST /v1/responses, with the official openai SDK, on a chat
 * upstream (the openai plugin against an OpenAI-compatible fake), an Anthropic one and a Gemini
 * one, plain and streamed. The requests are Codex's shapes as its source builds them (test/fixtures/codex):
 * client_metadata, an additional_tools item with the `functions` namespace (a custom apply_patch
 * tool with a Lark grammar, a function), an MCP namespace, a hosted web_search. The upstream plays
 * the model: first it calls apply_patch and the MCP tool, then, given their results, it answers.
 * What must hold: no 400; the calls come back as Codex routes them (custom_tool_call with the
 * patch as `input`, function_call with the bare name and its namespace); the second turn, with
 * custom_tool_call_output and function_call_output, reaches the upstream as tool results; what
 * was dropped is named in x-switchyard-dropped.
 */
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_KEY,
  expectValid,
  logLineFor,
  startFakeUpstream,
  startTestGateway,
  streamAnswer,
  type FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n';
const WRITE_ARGS = JSON.stringify({ path: 'notes.md', content: 'done' });
const FINAL = 'Created hello.txt.';

type Body = Record<string, unknown> & { input: unknown[] };
const codexRequest = (name: string): Body => JSON.parse(readFileSync(new URL(`../fixtures/codex/${name}.request.json`, import.meta.url), 'utf8'));

/** Whether the upstream request carries the tools' results (the second turn). */
const answered = (req: RecordedRequest): boolean => JSON.stringify(req.body.messages).includes('Success. Updated the following files');

// ------------------------------------------------------------------ the chat upstream

function chatAnswer(req: RecordedRequest): ScriptedResponse {
  const base = { id: 'chatcmpl-codex', created: 1_700_000_000, model: 'gpt-compatible-1' };
  const calls = [
    { id: 'call_patch', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } },
    { id: 'call_write', type: 'function', function: { name: 'mcp__files__write_file', arguments: WRITE_ARGS } },
  ];
  const done = answered(req);
  const usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
  if (!req.body.stream) {
    const message = done ? { role: 'assistant', content: FINAL } : { role: 'assistant', content: null, tool_calls: calls };
    return { status: 200, body: { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: done ? 'stop' : 'tool_calls', logprobs: null }], usage } };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  if (done) frames.push(chunk({ content: 'Created ' }), chunk({ content: 'hello.txt.' }), chunk({}, 'stop'));
  else {
    calls.forEach((call, index) => {
      const args = call.function.arguments;
      frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
      for (let i = 0; i < args.length; i += 9) frames.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 9) } }] }));
    });
    frames.push(chunk({}, 'tool_calls'));
  }
  frames.push(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n');
  return streamAnswer(frames);
}

// ------------------------------------------------------------------ the Anthropic upstream

function anthropicAnswer(req: RecordedRequest): ScriptedResponse {
  const done = answered(req);
  type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };
  const blocks: Block[] = done
    ? [{ type: 'text', text: FINAL }]
    : [
        { type: 'tool_use', id: 'toolu_patch', name: 'apply_patch', input: { input: PATCH } },
        { type: 'tool_use', id: 'toolu_write', name: 'mcp__files__write_file', input: JSON.parse(WRITE_ARGS) },
      ];
  const stop = done ? 'end_turn' : 'tool_use';
  const message = { id: 'msg_codex', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_sequence: null, usage: { input_tokens: 120, output_tokens: 30 } };
  if (!req.body.stream) return { status: 200, body: { ...message, content: blocks, stop_reason: stop } };
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const frames = [event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 120, output_tokens: 1 } } })];
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }), event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    } else {
      const json = JSON.stringify(block.input);
      frames.push(event('content_block_start', { index, content_block: { ...block, input: {} } }));
      for (let i = 0; i < json.length; i += 11) frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 11) } }));
    }
    frames.push(event('content_block_stop', { index }));
  });
  frames.push(event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 30 } }), event('message_stop', {}));
  return streamAnswer(frames);
}

// ------------------------------------------------------------------ the Gemini upstream

function geminiAnswer(req: RecordedRequest): ScriptedResponse {
  const done = JSON.stringify(req.body.contents).includes('Success. Updated the following files');
  const parts = done ? [{ text: FINAL }] : [{ functionCall: { name: 'apply_patch', args: { input: PATCH } } }, { functionCall: { name: 'mcp__files__write_file', args: JSON.parse(WRITE_ARGS) } }];
  const answer = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30, totalTokenCount: 150 },
    modelVersion: 'gemini-2.5-flash',
  };
  if (!req.url.includes(':streamGenerateContent')) return { status: 200, body: answer };
  return streamAnswer([`data: ${JSON.stringify(answer)}\r\n\r\n`]);
}

let t: TestGateway;
let chat: FakeUpstream;
let claude: FakeUpstream;
let gemini: FakeUpstream;
beforeAll(async () => {
  chat = await startFakeUpstream(chatAnswer);
  claude = await startFakeUpstream(anthropicAnswer);
  gemini = await startFakeUpstream(geminiAnswer);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  compat: { plugin: openai, baseUrl: "${chat.url}/v1", apiKey: test-openai-key }
  claude: { plugin: anthropic, baseUrl: "${claude.url}", apiKey: test-anthropic-key }
  google: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: test-gemini-key }
models:
  gpt-6-sol: { targets: [{ provider: compat, model: gpt-compatible-1 }] }
  # Codex sends text.verbosity and parallel_tool_calls, hints Anthropic and Gemini models have no
  # parameter for: dropped and reported by default.
  codex-on-claude: { targets: [{ provider: claude, model: claude-sonnet-4-5 }] }
  codex-on-gemini: { targets: [{ provider: google, model: gemini-2.5-flash }] }
`);
});
afterAll(async () => {
  await t?.close();
  await chat?.close();
  await claude?.close();
  await gemini?.close();
});

/** One Responses call as Codex makes it: the parsed response (a stream assembled from its events, each checked) and the dropped header. */
async function call(body: Body): Promise<{ output: OpenAI.Responses.ResponseOutputItem[]; dropped: string | null; events: string[]; requestId: string }> {
  const client = t.client();
  if (!body.stream) {
    const { data, response } = await client.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming).withResponse();
    expectValid('Response', data);
    return { output: data.output, dropped: response.headers.get('x-switchyard-dropped'), events: [], requestId: response.headers.get('x-request-id')! };
  }
  const { data: stream, response } = await client.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).withResponse();
  const events: string[] = [];
  let output: OpenAI.Responses.ResponseOutputItem[] = [];
  for await (const event of stream) {
    expectValid('ResponseStreamEvent', event);
    events.push(event.type);
    if (event.type === 'response.completed') output = event.response.output;
  }
  expect(events.at(-1)).toBe('response.completed');
  return { output, dropped: response.headers.get('x-switchyard-dropped'), events, requestId: response.headers.get('x-request-id')! };
}

/** Codex's next request: the items it got back, then its tools' outputs. */
function secondTurn(first: Body, output: OpenAI.Responses.ResponseOutputItem[]): Body {
  const patch = output.find((o) => o.type === 'custom_tool_call')!;
  const write = output.find((o) => o.type === 'function_call')!;
  return {
    ...first,
    input: [
      ...first.input,
      ...output,
      { type: 'custom_tool_call_output', call_id: patch.call_id, output: 'Success. Updated the following files:\nA hello.txt\n' },
      { type: 'function_call_output', call_id: write.call_id, output: 'wrote notes.md' },
    ],
  };
}

const cases = [
  { alias: 'gpt-6-sol', fixture: 'responses-lite', upstream: () => chat, droppedTool: 'input[0].tools[2] (web_search)' },
  { alias: 'codex-on-claude', fixture: 'responses-lite', upstream: () => claude, droppedTool: 'input[0].tools[2] (web_search), verbosity (low)' },
  { alias: 'codex-on-gemini', fixture: 'responses-lite', upstream: () => gemini, droppedTool: 'input[0].tools[2] (web_search), verbosity (low), parallel_tool_calls (false)' },
  { alias: 'gpt-6-sol', fixture: 'responses-classic', upstream: () => chat, droppedTool: 'tools[3] (web_search)' },
];

describe.each(cases)('Codex ($fixture) on $alias', ({ alias, fixture, upstream, droppedTool }) => {
  it.each([false, true])('stream %s: the calls come back as Codex routes them, the second turn answers, the drops are named', async (stream) => {
    const first: Body = { ...codexRequest(fixture), model: alias, stream };
    upstream().reset();
    const one = await call(first);
    expect(one.dropped).toBe(`client_metadata, ${droppedTool}`);
    expect((await logLineFor(t, one.requestId)).dropped).toEqual(expect.arrayContaining(['client_metadata', droppedTool.split(' ')[0]]));
    expect(one.output.filter((o) => o.type !== 'reasoning')).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: PATCH, call_id: expect.any(String) }),
      expect.objectContaining({ type: 'function_call', name: 'write_file', namespace: 'mcp__files', arguments: WRITE_ARGS, call_id: expect.any(String) }),
    ]);
    expect(one.output.find((o) => o.type === 'custom_tool_call')).not.toHaveProperty('namespace');
    if (stream) {
      expect(one.events).toContain('response.custom_tool_call_input.delta');
      expect(one.events).toContain('response.custom_tool_call_input.done');
      expect(one.events).toContain('response.function_call_arguments.done');
    }

    // What the upstream was sent: the tools flattened, nothing of client_metadata or web_search.
    const sent = upstream().requests[0].body;
    expect(JSON.stringify(sent)).not.toMatch(/client_metadata|web_search|019a7c3e-6000/);
    const tools = (sent.tools as Array<{ name?: string; function?: { name: string }; functionDeclarations?: Array<{ name: string }> }>).flatMap((tool) => tool.functionDeclarations ?? [tool]);
    const names = tools.map((tool) => tool.function?.name ?? tool.name);
    expect(names).toEqual(['apply_patch', 'exec_command', 'mcp__files__write_file']);

    const two = await call(secondTurn(first, one.output));
    const text = two.output.flatMap((o) => (o.type === 'message' ? o.content : [])).map((c) => (c.type === 'output_text' ? c.text : ''));
    expect(text.join('')).toBe(FINAL);
    const results = JSON.stringify(upstream().requests[1].body);
    expect(results).toContain('Success. Updated the following files');
    expect(results).toContain('wrote notes.md');
  });
});

describe('strict', () => {
  it('x-switchyard-strict turns the first drop into a 400 naming it, before any upstream call', async () => {
    chat.reset();
    const body = { ...codexRequest('responses-lite'), model: 'gpt-6-sol', stream: false };
    const err = await t
      .client()
      .responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming, { headers: { 'x-switchyard-strict': 'true' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'client_metadata', code: 'unsupported_parameter' });
    expect(chat.requests).toHaveLength(0);
  });
});
