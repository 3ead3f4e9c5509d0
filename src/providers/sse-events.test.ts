/**
 * The hot-path SSE JSON reader, fed here by a Node stream (in the gateway, by undici's dispatch
 * handler: answer-handler.test.ts): the same events as decodeSseJson, its failures mapped,
 * backpressure, early return.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeSseJson, type SseJsonEvent } from './http-body.ts';
import { type ByteSource, SseJsonEvents } from './sse-events.ts';

/** A Node stream as the events' source, as a test's feeder: its 'data', 'end', 'error' and 'close' feed them. */
class ReadableSource implements ByteSource {
  readonly body: Readable;
  readonly events: SseJsonEvents;
  constructor(body: Readable, events: SseJsonEvents) {
    this.body = body;
    this.events = events;
    body.on('data', this.onData);
    body.once('end', this.onEnd);
    body.once('error', this.onError);
    body.once('close', this.onClose);
  }
  get paused(): boolean {
    return this.body.isPaused();
  }
  pause(): void {
    this.body.pause();
  }
  resume(): void {
    this.body.resume();
  }
  release(abort: boolean): void {
    this.body.off('data', this.onData).off('end', this.onEnd).off('error', this.onError).off('close', this.onClose);
    this.body.on('error', () => undefined);
    if (abort) this.body.destroy();
  }
  readonly onData = (bytes: Uint8Array): void => this.events.bytes(bytes);
  readonly onEnd = (): void => this.events.end();
  readonly onError = (err: unknown): void => this.events.error(err);
  readonly onClose = (): void => this.events.error(new Error('the upstream connection closed before the answer ended'));
}

function sseJsonEvents(body: Readable, fault: (err: unknown) => unknown): AsyncIterable<SseJsonEvent> {
  const events = new SseJsonEvents(fault);
  events.bind(new ReadableSource(body, events));
  return events;
}

const mapped = (err: unknown) => new Error(`mapped: ${(err as Error).message}`);

async function collect(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const parts = ['data: {"a":1}\n\nevent: x\ndata: {"b"', ':2}\n\n: keep-alive\n\ndata: [DONE]\n\n'];

describe('SseJsonEvents fed by a Node stream', () => {
  it('gives the events decodeSseJson gives, split chunks and [DONE] included', async () => {
    const fast = await collect(sseJsonEvents(Readable.from(parts.map((p) => Buffer.from(p))), mapped));
    const reference = await collect(decodeSseJson(Readable.from(parts.map((p) => Buffer.from(p)))));
    expect(fast).toEqual([
      { data: { a: 1 }, raw: '{"a":1}' },
      { event: 'x', data: { b: 2 }, raw: '{"b":2}' },
    ]);
    expect(fast).toEqual(reference);
  });

  it('reads the body to its end after [DONE] without parsing what follows', async () => {
    const body = Readable.from([Buffer.from('data: {"a":1}\n\ndata: [DONE]\n\n'), Buffer.from('data: not json\n\n')]);
    expect(await collect(sseJsonEvents(body, mapped))).toEqual([{ data: { a: 1 }, raw: '{"a":1}' }]);
    expect(body.readableEnded).toBe(true);
  });

  it('a truncated stream ends without its unterminated tail', async () => {
    expect(await collect(sseJsonEvents(Readable.from([Buffer.from('data: {"a":1}\n\ndata: {"b":')]), mapped))).toEqual([{ data: { a: 1 }, raw: '{"a":1}' }]);
  });

  it('data that is not JSON fails through the mapper, and the body is destroyed', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    body.write('data: {oops}\n\n');
    await expect(events.next()).rejects.toThrow(/^mapped: stream event is not JSON: \{oops\}/);
    expect(body.destroyed).toBe(true);
  });

  it('a socket error mid-stream reaches a waiting reader through the mapper', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    body.write('data: {"a":1}\n\n');
    expect(await events.next()).toEqual({ value: { data: { a: 1 }, raw: '{"a":1}' }, done: false });
    const waiting = events.next();
    body.destroy(new Error('ECONNRESET'));
    await expect(waiting).rejects.toThrow('mapped: ECONNRESET');
  });

  it('a waiting reader gets each event as its chunk arrives, one chunk at a time', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    for (let i = 0; i < 5; i++) {
      const waiting = events.next();
      body.write(i === 2 ? 'event: named\n' : '');
      body.write(`data: {"i":${i}}\n\n`);
      expect(await waiting).toEqual({ value: { event: i === 2 ? 'named' : undefined, data: { i }, raw: `{"i":${i}}` }, done: false });
    }
    const end = events.next();
    body.end('data: [DONE]\n\n');
    expect(await end).toEqual({ value: undefined, done: true });
  });

  it('a chunk of several events for a waiting reader: the first answers it, the rest follow in order, then the bad one fails', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    const waiting = events.next();
    body.write('data: {"a":1}\n\ndata: {"a":2}\n\ndata: {oops}\n\ndata: {"a":3}\n\n');
    expect(await waiting).toEqual({ value: { data: { a: 1 }, raw: '{"a":1}' }, done: false });
    expect(await events.next()).toEqual({ value: { data: { a: 2 }, raw: '{"a":2}' }, done: false });
    await expect(events.next()).rejects.toThrow(/^mapped: stream event is not JSON: \{oops\}/);
    expect(body.destroyed).toBe(true);
  });

  it('a body closed without end or error is a cut answer, not a clean end', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    const waiting = events.next();
    body.destroy();
    await expect(waiting).rejects.toThrow(/closed before the answer ended/);
  });

  it('pauses the body while the reader is behind, and resumes it once the reader catches up', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    let text = '';
    for (let i = 0; i < 100; i++) text += `data: {"i":${i}}\n\n`;
    body.write(text);
    await new Promise((r) => setImmediate(r));
    expect(body.isPaused()).toBe(true);
    for (let i = 0; i < 100; i++) expect((await events.next()).value).toEqual({ data: { i }, raw: `{"i":${i}}` });
    expect(body.isPaused()).toBe(false);
    body.end('data: [DONE]\n\n');
    expect((await events.next()).done).toBe(true);
  });

  it('an early return destroys the body, and a later error on it does not throw', async () => {
    const body = new PassThrough();
    const events = sseJsonEvents(body, mapped)[Symbol.asyncIterator]();
    body.write('data: {"a":1}\n\n');
    expect((await events.next()).done).toBe(false);
    await events.return?.();
    expect(body.destroyed).toBe(true);
    body.emit('error', new Error('late'));
    expect((await events.next()).done).toBe(true);
  });
});
