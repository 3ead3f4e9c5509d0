/** Recorded OpenAI Responses streams → chat.completion.chunk sequences (what the gateway reads of a passed-through stream). */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { createResponsesStreamTranslator } from './stream.ts';
import { sseEventsOf } from 'switchyard-gateway/kit/testing';

const FIXTURES = new URL('../../../test/fixtures/openai/', import.meta.url);
const call = { provider: 'oai', model: 'gpt-x', requestId: 'req_1' };

/** Each event's chunks, in order (an event may give none). */
function translate(events: SseJsonEvent[]): { perEvent: ChatCompletionChunk[][]; tail: ChatCompletionChunk[] } {
  const t = createResponsesStreamTranslator(call);
  const perEvent = events.map((e) => {
    const r = t.push(e);
    return r ? (Array.isArray(r) ? r : [r]) : [];
  });
  const tail = t.end?.();
  return { perEvent, tail: tail ? (Array.isArray(tail) ? tail : [tail]) : [] };
}

const delta = (c: ChatCompletionChunk) => c.choices[0]?.delta;

describe('Responses stream → chunks', () => {
  it('text with phases: nothing before the first output item, then one chunk per event; usage with cached and reasoning tokens', async () => {
    const events = await sseEventsOf(FIXTURES, 'responses-stream-phase');
    const { perEvent } = translate(events);
    const types = events.map((e) => (e.data as { type: string }).type);
    const first = types.indexOf('response.output_item.added');
    expect(perEvent.slice(0, first).flat()).toEqual([]);
    // From the first output on, every event paces the pass-through with at least one chunk.
    expect(perEvent.slice(first).every((c) => c.length > 0)).toBe(true);
    const chunks = perEvent.flat();
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['gpt-5.3-codex']));
    const text = chunks.map((c) => delta(c)?.content ?? '').join('');
    expect(text).toBe('Got itHere are a few **AI');
    expect(delta(chunks[0])).toMatchObject({ role: 'assistant' });
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish.map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7112, completion_tokens: 463, total_tokens: 7575, prompt_tokens_details: { cached_tokens: 3072 }, completion_tokens_details: { reasoning_tokens: 64 } },
    });
  });

  it('reasoning then a function call: reasoning_content, a tool call with its call_id and argument fragments, finish tool_calls', async () => {
    const { perEvent } = translate(await sseEventsOf(FIXTURES, 'responses-stream-reasoning-encrypted'));
    const chunks = perEvent.flat();
    const reasoning = chunks.map((c) => (delta(c)?.reasoning_content as string | undefined) ?? '').join('');
    expect(reasoning).toContain('Calculating step-by-step using calculator');
    const calls = chunks.flatMap((c) => delta(c)?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', type: 'function', function: { name: 'calculator', arguments: '' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe('{"a":12,"b":7,"op":"add"}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 134, completion_tokens: 28, completion_tokens_details: { reasoning_tokens: 0 } });
  });

  it('an error event before any output is an upstream failure (429 for insufficient_quota): the core can still fail over', async () => {
    const events = await sseEventsOf(FIXTURES, 'responses-stream-error-quota');
    const t = createResponsesStreamTranslator(call);
    expect(t.push(events[0])).toBeUndefined();
    expect(t.push(events[1])).toBeUndefined();
    let err: unknown;
    try {
      t.push(events[2]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 429, failure: { code: 'insufficient_quota' } });
  });

  it('a stream that ends before response.completed is a protocol failure', async () => {
    const events = await sseEventsOf(FIXTURES, 'responses-stream-phase');
    const t = createResponsesStreamTranslator(call);
    for (const e of events.slice(0, 6)) t.push(e);
    expect(() => t.end?.()).toThrow(/ended before response.completed/);
  });
});
