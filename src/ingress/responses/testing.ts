/**
 * Test helpers for the Responses ingress (the *.test.ts beside this file use them; a route test
 * can too): chat chunks folded into the completion they add up to, a Responses event stream's
 * bookkeeping checked event by event, and the stream read back by the official SDK's own
 * accumulator (`responses.stream`, over a fetch that answers with the events as SSE).
 */
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ToolCall } from '../../openai-types.ts';
import { toSse } from './stream.ts';
import type { ResponseObject, ResponsesEvent } from './types.ts';

/** What a client accumulating the chunks would hold: the same answer as one completion. */
export function foldChunks(chunks: ChatCompletionChunk[]): ChatCompletion {
  let content = '';
  let refusal = '';
  let reasoning = '';
  let model = '';
  const calls = new Map<number, ToolCall>();
  const choice: ChatCompletion['choices'][number] = { index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: null, logprobs: null };
  const logprobs: unknown[] = [];
  let usage: ChatCompletion['usage'];
  let serviceTier: unknown;
  for (const chunk of chunks) {
    model ||= chunk.model;
    if (typeof chunk.service_tier === 'string') serviceTier = chunk.service_tier;
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices?.find((x) => x.index === 0);
    if (!c) continue;
    const d = c.delta ?? {};
    if (typeof d.content === 'string') content += d.content;
    if (typeof d.refusal === 'string') refusal += d.refusal;
    if (typeof d.reasoning_content === 'string') reasoning += d.reasoning_content;
    const lp = (c.logprobs as { content?: unknown[] } | null)?.content;
    if (Array.isArray(lp)) logprobs.push(...lp);
    for (const t of d.tool_calls ?? []) {
      const call = calls.get(t.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
      if (t.id) call.id = t.id;
      if (t.function?.name) call.function.name = t.function.name;
      call.function.arguments += t.function?.arguments ?? '';
      calls.set(t.index, call);
    }
    if (c.finish_reason) choice.finish_reason = c.finish_reason;
  }
  choice.message.content = content || null;
  if (refusal) choice.message.refusal = refusal;
  if (reasoning) choice.message.reasoning_content = reasoning;
  if (logprobs.length) choice.logprobs = { content: logprobs };
  if (calls.size) choice.message.tool_calls = [...calls.values()];
  const first = chunks[0];
  return {
    id: first?.id ?? 'chatcmpl',
    object: 'chat.completion',
    created: first?.created ?? 0,
    model,
    choices: [choice],
    ...(usage ? { usage } : {}),
    ...(serviceTier ? { service_tier: serviceTier } : {}),
  };
}

interface SeenPart {
  type: string;
  text: string;
  open: boolean;
  annotations?: number;
}
interface SeenItem {
  id: string;
  type: string;
  name?: string;
  arguments: string;
  parts: SeenPart[];
  open: boolean;
  done?: unknown;
}

const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Checks what a Responses client relies on, event by event: sequence numbers 0, 1, 2...;
 * created and in_progress first and one terminal event last, all about the same response;
 * output_index and content_index allocated in order and only used while their item or part is
 * open, with the item's id; every delta concatenated equal to its `.done` text and to the done
 * part; every item closed, and the terminal response's output equal to the items as they were
 * closed. Returns the terminal event's response.
 */
export function checkResponsesStream(events: ResponsesEvent[]): ResponseObject {
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
    'sequence numbers count from 0 without gaps',
  );
  assert.equal(events[0]?.type, 'response.created');
  assert.equal(events[1]?.type, 'response.in_progress');
  const last = events.at(-1)!;
  assert.ok(TERMINAL.has(last.type), `the last event is terminal, not ${last.type}`);
  const items: SeenItem[] = [];
  const open = (index: number, id?: string): SeenItem => {
    const item = items[index];
    assert.ok(item?.open, `output_index ${index} is an open item`);
    if (id !== undefined) assert.equal(id, item.id, `item_id of output ${index}`);
    return item;
  };
  const part = (item: SeenItem, index: number, type: string): SeenPart => {
    const p = item.parts[index];
    assert.ok(p?.open, `content_index ${index} of ${item.id} is an open part`);
    assert.equal(p.type, type, `part ${index} of ${item.id}`);
    return p;
  };
  let responseId: string | undefined;
  events.forEach((e, n) => {
    if (LIFECYCLE.has(e.type)) {
      const response = (e as { response: ResponseObject }).response;
      responseId ??= response.id;
      assert.equal(response.id, responseId, 'one response throughout');
      if (n > 1) assert.ok(TERMINAL.has(e.type) && n === events.length - 1, `${e.type} only at the end`);
      return;
    }
    switch (e.type) {
      case 'response.output_item.added':
        assert.equal(e.output_index, items.length, 'output items numbered in order');
        assert.equal(e.item.status, 'in_progress');
        items.push({ id: e.item.id, type: e.item.type, name: e.item.type === 'function_call' ? e.item.name : undefined, arguments: '', parts: [], open: true });
        return;
      case 'response.content_part.added': {
        const item = open(e.output_index, e.item_id);
        assert.equal(e.content_index, item.parts.length, 'parts numbered in order');
        const text = e.part.type === 'refusal' ? e.part.refusal : e.part.text;
        assert.equal(text, '', 'a part starts empty');
        item.parts.push({ type: e.part.type, text: '', open: true });
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
      case 'response.reasoning_text.delta': {
        const type = e.type === 'response.output_text.delta' ? 'output_text' : e.type === 'response.refusal.delta' ? 'refusal' : 'reasoning_text';
        part(open(e.output_index, e.item_id), e.content_index, type).text += e.delta;
        return;
      }
      case 'response.output_text.done':
      case 'response.reasoning_text.done':
        assert.equal(
          e.text,
          part(open(e.output_index, e.item_id), e.content_index, e.type === 'response.output_text.done' ? 'output_text' : 'reasoning_text').text,
          'the deltas add up to the done text',
        );
        return;
      case 'response.refusal.done':
        assert.equal(e.refusal, part(open(e.output_index, e.item_id), e.content_index, 'refusal').text, 'the deltas add up to the done refusal');
        return;
      case 'response.content_part.done': {
        const p = part(open(e.output_index, e.item_id), e.content_index, e.part.type);
        assert.equal(e.part.type === 'refusal' ? e.part.refusal : e.part.text, p.text, 'the done part holds the whole text');
        p.open = false;
        return;
      }
      case 'response.function_call_arguments.delta':
        open(e.output_index, e.item_id).arguments += e.delta;
        return;
      case 'response.function_call_arguments.done': {
        const item = open(e.output_index, e.item_id);
        assert.equal(e.arguments, item.arguments, 'the deltas add up to the arguments');
        assert.equal(e.name, item.name);
        return;
      }
      case 'response.web_search_call.in_progress':
      case 'response.web_search_call.searching':
      case 'response.web_search_call.completed':
        assert.equal(open(e.output_index, e.item_id).type, 'web_search_call');
        return;
      case 'response.output_text.annotation.added': {
        const p = part(open(e.output_index, e.item_id), e.content_index, 'output_text');
        assert.equal(e.annotation_index, p.annotations ?? 0, 'annotations numbered in order');
        assert.ok(e.annotation.end_index <= p.text.length, 'an annotation lies in the text written so far');
        p.annotations = e.annotation_index + 1;
        return;
      }
      case 'response.custom_tool_call_input.delta':
        assert.equal(items[e.output_index]?.type, 'custom_tool_call');
        open(e.output_index, e.item_id).arguments += e.delta;
        return;
      case 'response.custom_tool_call_input.done':
        assert.equal(e.input, open(e.output_index, e.item_id).arguments, 'the deltas add up to the input');
        return;
      case 'response.output_item.done': {
        const item = open(e.output_index, e.item.id);
        assert.ok(
          item.parts.every((p) => !p.open),
          `the parts of ${item.id} are closed before it`,
        );
        assert.notEqual(e.item.status, 'in_progress');
        if (e.item.type === 'function_call') assert.equal(e.item.arguments, item.arguments);
        if (e.item.type === 'custom_tool_call') assert.equal(e.item.input, item.arguments);
        if (e.item.type === 'message')
          assert.deepEqual(
            e.item.content.map((c) => (c.type === 'refusal' ? c.refusal : c.text)),
            item.parts.map((p) => p.text),
          );
        item.open = false;
        item.done = e.item;
        return;
      }
      case 'error':
        assert.equal(events[n + 1]?.type, 'response.failed', 'an error event is followed by response.failed');
        return;
      default:
        assert.fail(`unexpected event ${(e as { type: string }).type}`);
    }
  });
  const response = (last as { response: ResponseObject }).response;
  if (last.type !== 'response.failed') {
    assert.ok(
      items.every((i) => !i.open),
      'every item is closed before the end',
    );
    assert.deepEqual(
      response.output,
      items.map((i) => i.done),
      'the final output is the items as they were closed',
    );
  }
  return response;
}

/** The events as SSE, through the official SDK's `responses.stream` accumulator. */
export async function sdkReadsStream(events: ResponsesEvent[]): Promise<{ final: OpenAI.Responses.Response; emitted: Array<{ type: string }> }> {
  const body = events.map(toSse).join('');
  const client = new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const stream = client.responses.stream({ model: 'my-alias', input: 'x' });
  const emitted: Array<{ type: string }> = [];
  stream.on('event', (e) => emitted.push(e));
  const final = await stream.finalResponse();
  return { final, emitted };
}
