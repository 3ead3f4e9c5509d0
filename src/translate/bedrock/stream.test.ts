/** Recorded ConverseStream bodies → decoded frames → chat.completion.chunk sequences. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { decodeAwsEventStream, type AwsStreamEvent } from './eventstream.ts';
import { createConverseStreamTranslator } from './stream.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/bedrock/', import.meta.url);

const call = { provider: 'aws', model: 'us.amazon.nova-micro-v1:0', requestId: 'req_1' } as ProviderCall;
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The body in pieces of `size` bytes, as a socket might deliver it. */
async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function decode(bytes: Uint8Array, size = bytes.length || 1): Promise<AwsStreamEvent[]> {
  const events: AwsStreamEvent[] = [];
  for await (const e of decodeAwsEventStream(pieces(bytes, size))) events.push(e);
  return events;
}

const bin = (name: string) => new Uint8Array(loadFixture(FIXTURES, name).body);
const jsonl = (name: string) =>
  readFileSync(new URL(`${name}.events.jsonl`, FIXTURES), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { headers: Record<string, string>; payload: Record<string, unknown> });

/** A frame as Bedrock would send it, encoded with the SDK's codec. */
function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  const h: Record<string, { type: 'string'; value: string }> = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
  return codec.encode({ headers: h, body: fromUtf8(typeof payload === 'string' ? payload : JSON.stringify(payload)) });
}
const event = (type: string, payload: unknown) => frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

