/**
 * The default stream decoding on the hot path: SSE events with JSON data read straight off the
 * upstream's body stream. `for await` over a Node stream runs an async generator of Node's per
 * chunk and decodeSseJson another one; here the body's 'data' events feed the decoder and each
 * parsed event costs one promise, when the reader has to wait at all. Same results as
 * decodeSseJson (src/providers/http-body.ts), which stays the decoder for any other iterable.
 */
import type { Readable } from 'node:stream';
import { SseDecoder, type SseMessage } from '../protocol/sse.ts';
import { decodeSseJson, parseEventData, type SseJsonEvent } from './http-body.ts';

/** Parsed events held before the body is paused (the reader, i.e. the client, is slower than the upstream). */
const HIGH_WATER = 64;

export function sseJsonEvents(body: AsyncIterable<Uint8Array>, fault: (err: unknown) => unknown): AsyncIterable<SseJsonEvent> {
  return isReadable(body) ? new ReadableSseJson(body, fault) : decodeSseJson(body, fault);
}

function isReadable(body: unknown): body is Readable {
  return typeof (body as Readable).on === 'function' && typeof (body as Readable).pause === 'function' && typeof (body as Readable).destroy === 'function';
}

class ReadableSseJson implements AsyncIterableIterator<SseJsonEvent> {
  readonly #body: Readable;
  readonly #fault: (err: unknown) => unknown;
  readonly #decoder = new SseDecoder();
  #queue: SseJsonEvent[] = [];
  #head = 0;
  /** `data: [DONE]` arrived: what follows is read (to the end of the body) but not parsed. */
  #done = false;
  #ended = false;
  #failure: { error: unknown } | undefined;
  #waiter: { resolve: (r: IteratorResult<SseJsonEvent>) => void; reject: (err: unknown) => void } | undefined;

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
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

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
      this.#queue = [];
      this.#head = 0;
      if (this.#body.isPaused() && !this.#ended) this.#body.resume();
    }
    return event;
  }

  #accept(messages: readonly SseMessage[]): void {
    for (let i = 0; i < messages.length && !this.#done; i++) {
      const message = messages[i];
      if (message.data === '[DONE]') this.#done = true;
      else this.#queue.push({ event: message.event, data: parseEventData(message.data), raw: message.data });
    }
  }

  /** Hands the next event (or the end, or the failure) to a reader that is waiting. */
  #wake(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    if (this.#head < this.#queue.length) {
      this.#waiter = undefined;
      waiter.resolve({ value: this.#take(), done: false });
    } else if (this.#failure) {
      this.#waiter = undefined;
      waiter.reject(this.#failure.error);
    } else if (this.#ended) {
      this.#waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
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
      const messages = this.#decoder.push(bytes);
      if (messages.length > 0) this.#accept(messages);
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (this.#queue.length - this.#head >= HIGH_WATER) this.#body.pause();
    this.#wake();
  };

  readonly #onEnd = (): void => {
    try {
      if (!this.#done) this.#accept(this.#decoder.end());
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
