import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { callFactory, sseEventsOf } from 'switchyard-gateway/kit/testing';
import { createAnthropicStreamTranslator as anthropicStream } from '../../translate/anthropic/stream.ts';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import { chatToMessage } from './response.ts';
import { MessagesStreamWriter, toSse } from './stream.ts';
import { foldChunks, shapeOf, without } from './testing.ts';
import type { AnthropicEvent } from './types.ts';

const OPENAI = new URL('../../../test/fixtures/openai/', import.meta.url);
const AZURE = new URL('../../../test/fixtures/azure/', import.meta.url);
const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);
const request = { model: 'my-alias', max_tokens: 100, messages: [], stop_sequences: ['END'] };

// ---------------------------------------------------------------- helpers

/**
 * Anthropic's event grammar as a state machine: message_start first (once); pings anywhere after
 * it; blocks opened at the next index (0, 1, 2, ...) only when none is open, deltas of the open
 * block's kind, closed in order; message_delta once all are closed; message_stop last. An error
 * event ends the stream wherever it comes. Returns the violations (none: []).
 */
type State = 'before' | 'message' | 'delta' | 'stopped' | 'failed';
interface LooseEvent {
  type: string;
  index?: number;
  content_block?: { type?: string };
  delta?: { type?: string };
}

function grammarViolations(events: readonly object[]): string[] {
  const problems: string[] = [];
  const DELTA_OF: Record<string, string[]> = { text: ['text_delta', 'citations_delta'], thinking: ['thinking_delta', 'signature_delta'], tool_use: ['input_json_delta'] };
  let state = 'before' as State;
  let open: { index?: number; type?: string } | undefined;
  let next = 0;
  for (const [i, e] of (events as LooseEvent[]).entries()) {
    const at = `event ${i} (${e.type})`;
    if (state === 'stopped' || state === 'failed') {
      problems.push(`${at} after the stream ended`);
      continue;
    }
    if (e.type === 'error') {
      state = 'failed';
      continue;
    }
    if (state === 'before') {
      if (e.type !== 'message_start') problems.push(`${at} before message_start`);
      state = 'message';
      continue;
    }
    switch (e.type) {
      case 'ping':
        break;
      case 'content_block_start':
        if (state !== 'message') problems.push(`${at} after message_delta`);
        if (open) problems.push(`${at} while block ${open.index} is open`);
        if (e.index !== next) problems.push(`${at} index ${e.index}, expected ${next}`);
        open = { index: e.index, type: e.content_block?.type };
        next++;
        break;
      case 'content_block_delta':
        if (!open || e.index !== open.index) problems.push(`${at} for block ${e.index}, open: ${open?.index}`);
        else if (!DELTA_OF[open.type ?? '']?.includes(e.delta?.type ?? '')) problems.push(`${at} ${e.delta?.type} in a ${open.type} block`);
        break;
      case 'content_block_stop':
        if (!open || e.index !== open.index) problems.push(`${at} closes ${e.index}, open: ${open?.index}`);
        open = undefined;
        break;
      case 'message_delta':
        if (open) problems.push(`${at} while block ${open.index} is open`);
        if (state === 'delta') problems.push(`${at} twice`);
        state = 'delta';
        break;
      case 'message_stop':
        if (state !== 'delta') problems.push(`${at} without message_delta`);
        state = 'stopped';
        break;
      default:
        problems.push(`${at}: unknown event`);
    }
  }
  if (state !== 'stopped' && state !== 'failed') problems.push(`the stream ended in state ${state}`);
  return problems;
}

/** The writer over a whole chunk stream. */
function write(chunks: ChatCompletionChunk[], req: Record<string, unknown> = request): AnthropicEvent[] {
  const writer = new MessagesStreamWriter(req);
  return [...chunks.flatMap((c) => writer.push(structuredClone(c))), ...writer.end()];
}

/**
 * The message the official SDK's MessageStream accumulates from an SSE body (its `finalMessage()`),
 * without the `parsed_output` its structured-output helper adds to every message (null without
 * an output_config.format): not a field of the wire message.
 */
