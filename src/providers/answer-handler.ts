/**
 * Upstream answers read straight off undici's dispatch handler. `pool.request` wraps each answer
 * in a Readable stream (its state, its buffer list, listeners and events per chunk) and an
 * AsyncResource. A JSON answer read whole into one Buffer needs none of it (fetchWhole: about a
 * tenth of the upstream client's CPU per request), and an event stream's chunks can feed its SSE
 * decoder as they arrive (fetchEvents), with the handler's pause and resume as backpressure.
 */
import type { Dispatcher } from 'undici';
import { MAX_ERROR_BODY, type ByteBudget, type Headers, type SseJsonEvent } from './http-body.ts';
import { type ByteSource, SseJsonEvents } from './sse-events.ts';

export interface WholeAnswer {
  statusCode: number;
  headers: Headers;
  /** A 2xx answer's body; for any other status, its first MAX_ERROR_BODY bytes. */
  body: Buffer;
  /** Bytes the upstream sent (an error body's may exceed `body`'s). */
  size: number;
}

/** A 2xx event stream, as it starts: its events follow as the upstream sends them. */
export interface StreamedAnswer {
  statusCode: number;
  headers: Headers;
  events: AsyncIterable<SseJsonEvent>;
}

/**
 * Sends `options` on `dispatcher` and resolves with the whole answer. A 2xx body past the
 * budget (declared or sent) fails with `tooLarge()` and the request is aborted; so does the
 * signal's abort, with its reason, at once even while the request waits for a connection.
 * Transport failures (timeouts, resets) reject with undici's error.
 */
export function fetchWhole(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal, budget: ByteBudget, tooLarge: () => Error): Promise<WholeAnswer> {
  return send(dispatcher, options, signal, budget, tooLarge, undefined) as Promise<WholeAnswer>;
}

/**
 * Sends `options` and resolves when the answer starts: a 2xx with its SSE JSON events (failures
 * after the start, the signal's abort among them, fail them through `fault`), any other status
 * whole as fetchWhole gives it. Failures before the start reject as fetchWhole's.
 */
export function fetchEvents(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal, fault: (err: unknown) => unknown): Promise<StreamedAnswer | WholeAnswer> {
  return send(dispatcher, options, signal, { left: Number.POSITIVE_INFINITY }, NEVER_TOO_LARGE, new SseJsonEvents(fault));
}

const NEVER_TOO_LARGE = (): Error => new Error('unreachable: an event stream has no byte budget');
/** The reason an event stream's request is aborted with when its reader stops early (made once: an abort's reason is never shown). */
const READER_STOPPED = new Error('the reader stopped reading the stream');

function send(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal,
  budget: ByteBudget,
  tooLarge: () => Error,
  events: SseJsonEvents | undefined,
): Promise<StreamedAnswer | WholeAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const handler = new AnswerHandler(signal, budget, tooLarge, events, resolve, reject);
    try {
      dispatcher.dispatch(options, handler);
    } catch (err) {
      handler.fail(err as Error);
    }
  });
}

class AnswerHandler implements Dispatcher.DispatchHandler, ByteSource {
  readonly #signal: AbortSignal;
  readonly #budget: ByteBudget;
  readonly #tooLarge: () => Error;
  readonly #resolve: (answer: StreamedAnswer | WholeAnswer) => void;
  readonly #reject: (err: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  /** Set once the promise is settled: whatever undici reports after that goes to #events, if anywhere. */
  #settled = false;
  /** The 2xx answer's events, fed once the promise has resolved with them (fetchEvents). */
  readonly #events: SseJsonEvents | undefined;
  #streaming = false;
  /** The request is over (ended, failed or aborted): nothing more to abort or listen for. */
  #over = false;
  #statusCode = 0;
  #headers: Headers = {};
  #parts: Buffer[] = [];
  #size = 0;
  #ok = false;

  constructor(
    signal: AbortSignal,
    budget: ByteBudget,
    tooLarge: () => Error,
    events: SseJsonEvents | undefined,
    resolve: (answer: StreamedAnswer | WholeAnswer) => void,
    reject: (err: unknown) => void,
  ) {
    this.#signal = signal;
    this.#budget = budget;
    this.#tooLarge = tooLarge;
    this.#events = events;
    this.#resolve = resolve;
    this.#reject = reject;
    signal.addEventListener('abort', this, { once: true });
  }

  /** The signal's abort (the handler is its listener object: no closure per request). */
  handleEvent(): void {
    const reason = this.#signal.reason;
    if (this.#streaming) {
      this.#events?.error(reason);
      return;
    }
    this.#abort(reason);
    this.fail(reason);
  }

  fail(err: unknown): void {
    this.#finish();
    if (this.#settled) return;
    this.#settled = true;
    this.#parts = [];
    this.#reject(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Aborted while it waited for a connection: the promise has failed already.
    if (this.#settled) controller.abort(this.#signal.reason ?? READER_STOPPED);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    if (this.#settled) return;
    this.#statusCode = statusCode;
    this.#headers = headers;
    this.#ok = statusCode >= 200 && statusCode < 300;
    if (!this.#ok) return;
    const events = this.#events;
    if (events) {
      this.#settled = this.#streaming = true;
      events.bind(this);
      this.#resolve({ statusCode, headers, events });
    } else if (Number(headers['content-length']) > this.#budget.left) this.#refuse(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#streaming) {
      this.#events?.bytes(chunk);
      return;
    }
    if (this.#settled) return;
    const before = this.#size;
    this.#size += chunk.length;
    if (!this.#ok) {
      if (before < MAX_ERROR_BODY) this.#parts.push(chunk);
      return;
    }
    this.#budget.left -= chunk.length;
    if (this.#budget.left < 0) this.#refuse(controller);
    else this.#parts.push(chunk);
  }

  onResponseEnd(): void {
    this.#finish();
    if (this.#streaming) {
      this.#events?.end();
      return;
    }
    if (this.#settled) return;
    this.#settled = true;
    const parts = this.#parts;
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    this.#resolve({ statusCode: this.#statusCode, headers: this.#headers, body, size: this.#size });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#finish();
    if (this.#streaming) this.#events?.error(err);
    else this.fail(err);
  }

  // ByteSource, for the events: backpressure and an early stop.
  get paused(): boolean {
    return this.#controller?.paused ?? false;
  }

  pause(): void {
    this.#controller?.pause();
  }

  resume(): void {
    this.#controller?.resume();
  }

  release(abort: boolean): void {
    if (abort) this.#abort(READER_STOPPED);
    this.#finish();
  }

  #abort(reason: Error): void {
    if (this.#over) return;
    this.#over = true;
    this.#signal.removeEventListener('abort', this);
    this.#controller?.abort(reason);
  }

  /** The request is over: the signal need not be listened to any more. */
  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.#signal.removeEventListener('abort', this);
  }

  #refuse(controller: Dispatcher.DispatchController): void {
    const err = this.#tooLarge();
    this.fail(err);
    controller.abort(err);
  }
}
