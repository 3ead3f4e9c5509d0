/**
 * The default stream decoding on the hot path: SSE events with JSON data read straight off the
 * upstream's bytes. `for await` over a Node stream runs an async generator of Node's per chunk
 * and decodeSseJson another one; here each chunk feeds the decoder as it arrives (from undici's
 * dispatch handler, see answer-handler.ts) and each parsed event costs one promise, when the
 * reader has to wait at all. Same results as decodeSseJson (src/providers/http-body.ts), which
 * stays the decoder for any other iterable.
 */
import { SseDecoder } from '../protocol/sse.ts';
import type { SseSink } from '../protocol/sse-parser.ts';
import { parseEventData, type SseJsonEvent } from './http-body.ts';

/** Parsed events held before the body is paused (the reader, i.e. the client, is slower than the upstream). */
const HIGH_WATER = 64;

/** What the events need of the bytes' source: flow control, and a way to stop it. */
export interface ByteSource {
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  /** No more bytes are wanted: the source is dropped (after the end), or aborted (`abort`: before it). */
  release(abort: boolean): void;
}

/**
 * Per event, what a reader needs and no more: the decoder hands each event to sseEvent (no message
 * record, no array), and an event for a reader already waiting (every event of a slow stream)
 * resolves its promise at once, without going through the queue. Its source feeds it through
 * bytes, end and error.
 */
export class SseJsonEvents implements AsyncIterableIterator<SseJsonEvent>, SseSink {
  #source: ByteSource | undefined;
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

  constructor(fault: (err: unknown) => unknown) {
    this.#fault = fault;
  }

  bind(source: ByteSource): void {
    this.#source = source;
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
    const stopping = !this.#ended && !this.#failure;
    // Ended first: the source's abort may report an error at once, which must not fail a stream the reader left.
    this.#ended = true;
    if (stopping) this.#source?.release(true);
    return Promise.resolve({ value: undefined, done: true });
  }

  #take(): SseJsonEvent {
    const event = this.#queue[this.#head++];
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
      const source = this.#source;
      if (source?.paused && !this.#ended) source.resume();
    }
    return event;
  }

  /** The decoder's sink: one event off the wire (a JSON SyntaxError thrown here fails the stream in bytes()). */
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

  /** The stream fails with `err` (through the fault mapper) and its source is aborted. */
  error(err: unknown): void {
    if (this.#failure || this.#ended) return;
    this.#failure = { error: this.#fault(err) };
    this.#source?.release(true);
    this.#wake();
  }

  /** A chunk of the body. */
  bytes(bytes: Uint8Array): void {
    // After [DONE] only the body's end is awaited (an early close would abort it, with an AbortError and its stack).
    if (this.#done || this.#ended || this.#failure) return;
    try {
      this.#decoder.pushTo(bytes, this);
    } catch (err) {
      this.error(err);
      return;
    }
    if (this.#queue.length - this.#head >= HIGH_WATER) this.#source?.pause();
    this.#wake();
  }

  /** The body's end. */
  end(): void {
    if (this.#ended || this.#failure) return;
    try {
      if (!this.#done) this.#decoder.endTo(this);
    } catch (err) {
      this.error(err);
      return;
    }
    this.#ended = true;
    this.#source?.release(false);
    this.#wake();
  }
}
