/**
 * Chat chunk streams → Responses event streams: the recorded OpenAI chat streams and made-up
 * ones for what they lack (reasoning, cut answers, odd tool-call deltas, failures). Every event
 * is checked against OpenAI's schema, the bookkeeping event by event, and the stream is read
 * back by the official SDK, which must end with what chatToResponse makes of the same answer.
 */
import { describe, expect, it } from 'vitest';
import { expectValid, sseEventsOf } from 'switchyard-gateway/kit/testing';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import { responseIds } from './ids.ts';
import { readResponsesRequest } from './request.ts';
import { chatToResponse } from './response.ts';
import { ResponsesStreamWriter, toSse } from './stream.ts';
import { checkResponsesStream, foldChunks, sdkReadsStream } from './testing.ts';
import type { ResponsesEvent } from './types.ts';

const FIXTURES = new URL('../../../test/fixtures/openai/', import.meta.url);
const ids = () => responseIds('req_s1', 1_700_000_000, () => 1_700_000_042);
const request = (body: Record<string, unknown> = {}) => readResponsesRequest({ model: 'my-alias', input: 'x', stream: true, ...body });

async function recorded(name: string): Promise<ChatCompletionChunk[]> {
  return (await sseEventsOf(FIXTURES, name)).map((e) => e.data as ChatCompletionChunk);
}

/** The whole stream: start, a push per chunk, end; every event valid by OpenAI's schema. */
function write(chunks: ChatCompletionChunk[], body: Record<string, unknown> = {}): ResponsesEvent[] {
  const writer = new ResponsesStreamWriter(request(body), ids());
  const events = [...writer.start(), ...chunks.flatMap((c) => writer.push(c)), ...writer.end()];
  for (const e of events) expectValid('ResponseStreamEvent', e);
  return events;
}

/** Checks a finished stream every way there is; returns its final response. */
async function checkAll(chunks: ChatCompletionChunk[], body: Record<string, unknown> = {}) {
  const events = write(chunks, body);
  const final = checkResponsesStream(events);
  // The same answer, not streamed, makes the same response.
  expect(final).toEqual(chatToResponse(foldChunks(chunks), request(body), ids()));
  // And the SDK, accumulating the events its own way, ends with it too.
  const sdk = await sdkReadsStream(events);
  expect(sdk.emitted.map((e) => e.type)).toEqual(events.map((e) => e.type));
  const { output_text, ...rest } = sdk.final;
  expect(rest).toMatchObject(JSON.parse(JSON.stringify(final)));
  return { events, final, outputText: output_text };
}

const types = (events: ResponsesEvent[]) => events.map((e) => e.type);
const deltas = (events: ResponsesEvent[], type: ResponsesEvent['type']) =>
  events
    .filter((e) => e.type === type)
    .map((e) => (e as { delta: string }).delta)
    .join('');

function chunk(delta: Record<string, unknown>, finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null, extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk {
  return { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'upstream-1', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra };
}
const usageChunk = (usage: NonNullable<ChatCompletionChunk['usage']>): ChatCompletionChunk => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-1',
  choices: [],
  usage,
});