function translate(events: AwsStreamEvent[]): ChatCompletionChunk[] {
  const t = createConverseStreamTranslator(call);
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
const text = (chunks: ChatCompletionChunk[]) =>
  deltas(chunks)
    .map((d) => d.content ?? '')
    .join('');

describe('decodeAwsEventStream', () => {
  for (const name of ['converse-stream-basic', 'converse-stream-tool-use', 'converse-stream-reasoning-claude', 'converse-stream-tool-result-followup', 'stream-exception-frame']) {
    it(`${name}: every recorded frame, whatever the read sizes`, async () => {
      const expected = jsonl(name).map((f) => {
        const kind = f.headers[':message-type'];
        return { kind, type: kind === 'exception' ? f.headers[':exception-type'] : f.headers[':event-type'], payload: f.payload };
      });
      expect(await decode(bin(name))).toEqual(expected);
      expect(await decode(bin(name), 7)).toEqual(expected);
      expect(await decode(bin(name), 1)).toEqual(expected);
    });
  }

  it('error frames carry their code and message in headers', async () => {
    const error = frame({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, '');
    expect(await decode(error)).toEqual([{ kind: 'error', type: 'InternalFailure', payload: { message: 'boom' } }]);
  });

  it('a corrupted frame, a body that ends inside a frame, or bytes that are no event stream are malformed', async () => {
    const good = bin('converse-stream-basic');
    const corrupted = good.slice();
    corrupted[40] ^= 0xff;
    await expect(decode(corrupted)).rejects.toThrow(SyntaxError);
    await expect(decode(good.subarray(0, good.length - 10), 100)).rejects.toThrow(/ended inside a frame/);
    await expect(decode(good.subarray(0, 2))).rejects.toThrow(/ended inside a frame/);
    await expect(decode(new TextEncoder().encode('<html><body>Bad gateway</body></html>'))).rejects.toThrow(/malformed event stream: a frame announces/);
    await expect(decode(event('contentBlockDelta', '{"delta":'))).rejects.toThrow(/not JSON/);
  });

  it('a failing body is passed through as it is, not called malformed', async () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield bin('converse-stream-basic').subarray(0, 300);
      throw reset;
    }
    const seen: AwsStreamEvent[] = [];
    await expect(
      (async () => {
        for await (const e of decodeAwsEventStream(broken())) seen.push(e);
      })(),
    ).rejects.toBe(reset);
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe('stream translation', () => {
  it('Nova text (no contentBlockStart): role on the first chunk, one finish, a usage chunk; padding ignored', async () => {
    const chunks = translate(await decode(bin('converse-stream-basic')));
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-req_1']));
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['us.amazon.nova-micro-v1:0']));
    expect(deltas(chunks)[0]).toEqual({ role: 'assistant', content: 'The' });
    expect(text(chunks)).toMatch(/^The capital of France is Paris\. .*"The City of Love\."$/);
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 82, total_tokens: 95, prompt_tokens_details: { cached_tokens: 0 } } });
    expect(JSON.stringify(chunks)).not.toContain('"p"');
  });

  it('text then a tool call: id and name first, the input as argument fragments, finish tool_calls', async () => {
    const chunks = translate(await decode(bin('converse-stream-tool-use')));
    const calls = deltas(chunks).flatMap((d) => d.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', type: 'function', function: { name: 'get_temperature', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    expect(text(chunks)).toContain('<thinking> To find the temperature');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
  });

  it('parallel tool calls are numbered among toolUse blocks; a call first carries content: null', () => {
    const t = translate([
      { kind: 'event', type: 'messageStart', payload: { role: 'assistant' } },
      { kind: 'event', type: 'contentBlockStart', payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'a', name: 'f' } } } },
      { kind: 'event', type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: '{"n":' } } } },
      { kind: 'event', type: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'b', name: 'f' } } } },
      { kind: 'event', type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: '1}' } } } },
      { kind: 'event', type: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: '{}' } } } },
      { kind: 'event', type: 'messageStop', payload: { stopReason: 'tool_use' } },
    ]);
    expect(deltas(t)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"n":' } }] },
      { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ]);
  });

  it('Claude reasoning deltas become reasoning_content; the signature a thinking_blocks delta', async () => {
    const chunks = translate(await decode(bin('converse-stream-reasoning-claude')));
    const reasoning = deltas(chunks)
      .map((d) => (d.reasoning_content as string | undefined) ?? '')
      .join('');
    expect(reasoning).toBe(
      'The user has greeted me with a simple "Hello". I should respond in a friendly and welcoming manner. This is a straightforward greeting, so I\'ll respond warmly and ask how I can help them today.',
    );
    expect(text(chunks)).toBe("Hello! It's nice to meet you. How can I help you today?");
    expect(deltas(chunks)[0]).toEqual({ role: 'assistant', reasoning_content: 'The' });
    const signed = deltas(chunks).filter((d) => d.thinking_blocks);
    expect(signed).toEqual([{ thinking_blocks: [{ type: 'thinking', thinking: '', signature: expect.stringMatching(/^Eu0CCkgIBxAB/) }] }]);
  });

  it('redacted reasoning is a thinking_blocks delta of its own', () => {
    const t = createConverseStreamTranslator(call);
    const chunk = t.push({ kind: 'event', type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'AAEC' } } } });
    expect(chunk).toMatchObject({ choices: [{ delta: { thinking_blocks: [{ type: 'redacted_thinking', data: 'AAEC' }] } }] });
  });

  it('an exception frame throws an UpstreamError with the exception’s status', async () => {
    const events = await decode(bin('stream-exception-frame'));
    const t = createConverseStreamTranslator(call);
    let err: unknown;
    try {
      t.push(events[0]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ provider: 'aws', status: 500, retryable: true, failure: { message: 'Model Stream Error', code: 'modelStreamErrorException' } });
    const throttled = await decode(
      frame({ ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, { message: 'Too many tokens, please wait before trying again.' }),
    );
    expect(() => createConverseStreamTranslator(call).push(throttled[0])).toThrow(expect.objectContaining({ status: 429, retryable: true }));
  });

  it('a stream that ends without messageStop ended early; metadata without usage is nothing', async () => {
    const events = await decode(concat(event('messageStart', { role: 'assistant', p: 'ab' }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } })));
    expect(() => translate(events)).toThrow(/no messageStop/);
    const t = createConverseStreamTranslator(call);
    expect(t.push({ kind: 'event', type: 'metadata', payload: { metrics: { latencyMs: 1 } } })).toBeUndefined();
    expect(t.push({ kind: 'event', type: 'somethingNew', payload: {} })).toBeUndefined();
  });

  it('stop reasons: max_tokens → length, guardrail → content_filter', () => {
    for (const [stopReason, finish] of [
      ['max_tokens', 'length'],
      ['guardrail_intervened', 'content_filter'],
      ['content_filtered', 'content_filter'],
      ['stop_sequence', 'stop'],
    ]) {
      const chunks = translate([{ kind: 'event', type: 'messageStop', payload: { stopReason } }]);
      expect(chunks[0].choices[0]).toMatchObject({ delta: { role: 'assistant' }, finish_reason: finish });
    }
  });
});

describe('leaving a stream early', () => {
  it('closes the body when the consumer stops (an exception frame, a failed translation)', async () => {
    let closed = false;
    const body: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]() {
        const frames = [event('messageStart', { role: 'assistant' }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'a' } })];
        return {
          next: async () => (frames.length ? { value: frames.shift()!, done: false } : new Promise<IteratorResult<Uint8Array>>(() => {})),
          return: async () => {
            closed = true;
            return { value: undefined, done: true };
          },
        };
      },
    };
    for await (const e of decodeAwsEventStream(body)) {
      if (e.type === 'contentBlockDelta') break;
    }
    expect(closed).toBe(true);
  });
});