async function sdkFinalMessage(sse: string): Promise<unknown> {
  const client = new Anthropic({
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream', 'request-id': 'req_test' } }),
  });
  const message = await client.messages.stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  return without(message, ['parsed_output']);
}

const chunksOf = async (dir: URL, name: string) => (await sseEventsOf(dir, name)).map((e) => e.data as ChatCompletionChunk);

/** A recorded Anthropic stream through the anthropic plugin: the chat chunks the gateway would hand over. */
async function viaAnthropicPlugin(name: string): Promise<ChatCompletionChunk[]> {
  const translator = anthropicStream(callFactory({ provider: 'anthropic', model: 'claude-test' })({ stream: true }));
  const chunks: ChatCompletionChunk[] = [];
  for (const event of await sseEventsOf(ANTHROPIC, name)) {
    const out = translator.push(event);
    if (out) chunks.push(...(Array.isArray(out) ? out : [out]));
  }
  return chunks;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): ChatCompletionChunk =>
  ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish, ...extra }] }) as ChatCompletionChunk;
const call = (index: number, fields: { id?: string; name?: string; args?: string }) => ({
  tool_calls: [
    { index, ...(fields.id ? { id: fields.id, type: 'function' } : {}), function: { ...(fields.name ? { name: fields.name } : {}), ...(fields.args !== undefined ? { arguments: fields.args } : {}) } },
  ],
});
const summary = (events: AnthropicEvent[]) =>
  events.map((e) => {
    if (e.type === 'content_block_start') return `start ${e.index} ${e.content_block.type}`;
    if (e.type === 'content_block_delta') return `delta ${e.index} ${Object.values(e.delta)[1]}`;
    if (e.type === 'content_block_stop') return `stop ${e.index}`;
    return e.type;
  });

// ---------------------------------------------------------------- recorded streams

const RECORDED: Array<[string, () => Promise<ChatCompletionChunk[]>]> = [
  ['openai stream-tool-call', () => chunksOf(OPENAI, 'stream-tool-call')],
  ['openai stream-tool-result-followup', () => chunksOf(OPENAI, 'stream-tool-result-followup')],
  ['openai stream-structured-output', () => chunksOf(OPENAI, 'stream-structured-output')],
  ['openai stream-logprobs', () => chunksOf(OPENAI, 'stream-logprobs')],
  ['openai stream-refusal', () => chunksOf(OPENAI, 'stream-refusal')],
  ['azure stream-basic-content-filter', () => chunksOf(AZURE, 'stream-basic-content-filter')],
  ['azure stream-model-router-usage', () => chunksOf(AZURE, 'stream-model-router-usage')],
  ['anthropic stream-basic via the anthropic plugin', () => viaAnthropicPlugin('stream-basic')],
  ['anthropic stream-tool-use via the anthropic plugin', () => viaAnthropicPlugin('stream-tool-use')],
  ['anthropic stream-thinking via the anthropic plugin', () => viaAnthropicPlugin('stream-thinking')],
];

