/** Recorded Gemini SSE streams → chat.completion.chunk sequences. */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { createGeminiStreamTranslator } from './stream.ts';
import { expectValid, sseEventsOf } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/gemini/', import.meta.url);

const call = { provider: 'g', model: 'gemini-x', requestId: 'req_1' } as ProviderCall;

const eventsOf = (name: string) => sseEventsOf(FIXTURES, name);

const event = (data: unknown): SseJsonEvent => ({ data });

function pushAll(events: SseJsonEvent[]): { chunks: ChatCompletionChunk[]; end: () => ChatCompletionChunk[] } {
  const t = createGeminiStreamTranslator(call);
  const chunks: ChatCompletionChunk[] = [];
  for (const e of events) {
    const r = t.push(e);
    if (r) chunks.push(...(Array.isArray(r) ? r : [r]));
  }
  return {
    chunks,
    end: () => {
      const tail = t.end?.();
      return tail ? (Array.isArray(tail) ? tail : [tail]) : [];
    },
  };
}

function translate(events: SseJsonEvent[]): ChatCompletionChunk[] {
  const { chunks, end } = pushAll(events);
  const all = [...chunks, ...end()];
  for (const c of all) expectValid('CreateChatCompletionStreamResponse', c);
  return all;
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);
const textOf = (chunks: ChatCompletionChunk[]) =>
  deltas(chunks)
    .map((d) => d.content ?? '')
    .join('');

describe('recorded streams', () => {
  it('the byte-exact CRLF capture: role on the first chunk, text deltas, one finish, then usage of the last event', async () => {
    const chunks = translate(await eventsOf('stream-wire-exact'));
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: 'The' }, { content: ' capital of France' }, { content: ' is Paris.\n' }, {}]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, 'stop', null]);
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-w1peaMz6INOvnvgPgYfPiQY']));
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['gemini-2.0-flash-exp']));
    // The prompt count changed from 15 to 13 in the last event: the last one counts.
    expect(chunks.at(-1)).toEqual({
      id: 'chatcmpl-w1peaMz6INOvnvgPgYfPiQY',
      object: 'chat.completion.chunk',
      created: chunks[0].created,
      model: 'gemini-2.0-flash-exp',
      choices: [],
      usage: { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it('a longer stream: the text is the concatenation of every event, usage from the last', async () => {
    const events = await eventsOf('stream-basic');
    const chunks = translate(events);
    const expected = events.map((e) => (e.data as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> }).candidates[0].content.parts[0].text).join('');
    expect(textOf(chunks)).toBe(expected);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 377, total_tokens: 383 });
  });

  it('thinking tokens in a stream: reasoning_tokens in the final usage', async () => {
    const chunks = translate(await eventsOf('stream-system-instruction'));
    expect(textOf(chunks)).toMatch(/^low!/);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 513, total_tokens: 533, completion_tokens_details: { reasoning_tokens: 260 } });
  });

  it('Vertex: no index, createTime → created, counts only in the last event', async () => {
    const chunks = translate(await eventsOf('vertex-stream-basic'));
    expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([1761291946]));
    expect(chunks.map((c) => c.choices[0]?.index).filter((i) => i !== undefined)).toEqual(Array(chunks.length - 1).fill(0));
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 1689, total_tokens: 1695, completion_tokens_details: { reasoning_tokens: 1214 } });
  });

  it('a whole function call in one event: one complete tool-call delta, finish tool_calls', async () => {
    const chunks = translate(await eventsOf('stream-function-call'));
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', tool_calls: [{ index: 0, id: 'call_req_1_0', type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":100}' } }] },
      {},
    ]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, 'tool_calls', null]);
  });

  it('cut before the finishReason: end() throws a protocol UpstreamError', async () => {
    const events = await eventsOf('stream-basic');
    const { end } = pushAll(events.slice(0, -1));
    expect(end).toThrow(UpstreamError);
    try {
      end();
    } catch (err) {
      expect(err).toMatchObject({ kind: 'protocol', provider: 'g', message: 'g: the stream ended before a finishReason' });
    }
    expect(pushAll([]).end).toThrow(/ended before a finishReason/);
  });
});