describe('recorded OpenAI chat streams', () => {
  it('text (the tool-result follow-up): one message, one text part, deltas = done text, usage at the end', async () => {
    const { events, final, outputText } = await checkAll(await recorded('stream-tool-result-followup'));
    expect(types(events).slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types(events).slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(outputText).toBe(deltas(events, 'response.output_text.delta'));
    expect(outputText).toMatch(/London/);
    expect(final).toMatchObject({ status: 'completed', model: 'gpt-4o-mini-2024-07-18', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) }, completed_at: 1_700_000_042 });
  });

  it('a tool call: a function_call item, argument deltas = done arguments', async () => {
    const { events, final } = await checkAll(await recorded('stream-tool-call'));
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...Array(types(events).filter((t) => t === 'response.function_call_arguments.delta').length).fill('response.function_call_arguments.delta'),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.output).toEqual([{ type: 'function_call', id: 'fc_req_s1_0', call_id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', arguments: '{"country":"UK"}', status: 'completed' }]);
    expect(final.usage).toMatchObject({ input_tokens: 53, output_tokens: 15, total_tokens: 68 });
  });

  it('structured output: the JSON arrives as output_text', async () => {
    const { outputText } = await checkAll(await recorded('stream-structured-output'), { text: { format: { type: 'json_object' } } });
    expect(JSON.parse(outputText)).toMatchObject({ city: expect.any(String) });
  });

  it('a refusal: a refusal part with refusal deltas, no output_text', async () => {
    const { events, final } = await checkAll(await recorded('stream-refusal'));
    expect(types(events)).toContain('response.refusal.delta');
    expect(types(events)).not.toContain('response.output_text.delta');
    expect(final.output).toEqual([expect.objectContaining({ type: 'message', content: [{ type: 'refusal', refusal: deltas(events, 'response.refusal.delta') }] })]);
  });

  it('logprobs ride on the text deltas and end up on the part', async () => {
    const { events, final } = await checkAll(await recorded('stream-logprobs'), { include: ['message.output_text.logprobs'] });
    const perDelta = events.filter((e) => e.type === 'response.output_text.delta').flatMap((e) => (e as { logprobs: unknown[] }).logprobs);
    expect(perDelta.length).toBeGreaterThan(0);
    expect((final.output[0] as { content: Array<{ logprobs: unknown[] }> }).content[0].logprobs).toEqual(perDelta);
  });
});

describe('the writer', () => {
  it('the commitment point: start, role-only and usage-only chunks say nothing about the answer', () => {
    const writer = new ResponsesStreamWriter(request(), ids());
    expect(types(writer.start())).toEqual(['response.created', 'response.in_progress']);
    expect(writer.push(chunk({ role: 'assistant', content: '', refusal: null }))).toEqual([]);
    expect(writer.push(chunk({ content: '' }))).toEqual([]);
    const first = writer.push(chunk({ content: 'Hi' }));
    expect(types(first)).toEqual(['response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(first.map((e) => e.sequence_number)).toEqual([2, 3, 4]);
  });

  it('created names the model asked for, completed the one that answered; both echo the request', () => {
    const events = write([chunk({ content: 'Hi' }, 'stop')], { instructions: 'Be brief.', temperature: 0.1 });
    expect(events[0]).toMatchObject({ type: 'response.created', response: { model: 'my-alias', status: 'in_progress', output: [], instructions: 'Be brief.', temperature: 0.1 } });
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { model: 'upstream-1', status: 'completed', instructions: 'Be brief.' } });
    expect('usage' in (events[0] as { response: object }).response).toBe(false);
  });

  it('events are snapshots: what an event said is not changed by later ones', () => {
    const writer = new ResponsesStreamWriter(request(), ids());
    const head = writer.start();
    const added = writer.push(chunk({ content: 'Hel' }));
    writer.push(chunk({ content: 'lo' }, 'stop'));
    writer.end();
    expect(head[0]).toMatchObject({ response: { status: 'in_progress', output: [] } });
    expect(added[0]).toMatchObject({ item: { status: 'in_progress', content: [] } });
    expect(added[1]).toMatchObject({ part: { text: '' } });
  });

  it('reasoning, then text, then parallel calls: items in that order, each closed when the next kind begins', async () => {
    const chunks = [
      chunk({ role: 'assistant', reasoning_content: 'The user wants ' }),
      chunk({ reasoning_content: 'two cities.' }),
      chunk({ content: 'Checking ' }),
      chunk({ content: 'both.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }),
      // A provider interleaving the arguments of parallel calls: the first call is still open.
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk({ prompt_tokens: 30, completion_tokens: 40, total_tokens: 70, completion_tokens_details: { reasoning_tokens: 12 }, cost: 0.00042 }),
    ];
    const { events, final } = await checkAll(chunks, { reasoning: { effort: 'medium' } });
    expect(final.output.map((i) => [i.type, i.id, i.status])).toEqual([
      ['reasoning', 'rs_req_s1_0', 'completed'],
      ['message', 'msg_req_s1_1', 'completed'],
      ['function_call', 'fc_req_s1_2', 'completed'],
      ['function_call', 'fc_req_s1_3', 'completed'],
    ]);
    expect(final.output[0]).toMatchObject({ summary: [], content: [{ type: 'reasoning_text', text: 'The user wants two cities.' }] });
    expect(final.output[2]).toMatchObject({ call_id: 'call_a', arguments: '{"city":"Paris"}' });
    expect(final.usage).toEqual({
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 70,
      cost: 0.00042,
    });
    // The reasoning item is done before the message is added, the message before the first call.
    const at = (type: string, index: number) => events.findIndex((e) => e.type === type && (e as { output_index?: number }).output_index === index);
    expect(at('response.output_item.done', 0)).toBeLessThan(at('response.output_item.added', 1));
    expect(at('response.output_item.done', 1)).toBeLessThan(at('response.output_item.added', 2));
    expect(types(events)).toContain('response.reasoning_text.delta');
  });

  it('cut by the token limit: response.incomplete, the item being written incomplete, the earlier one completed', async () => {
    const chunks = [chunk({ reasoning_content: 'Think' }), chunk({ content: 'The capital of' }), chunk({}, 'length'), usageChunk({ prompt_tokens: 5, completion_tokens: 16, total_tokens: 21 })];
    const { events, final } = await checkAll(chunks, { max_output_tokens: 16 });
    expect(events.at(-1)?.type).toBe('response.incomplete');
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null });
    expect(final.output.map((i) => i.status)).toEqual(['completed', 'incomplete']);
  });

  it('content_filter: response.incomplete for content_filter', async () => {
    const { final } = await checkAll([chunk({ content: 'Some' }), chunk({}, 'content_filter')]);
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('an empty answer is an empty message, as chatToResponse makes it', async () => {
    const { final, outputText } = await checkAll([chunk({ role: 'assistant', content: '' }), chunk({}, 'stop')]);
    expect(outputText).toBe('');
    expect(final.output).toHaveLength(1);
  });

  it('a tool call whose name comes after its first fragment opens when it is known, fragments kept', async () => {
    const { final } = await checkAll([
      chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(final.output).toEqual([expect.objectContaining({ call_id: 'call_1', name: 'f', arguments: '{"a":1}' })]);
  });

  it('after end(), nothing more; start() twice and push() before start() are mistakes of the caller', () => {
    const writer = new ResponsesStreamWriter(request(), ids());
    expect(() => writer.push(chunk({ content: 'x' }))).toThrow(/before start/);
    writer.start();
    expect(() => writer.start()).toThrow(/twice/);
    writer.end();
    expect(writer.push(chunk({ content: 'x' }))).toEqual([]);
    expect(writer.end()).toEqual([]);
    expect(writer.fail(new GatewayError('timeout', 'late'))).toEqual([]);
  });
});

describe('the checks have teeth', () => {
  it('a delta for an item that does not exist is caught here and by the SDK', async () => {
    const events = write([chunk({ content: 'Hi' }, 'stop')]);
    const bad = events.map((e) => (e.type === 'response.output_text.delta' ? { ...e, output_index: 3 } : e));
    expect(() => checkResponsesStream(bad)).toThrow(/output_index 3/);
    await expect(sdkReadsStream(bad)).rejects.toThrow(/missing output at index 3/);
  });

  it('a done text that is not the deltas is caught', () => {
    const events = write([chunk({ content: 'Hi' }, 'stop')]);
    const bad = events.map((e) => (e.type === 'response.output_text.done' ? { ...e, text: 'Hello' } : e));
    expect(() => checkResponsesStream(bad)).toThrow(/deltas add up/);
  });
});

describe('fail', () => {
  it('mid-stream: an error event, then response.failed with the output so far; the SDK raises the error', async () => {
    const writer = new ResponsesStreamWriter(request(), ids());
    const events = [...writer.start(), ...writer.push(chunk({ content: 'Half an ans' })), ...writer.fail(new GatewayError('upstream_error', 'The provider failed mid-stream.'))];
    for (const e of events) expectValid('ResponseStreamEvent', e);
    expect(types(events).slice(-2)).toEqual(['error', 'response.failed']);
    expect(events.at(-2)).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'upstream_error',
      message: 'The provider failed mid-stream.',
      param: null,
      error: { type: 'upstream_error', code: 'upstream_error', message: 'The provider failed mid-stream.', param: null },
    });
    const failed = checkResponsesStream(events);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'The provider failed mid-stream.' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Half an ans' }] }],
    });
    await expect(sdkReadsStream(events)).rejects.toThrow(/The provider failed mid-stream/);
  });

  it('a rate limit is rate_limit_exceeded; a failure before start() still opens the stream first', () => {
    const events = new ResponsesStreamWriter(request(), ids()).fail(new GatewayError('rate_limit_exceeded', 'Slow down.'));
    expect(types(events)).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
    expect(events.at(-1)).toMatchObject({ response: { error: { code: 'rate_limit_exceeded' } } });
    for (const e of events) expectValid('ResponseStreamEvent', e);
  });
});

describe('toSse', () => {
  it('names the event and carries it as data', () => {
    const [created] = new ResponsesStreamWriter(request(), ids()).start();
    const sse = toSse(created);
    expect(sse.startsWith('event: response.created\ndata: {')).toBe(true);
    expect(sse.endsWith('}\n\n')).toBe(true);
    expect(JSON.parse(sse.split('\n')[1].slice('data: '.length))).toEqual(created);
  });
});

describe('custom and namespaced tools (Codex)', () => {
  const tools = [
    { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
    { type: 'namespace', name: 'mcp__files', description: 'Files.', tools: [{ type: 'function', name: 'write_file', parameters: { type: 'object', properties: {} } }] },
  ];
  const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hello "codex"\n*** End Patch\n';
  const args = JSON.stringify({ input: patch });

  it('a custom call streams as custom_tool_call with its input decoded piece by piece; a namespaced one as function_call with namespace', async () => {
    const chunks = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '' } }] }),
      ...[args.slice(0, 12), args.slice(12, 30), args.slice(30)].map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
      chunk({ tool_calls: [{ index: 1, id: 'call_w', type: 'function', function: { name: 'mcp__files__write_file', arguments: '{"path":"a"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const { events, final } = await checkAll(chunks, { tools });
    expect(final.output).toEqual([
      { type: 'custom_tool_call', id: 'ctc_req_s1_0', call_id: 'call_p', name: 'apply_patch', input: patch, status: 'completed' },
      { type: 'function_call', id: 'fc_req_s1_1', call_id: 'call_w', name: 'write_file', namespace: 'mcp__files', arguments: '{"path":"a"}', status: 'completed' },
    ]);
    const inputDeltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    expect(inputDeltas.length).toBeGreaterThan(1);
    expect(deltas(events, 'response.custom_tool_call_input.delta')).toBe(patch);
    expect(events.find((e) => e.type === 'response.custom_tool_call_input.done')).toMatchObject({ item_id: 'ctc_req_s1_0', output_index: 0, input: patch });
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'write_file' });
  });

  it('a custom call whose arguments are not {"input": ...} still ends with its words as the input', async () => {
    const chunks = [chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"patch":"x y"}' } }] }), chunk({}, 'tool_calls')];
    const { events, final } = await checkAll(chunks, { tools });
    expect(final.output[0]).toMatchObject({ type: 'custom_tool_call', input: 'x y' });
    expect(deltas(events, 'response.custom_tool_call_input.delta')).toBe('x y');
  });
});

describe('client tool search', () => {
  it('a call of the tool_search function is a tool_search_call item, its arguments an object', async () => {
    const tools = [{ type: 'tool_search', execution: 'client', parameters: { type: 'object', properties: { query: { type: 'string' } } } }];
    const chunks = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'tool_search', arguments: '{"query":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"calendar"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const { events, final } = await checkAll(chunks, { tools });
    expect(final.output).toEqual([{ type: 'tool_search_call', id: 'tsc_req_s1_0', call_id: 'call_s', execution: 'client', arguments: { query: 'calendar' }, status: 'completed' }]);
    expect(types(events).filter((t) => t.includes('arguments'))).toEqual([]);
  });
});