describe('MessagesStreamWriter over recorded chat streams', () => {
  it('the grammar checker accepts Anthropic’s own recorded streams', async () => {
    for (const name of ['stream-basic', 'stream-tool-use', 'stream-thinking']) {
      const events = (await sseEventsOf(ANTHROPIC, name)).map((e) => e.data as { type: string });
      expect(grammarViolations(events), name).toEqual([]);
    }
  });

  it('the grammar checker catches what breaks the grammar', async () => {
    const start = { type: 'message_start' };
    const text = (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text' } });
    const end = [{ type: 'message_delta' }, { type: 'message_stop' }];
    expect(grammarViolations([text(0)])).toEqual(['event 0 (content_block_start) before message_start', 'the stream ended in state message']);
    expect(grammarViolations([start, text(1), { type: 'content_block_stop', index: 1 }, ...end])).toEqual(['event 1 (content_block_start) index 1, expected 0']);
    expect(grammarViolations([start, text(0), text(1), ...end])).toHaveLength(2);
    expect(grammarViolations([start, text(0), { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta' } }, { type: 'content_block_stop', index: 0 }, ...end])).toEqual([
      'event 2 (content_block_delta) input_json_delta in a text block',
    ]);
    expect(grammarViolations([start, { type: 'message_stop' }])).toEqual(['event 1 (message_stop) without message_delta']);
    expect(grammarViolations([start, ...end, { type: 'ping' }])).toEqual(['event 3 (ping) after the stream ended']);
    // Anthropic itself leaves a tool_use block cut by max_tokens open (recorded); the writer always closes its blocks.
    const cut = (await sseEventsOf(ANTHROPIC, 'stream-max-tokens-partial-tool-input')).map((e) => e.data as object);
    expect(grammarViolations(cut)).toEqual([expect.stringMatching(/message_delta\) while block 1 is open$/)]);
  });

  it.each(RECORDED)('%s: Anthropic’s grammar, and the SDK’s finalMessage() equals chatToMessage of the same answer', async (_name, load) => {
    const chunks = await load();
    const events = write(chunks);
    expect(grammarViolations(events)).toEqual([]);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['message_start', 'ping']);
    const viaSdk = await sdkFinalMessage(events.map(toSse).join(''));
    expect(viaSdk).toEqual(chatToMessage(foldChunks(chunks), request));
  });

  it('stream-tool-call: one tool_use block whose argument fragments pass through', async () => {
    const events = write(await chunksOf(OPENAI, 'stream-tool-call'));
    const start = events.find((e) => e.type === 'content_block_start');
    expect(start).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', input: {} } });
    const json = events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? [e.delta.partial_json] : [])).join('');
    expect(JSON.parse(json)).toEqual({ country: 'UK' });
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null } });
  });

  it('stream-refusal: the refusal as text, stop_reason refusal, usage from the usage chunk', async () => {
    const events = write(await chunksOf(OPENAI, 'stream-refusal'));
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'refusal', stop_sequence: null },
      usage: { input_tokens: 17, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 13 },
    });
  });

  it('anthropic stream-thinking via the plugin: a thinking block closed by its signature_delta, then a text block', async () => {
    const events = write(await viaAnthropicPlugin('stream-thinking'));
    expect(events.filter((e) => e.type === 'content_block_start')).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    ]);
    const signature = events.find((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta');
    expect(signature).toMatchObject({ index: 0, delta: { signature: expect.stringMatching(/^EvMCCkYICxgC/) } });
    expect(events[events.indexOf(signature!) + 1]).toEqual({ type: 'content_block_stop', index: 0 });
  });

  it('a signature with no thinking open opens one; a redacted block stands alone; reasoning after a signature is a new block', () => {
    const chunk = (delta: Record<string, unknown>) => ({ id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] });
    const events = write([
      chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'gemini:call:s1' }] }),
      chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: 'EmwK' }] }),
      chunk({ reasoning_content: 'more' }),
      chunk({ content: 'done' }),
    ]);
    expect(grammarViolations(events)).toEqual([]);
    expect(events.filter((e) => e.type === 'content_block_start' || e.type === 'content_block_delta').map((e) => ('content_block' in e ? e.content_block : e.delta))).toEqual([
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'signature_delta', signature: 'gemini:call:s1' },
      { type: 'redacted_thinking', data: 'EmwK' },
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'thinking_delta', thinking: 'more' },
      { type: 'text', text: '' },
      { type: 'text_delta', text: 'done' },
    ]);
  });

  it('anthropic stream-max-tokens-partial-tool-input via the plugin: the cut tool input passes through as it came; the SDK parses what it can, the JSON answer says {}', async () => {
    const chunks = await viaAnthropicPlugin('stream-max-tokens-partial-tool-input');
    const events = write(chunks);
    expect(grammarViolations(events)).toEqual([]);
    const viaSdk = (await sdkFinalMessage(events.map(toSse).join(''))) as Anthropic.Message;
    const message = chatToMessage(foldChunks(chunks), request);
    expect(viaSdk.stop_reason).toBe('max_tokens');
    expect(message.stop_reason).toBe('max_tokens');
    expect((viaSdk.content[1] as Anthropic.ToolUseBlock).input).toMatchObject({ filename: 'taxes.txt' });
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'make_file', input: {} });
  });
});

