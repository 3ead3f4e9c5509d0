/**
 * A whole upstream answer read straight off undici's dispatch handler: the status, the headers
 * and the body's bytes. `pool.request` wraps each answer in a Readable stream (its state, its
 * buffer list, listeners and events per chunk) and an AsyncResource, which a body read whole
 * into one Buffer does not need: about a tenth of the upstream client's CPU per request.
 * Streamed answers keep `pool.request`: their bytes are consumed as they come.
 */
import type { Dispatcher } from 'undici';
import { MAX_ERROR_BODY, type ByteBudget, type Headers } from './http-body.ts';

export interface WholeAnswer {
  statusCode: number;
  headers: Headers;
  /** A 2xx answer's body; for any other status, its first MAX_ERROR_BODY bytes. */
  body: Buffer;
  /** Bytes the upstream sent (an error body's may exceed `body`'s). */
  size: number;
}

/**
 * Sends `options` on `dispatcher` and resolves with the whole answer. A 2xx body past the
 * budget (declared or sent) fails with `tooLarge()` and the request is aborted; so does the
 * signal's abort, with its reason, at once even while the request waits for a connection.
 * Transport failures (timeouts, resets) reject with undici's error.
 */
export function fetchWhole(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal, budget: ByteBudget, tooLarge: () => Error): Promise<WholeAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const handler = new WholeAnswerHandler(signal, budget, tooLarge, resolve, reject);
    try {
      dispatcher.dispatch(options, handler);
    } catch (err) {
      handler.fail(err as Error);
    }
  });
}

class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  readonly #signal: AbortSignal;
  readonly #budget: ByteBudget;
  readonly #tooLarge: () => Error;
  readonly #resolve: (answer: WholeAnswer) => void;
  readonly #reject: (err: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  /** Set once the promise is settled: whatever undici reports after that is ignored. */
  #settled = false;
  #statusCode = 0;
  #headers: Headers = {};
  #parts: Buffer[] = [];
  #size = 0;
  #ok = false;

  constructor(signal: AbortSignal, budget: ByteBudget, tooLarge: () => Error, resolve: (answer: WholeAnswer) => void, reject: (err: unknown) => void) {
    this.#signal = signal;
    this.#budget = budget;
    this.#tooLarge = tooLarge;
    this.#resolve = resolve;
    this.#reject = reject;
    signal.addEventListener('abort', this, { once: true });
  }

  /** The signal's abort (the handler is its listener object: no closure per request). */
  handleEvent(): void {
    const reason = this.#signal.reason;
    this.fail(reason);
    this.#controller?.abort(reason);
  }

  fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#signal.removeEventListener('abort', this);
    this.#parts = [];
    this.#reject(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Aborted while it waited for a connection: the promise has failed already.
    if (this.#settled) controller.abort(this.#signal.reason ?? new Error('aborted'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    this.#statusCode = statusCode;
    this.#headers = headers;
    this.#ok = statusCode >= 200 && statusCode < 300;
    if (this.#ok && Number(headers['content-length']) > this.#budget.left) this.#refuse(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
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
    if (this.#settled) return;
    this.#settled = true;
    this.#signal.removeEventListener('abort', this);
    const parts = this.#parts;
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    this.#resolve({ statusCode: this.#statusCode, headers: this.#headers, body, size: this.#size });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  #refuse(controller: Dispatcher.DispatchController): void {
    const err = this.#tooLarge();
    this.fail(err);
    controller.abort(err);
  }
}
