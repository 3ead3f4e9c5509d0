/** Recorded Anthropic event streams → chat.completion.chunk sequences. */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { createAnthropicStreamTranslator } from './stream.ts';
import { sseEventsOf } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/anthropic/', import.meta.url);

const call = { provider: 'claude', model: 'claude-x', requestId: 'req_1' } as ProviderCall;

const eventsOf = (name: string) => sseEventsOf(FIXTURES, name);

function translate(events: SseJsonEvent[]): ChatCompletionChunk[] {
  const t = createAnthropicStreamTranslator(call);
  const out: ChatCompletionChunk[] = [];
  for (const e of events) {
    const r = t.push(e);
    if (r) out.push(...(Array.isArray(r) ? r : [r]));
  }
  const tail = t.end?.();
  if (tail) out.push(...(Array.isArray(tail) ? tail : [tail]));
  return out;
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);

describe('stream translation', () => {
  it('basic text: role on the first content chunk, one finish, then a usage-only chunk', async () => {
    const chunks = translate(await eventsOf('stream-basic'));
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK']));
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['claude-opus-4-8']));
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: 'Hello' }, { content: ' there' }, { content: '!' }, {}]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, 'stop', null]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17, prompt_tokens_details: { cached_tokens: 0 } } });
  });

  it('text then a tool call: tool calls numbered among tool blocks, the empty first fragment skipped', async () => {
    const chunks = translate(await eventsOf('stream-tool-use'));
    const calls = deltas(chunks).flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.slice(1).every((c) => c.index === 0 && c.id === undefined)).toBe(true);
    expect(calls.map((c) => c.function?.arguments).join('')).toBe('{"location": "Paris"}');
    expect(calls).toHaveLength(5);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 377, completion_tokens: 65 });
  });

  it('a tool call first: the role rides on it with content null; a second tool is index 1', () => {
    const t = createAnthropicStreamTranslator(call);
    t.push({ event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', model: 'claude-y', usage: { input_tokens: 3, output_tokens: 1 } } } });
    const first = t.push({ data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'a', name: 'f', input: {} } } }) as ChatCompletionChunk;
    expect(first.choices[0].delta).toEqual({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] });
    const second = t.push({ data: { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'b', name: 'g', input: {} } } }) as ChatCompletionChunk;
    expect(second.choices[0].delta).toEqual({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } }] });
    const arg = t.push({ data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } } }) as ChatCompletionChunk;
    expect(arg.choices[0].delta).toEqual({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] });
    // Server-tool input is not a function call of the client's.
    t.push({ data: { type: 'content_block_start', index: 2, content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } } });
    expect(t.push({ data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"q":1}' } } })).toBeUndefined();
  });

  it('extended thinking: reasoning_content deltas, the signature a thinking_blocks delta, padded JSON and cumulative usage tolerated', async () => {
    const chunks = translate(await eventsOf('stream-thinking'));
    const all = deltas(chunks);
    const reasoning = all.map((d) => d.reasoning_content ?? '').join('');
    const text = all.map((d) => d.content ?? '').join('');
    expect(reasoning.startsWith('This is a straightforward question about pedestrian safety.')).toBe(true);
    expect(all[0]).toEqual({ role: 'assistant', reasoning_content: 'This' });
    expect(text).toContain('crossing streets.');
    expect(all.filter((d) => d.thinking_blocks)).toEqual([{ thinking_blocks: [{ type: 'thinking', thinking: '', signature: expect.stringMatching(/^EvMCCkYICxgC/) }] }]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 43, completion_tokens: 282 });
    expect(chunks.every((c) => c.model === 'claude-sonnet-4-20250514')).toBe(true);
  });

  it('cut by max_tokens inside a tool input: finish length, partial arguments as sent', async () => {
    const chunks = translate(await eventsOf('stream-max-tokens-partial-tool-input'));
    const finishes = chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean);
    expect(finishes).toEqual(['length']);
    const args = deltas(chunks)
      .flatMap((d) => d.tool_calls ?? [])
      .map((c) => c.function?.arguments ?? '')
      .join('');
    expect(() => JSON.parse(args)).toThrow();
    expect(args.startsWith('{')).toBe(true);
  });

  it('an error event throws the upstream error: overloaded is 529 and retryable', async () => {
    const [error] = await eventsOf('stream-error-overloaded');
    const t = createAnthropicStreamTranslator(call);
    let thrown: unknown;
    try {
      t.push(error);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ kind: 'http', status: 529, retryable: true, failure: { message: 'Overloaded', code: 'overloaded_error' } });
    expect((thrown as UpstreamError).toClientError().code).toBe('provider_unavailable');
  });

  it('an invalid_request error event is a 400, not retried', () => {
    const t = createAnthropicStreamTranslator(call);
    expect(() => t.push({ event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } } })).toThrow(expect.objectContaining({ status: 400, retryable: false }));
  });

  it('a stream that ends without message_stop ended early', async () => {
    const events = (await eventsOf('stream-basic')).filter((e) => (e.data as { type: string }).type !== 'message_stop');
    expect(() => translate(events)).toThrow(expect.objectContaining({ kind: 'protocol', message: 'claude: the stream ended early (no message_stop)' }));
  });

  it('pings, block stops and unknown events produce nothing; an empty message still finishes', () => {
    const t = createAnthropicStreamTranslator(call);
    expect(t.push({ event: 'ping', data: { type: 'ping' } })).toBeUndefined();
    expect(t.push({ data: { type: 'message_start', message: { id: 'm', model: 'claude-z', usage: { input_tokens: 2 } } } })).toBeUndefined();
    expect(t.push({ data: { type: 'content_block_stop', index: 0 } })).toBeUndefined();
    expect(t.push({ data: { type: 'something_new' } })).toBeUndefined();
    const finish = t.push({ data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 0 } } }) as ChatCompletionChunk;
    expect(finish.choices[0]).toEqual({ index: 0, delta: { role: 'assistant' }, logprobs: null, finish_reason: 'stop' });
  });
});