describe('MessagesStreamWriter: the events have the shapes of recorded Anthropic events', () => {
  /** Fields recorded events carry that no chat stream says (cache TTL split, service tier, region). */
  const EXTRAS = ['message.usage.cache_creation', 'message.usage.service_tier', 'message.usage.inference_geo'];

  it.each(['stream-tool-use', 'stream-thinking'])('%s', async (name) => {
    const recorded = (await sseEventsOf(ANTHROPIC, name)).map((e) => e.data as AnthropicEvent);
    const ours = write(await viaAnthropicPlugin(name));
    const key = (e: AnthropicEvent) => (e.type === 'content_block_start' ? `start ${e.content_block.type}` : e.type === 'content_block_delta' ? `delta ${e.delta.type}` : e.type);
    for (const mine of ours) {
      const theirs = recorded.find((r) => key(r) === key(mine));
      expect(theirs, key(mine)).toBeDefined();
      if (mine.type === 'message_delta') {
        // Newer API versions repeat the input counts here; the recordings predate that.
        expect(shapeOf(mine.delta)).toEqual(shapeOf((theirs as typeof mine).delta));
        expect(typeof mine.usage.output_tokens).toBe('number');
      } else {
        expect(shapeOf(mine)).toEqual(shapeOf(without(theirs, EXTRAS)));
      }
    }
  });
});

// ---------------------------------------------------------------- behaviour

describe('MessagesStreamWriter: blocks', () => {
  it('text, a tool call, then text again: three blocks, indexes 0, 1, 2', () => {
    const events = write([
      chunk({ role: 'assistant', content: 'Let me look.' }),
      chunk(call(0, { id: 'call_a', name: 'look', args: '{"q":' })),
      chunk(call(0, { args: '1}' })),
      chunk({ content: 'Done.' }),
      chunk({}, 'stop'),
    ]);
    expect(summary(events)).toEqual([
      'message_start',
      'ping',
      'start 0 text',
      'delta 0 Let me look.',
      'stop 0',
      'start 1 tool_use',
      'delta 1 {"q":',
      'delta 1 1}',
      'stop 1',
      'start 2 text',
      'delta 2 Done.',
      'stop 2',
      'message_delta',
      'message_stop',
    ]);
  });

  it('parallel tool calls: one tool_use block per chat tool-call index', () => {
    const events = write([
      chunk(call(0, { id: 'call_a', name: 'f', args: '{}' })),
      chunk(call(1, { id: 'call_b', name: 'g', args: '' })),
      chunk(call(1, { args: '{"x":2}' })),
      chunk({}, 'tool_calls'),
    ]);
    expect(events.filter((e) => e.type === 'content_block_start')).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} } },
    ]);
    expect(grammarViolations(events)).toEqual([]);
  });

  it('a tool call whose name comes later opens when it comes, with the fragments before it', () => {
    const events = write([chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { arguments: '{"a"' } }] }), chunk(call(0, { name: 'f', args: ':1}' })), chunk({}, 'tool_calls')]);
    expect(summary(events).slice(2, 5)).toEqual(['start 0 tool_use', 'delta 0 {"a":1}', 'stop 0']);
  });

  it('a tool call that never names itself still gets its block at the end', () => {
    const events = write([chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(events.find((e) => e.type === 'content_block_start')).toMatchObject({ content_block: { type: 'tool_use', id: 'toolu_0', name: '' } });
    expect(grammarViolations(events)).toEqual([]);
  });

  it('fragments for a tool call whose block was closed are dropped (no way back in the grammar)', () => {
    const events = write([chunk(call(0, { id: 'a', name: 'f', args: '{' })), chunk(call(1, { id: 'b', name: 'g', args: '{}' })), chunk(call(0, { args: '}' })), chunk({}, 'tool_calls')]);
    expect(grammarViolations(events)).toEqual([]);
    expect(summary(events)).not.toContain('delta 0 }');
  });

  it('reasoning_content (or reasoning) → a thinking block before the text', () => {
    expect(summary(write([chunk({ reasoning_content: 'hmm' }), chunk({ reasoning: ' ok' }), chunk({ content: 'Yes.' }), chunk({}, 'stop')])).slice(2, 8)).toEqual([
      'start 0 thinking',
      'delta 0 hmm',
      'delta 0  ok',
      'stop 0',
      'start 1 text',
      'delta 1 Yes.',
    ]);
  });

  it('empty and null deltas open nothing', () => {
    expect(summary(write([chunk({ role: 'assistant', content: '' }), chunk({ content: null, refusal: null }), chunk({}, 'stop')]))).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
  });
});

