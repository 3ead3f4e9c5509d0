/**
 * The default stream decoding on the hot path: SSE events with JSON data read straight off the
 * upstream's body stream. `for await` over a Node stream runs an async generator of Node's per
 * chunk and decodeSseJson another one; here the body's 'data' events feed the decoder and each
 * parsed event costs one promise, when the reader has to wait at all. Same results as
 * decodeSseJson (src/providers/http-body.ts), which stays the decoder for any other iterable.
 */
import type { Readable } from 'node:stream';
import { SseDecoder } from '../protocol/sse.ts';
import type { SseSink } from '../protocol/sse-parser.ts';
import { decodeSseJson, parseEventData, type SseJsonEvent } from './http-body.ts';

/** Parsed events held before the body is paused (the reader, i.e. the client, is slower than the upstream). */
const HIGH_WATER = 64;

export function sseJsonEvents(body: AsyncIterable<Uint8Array>, fault: (err: unknown) => unknown): AsyncIterable<SseJsonEvent> {
  return isReadable(body) ? new ReadableSseJson(body, fault) : decodeSseJson(body, fault);
}

function isReadable(body: unknown): body is Readable {
  return typeof (body as Readable).on === 'function' && typeof (body as Readable).pause === 'function' && typeof (body as Readable).destroy === 'function';
}

/**
 * Per event, what a reader needs and no more: the decoder hands each event to sseEvent (no message
 * record, no array), and an event for a reader already waiting (every event of a slow stream)
 * resolves its promise at once, without going through the queue.
 */
class ReadableSseJson implements AsyncIterableIterator<SseJsonEvent>, SseSink {
  readonly #body: Readable;
  readonly #fault: (err: unknown) => unknown;
  readonly #decoder = new SseDecoder();
  /** Events parsed and not read yet, from #head on; emptied in place once read. */
  readonly #queue: SseJsonEvent[] = [];
  #head = 0;
  /** `data: [DONE]` arrived: what follows is read (to the end of the body) but not parsed. */
  #done = false;
  #ended = false;
  #failure: { error: unknown } | undefined;
  /** A waiting reader's promise (both set, or neither). */
  #resolve: ((r: IteratorResult<SseJsonEvent>) => void) | undefined;
  #reject: ((err: unknown) => void) | undefined;

  constructor(body: Readable, fault: (err: unknown) => unknown) {
    this.#body = body;
    this.#fault = fault;
    body.on('data', this.#onData);
    body.once('end', this.#onEnd);
    body.once('error', this.#onError);
    body.once('close', this.#onClose);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<SseJsonEvent>> {
    if (this.#head < this.#queue.length) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#failure) return Promise.reject(this.#failure.error);
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise(this.#wait);
  }

  /** The executor of a waiting reader's promise: one function per stream, not one per event. */
  readonly #wait = (resolve: (r: IteratorResult<SseJsonEvent>) => void, reject: (err: unknown) => void): void => {
    this.#resolve = resolve;
    this.#reject = reject;
  };

  /** The reader stopped early: the body is not needed any more. */
  return(): Promise<IteratorResult<SseJsonEvent>> {
    this.#detach();
    if (!this.#ended) this.#body.destroy();
    this.#ended = true;
    return Promise.resolve({ value: undefined, done: true });
  }

  #take(): SseJsonEvent {
    const event = this.#queue[this.#head++];
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
      if (this.#body.isPaused() && !this.#ended) this.#body.resume();
    }
    return event;
  }

  /** The decoder's sink: one event off the wire (a JSON SyntaxError thrown here fails the stream in #onData). */
  sseEvent(data: string, event: string | undefined): void {
    if (this.#done) return;
    if (data === '[DONE]') {
      this.#done = true;
      return;
    }
    const parsed: SseJsonEvent = { event, data: parseEventData(data), raw: data };
    const resolve = this.#resolve;
    // A reader waits, so nothing is queued: the event is its answer (settled in a microtask, after this chunk, as before).
    if (resolve && this.#head === this.#queue.length) {
      this.#resolve = this.#reject = undefined;
      resolve({ value: parsed, done: false });
    } else this.#queue.push(parsed);
  }

  /** Hands the next event (or the end, or the failure) to a reader that is waiting. */
  #wake(): void {
    const resolve = this.#resolve;
    const reject = this.#reject;
    if (!resolve || !reject) return;
    if (this.#head < this.#queue.length) {
      this.#resolve = this.#reject = undefined;
      resolve({ value: this.#take(), done: false });
    } else if (this.#failure) {
      this.#resolve = this.#reject = undefined;
      reject(this.#failure.error);
    } else if (this.#ended) {
      this.#resolve = this.#reject = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  #fail(err: unknown): void {
    if (this.#failure || this.#ended) return;
    this.#failure = { error: this.#fault(err) };
    this.#detach();
    this.#body.destroy();
    this.#wake();
  }

  readonly #onData = (bytes: Uint8Array): void => {
    // After [DONE] only the body's end is awaited (an early close would abort it, with an AbortError and its stack).
    if (this.#done) return;
    try {
      this.#decoder.pushTo(bytes, this);
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (this.#queue.length - this.#head >= HIGH_WATER) this.#body.pause();
    this.#wake();
  };

  readonly #onEnd = (): void => {
    try {
      if (!this.#done) this.#decoder.endTo(this);
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.#ended = true;
    this.#detach();
    this.#wake();
  };

  readonly #onError = (err: unknown): void => this.#fail(err);

  /** Closed without 'end' or 'error' (destroyed without a reason): the answer is cut short. */
  readonly #onClose = (): void => {
    if (!this.#ended && !this.#failure) this.#fail(new Error('the upstream connection closed before the answer ended'));
  };

  #detach(): void {
    const body = this.#body;
    body.off('data', this.#onData);
    body.off('end', this.#onEnd);
    body.off('error', this.#onError);
    body.off('close', this.#onClose);
    // A stream destroyed later with a reason (an abort) must not find no listener: that would throw.
    body.on('error', ignore);
  }
}

function ignore(): void {}
