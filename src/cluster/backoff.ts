/**
 * How long to wait before replacing a worker that died: short for a one-off crash, growing while
 * workers keep dying (a file that no longer loads, a port taken), so the primary does not spin.
 */
export interface BackoffOptions {
  firstMs: number;
  maxMs: number;
  /** A death this long after the previous one starts over from firstMs. */
  forgetAfterMs: number;
}

export class Backoff {
  readonly #options: BackoffOptions;
  #inARow = 0;
  #last = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions) {
    this.#options = options;
  }

  /** The delay for a death at `now` (epoch ms): firstMs, doubling with each death that follows soon, up to maxMs. */
  next(now: number): number {
    const { firstMs, maxMs, forgetAfterMs } = this.#options;
    if (now - this.#last > forgetAfterMs) this.#inARow = 0;
    this.#last = now;
    return Math.min(firstMs * 2 ** this.#inARow++, maxMs);
  }
}