describe('synthetic events', () => {
  it('thoughts, a signed call and a second call in later events: reasoning deltas, the tagged signature, tool calls numbered 0, 1', () => {
    const chunks = translate([
      event({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me think', thought: true }] } }], responseId: 'r1', modelVersion: 'gemini-3-pro' }),
      event({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: 'sig' }] } }] }),
      event({
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'b' } }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, thoughtsTokenCount: 5 },
      }),
    ]);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', reasoning_content: 'Let me think' },
      { thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'gemini:call:sig' }] },
      { tool_calls: [{ index: 0, id: 'call_req_1_0', type: 'function', function: { name: 'a', arguments: '{"x":1}' }, extra_content: { google: { thought_signature: 'sig' } } }] },
      { tool_calls: [{ index: 1, id: 'call_req_1_1', type: 'function', function: { name: 'b', arguments: '{}' } }] },
      {},
    ]);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 9, completion_tokens_details: { reasoning_tokens: 5 } });
  });

  it('a prompt blocked before generation: one empty content_filter finish', () => {
    const chunks = translate([event({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8 } })]);
    expect(chunks.map((c) => c.choices[0] ?? null)).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' }, null]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 8 });
  });

  it('two candidates (n: 2): a role for each choice, and the stream is whole only when both finished', () => {
    const events = [
      event({
        candidates: [
          { index: 0, content: { parts: [{ text: 'A' }] } },
          { index: 1, content: { parts: [{ text: 'B' }] } },
        ],
      }),
      event({ candidates: [{ index: 0, content: { parts: [{ text: '.' }] }, finishReason: 'STOP' }] }),
    ];
    expect(pushAll(events).end).toThrow(/ended before a finishReason/);
    const chunks = translate([...events, event({ candidates: [{ index: 1, content: { parts: [] }, finishReason: 'MAX_TOKENS' }] })]);
    expect(chunks.filter((c) => c.choices.length).map((c) => [c.choices[0].index, c.choices[0].delta, c.choices[0].finish_reason])).toEqual([
      [0, { role: 'assistant', content: 'A' }, null],
      [1, { role: 'assistant', content: 'B' }, null],
      [0, { content: '.' }, null],
      [0, {}, 'stop'],
      [1, {}, 'length'],
    ]);
  });

  it('usage is merged field by field: a later partial usageMetadata does not erase counts', () => {
    const chunks = translate([
      event({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1 } }),
      event({ usageMetadata: { trafficType: 'ON_DEMAND' } }),
    ]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 });
  });

  it('logprobs ride on their content delta', () => {
    const chunks = translate([
      event({
        candidates: [
          {
            content: { parts: [{ text: 'Hi' }] },
            finishReason: 'STOP',
            logprobsResult: { chosenCandidates: [{ token: 'Hi', logProbability: -0.5 }], topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.5 }] }] },
          },
        ],
      }),
    ]);
    expect(chunks[0].choices[0].logprobs).toEqual({ content: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105] }] }], refusal: null });
    expect(chunks[1].choices[0].logprobs).toBeNull();
  });

  it("an error event is an UpstreamError with Google's status; a non-object event is a protocol error", () => {
    const t = createGeminiStreamTranslator(call);
    expect(() => t.push(event({ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }))).toThrow(
      expect.objectContaining({ kind: 'http', status: 429, failure: expect.objectContaining({ code: 'RESOURCE_EXHAUSTED' }) }),
    );
    expect(() => t.push(event('hello'))).toThrow(expect.objectContaining({ kind: 'protocol' }));
    expect(() => t.push(event([1]))).toThrow(expect.objectContaining({ kind: 'protocol' }));
  });
});
