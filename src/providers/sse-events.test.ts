/** The hot-path SSE JSON reader over a Node stream: the same events as decodeSseJson, its failures mapped, backpressure, early return. */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeSseJson } from './http-body.ts';
import { sseJsonEvents } from './sse-events.ts';

const mapped = (err: unknown) => new Error(`mapped: ${(err as Error).message}`);

async function collect(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const parts = ['data: {"a":1}\n\nevent: x\ndata: {"b"', ':2}\n\n: keep-alive\n\ndata: [DONE]\n\n'];

describe('sseJsonEvents over a Node stream', () => {
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