describe('MessagesStreamWriter: message fields', () => {
  it('message_start: the chunk’s id and model, empty content, zero usage until the usage chunk', () => {
    const [start] = write([chunk({ content: 'x' })]);
    expect(start).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'gpt-x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
      },
    });
  });

  it('message_delta: cumulative usage from the usage chunk, cache reads and writes apart', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 } };
    const events = write([chunk({ content: 'x' }), chunk({}, 'length'), { ...chunk({}), choices: [], usage }]);
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { input_tokens: 10, cache_creation_input_tokens: 30, cache_read_input_tokens: 60, output_tokens: 20 },
    });
  });

  it('message_delta without any usage: output_tokens 0', () => {
    expect(write([chunk({ content: 'x' }), chunk({}, 'stop')]).at(-2)).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } });
  });

  it('a stop string the server names (vLLM) → stop_sequence', () => {
    expect(write([chunk({ content: 'x' }), chunk({}, 'stop', { stop_reason: 'END' })]).at(-2)).toMatchObject({ delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' } });
  });

  it('Azure’s filter-only first chunk (no choices, no id) says nothing; the next chunk starts the message', () => {
    const writer = new MessagesStreamWriter(request);
    expect(writer.push({ id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [], prompt_filter_results: [] } as ChatCompletionChunk)).toEqual([]);
    expect(writer.started).toBe(false);
    expect(writer.push(chunk({ content: 'x' }))[0]).toMatchObject({ type: 'message_start', message: { id: 'msg_1' } });
    expect(writer.started).toBe(true);
  });

  it('a stream with no chunks still makes a whole message (named after the request’s model)', () => {
    const events = new MessagesStreamWriter(request).end();
    expect(summary(events)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(events[0]).toMatchObject({ message: { model: 'my-alias', id: expect.stringMatching(/^msg_/) } });
  });
});

describe('MessagesStreamWriter: failure', () => {
  it('fail() → an error event in Anthropic’s envelope, and then nothing', () => {
    const writer = new MessagesStreamWriter(request);
    writer.push(chunk({ content: 'partial' }));
    expect(writer.fail(new GatewayError('upstream_error', 'The provider failed.'))).toEqual([{ type: 'error', error: { type: 'api_error', message: 'The provider failed.' } }]);
    expect(writer.push(chunk({ content: 'more' }))).toEqual([]);
    expect(writer.end()).toEqual([]);
    expect(writer.fail(new GatewayError('timeout', 'again'))).toEqual([]);
  });

  it('the SDK raises the error event as an APIError of that type, like the recorded overloaded stream', async () => {
    const writer = new MessagesStreamWriter(request);
    const events = [...writer.push(chunk({ content: 'partial' })), ...writer.fail(new GatewayError('provider_unavailable', 'Overloaded'))];
    expect(grammarViolations(events)).toEqual([]);
    const failure = await sdkFinalMessage(events.map(toSse).join('')).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).type).toBe('overloaded_error');
    const recorded = (await sseEventsOf(ANTHROPIC, 'stream-error-overloaded'))[0];
    expect(recorded.event).toBe('error');
    expect(shapeOf(events.at(-1))).toEqual(shapeOf(without(recorded.data, ['error.details'])));
  });
});

describe('toSse', () => {
  it('frames an event as Anthropic does: its type as the event name, its JSON as data', () => {
    expect(toSse({ type: 'content_block_stop', index: 2 })).toBe('event: content_block_stop\ndata: {"type":"content_block_stop","index":2}\n\n');
    expect(toSse({ type: 'ping' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
  });
});
