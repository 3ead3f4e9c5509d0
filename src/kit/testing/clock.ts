import type { Clock } from '../../index.ts';
import { mulberry32 } from '../index.ts';

/** Seeded randomness, so statistical tests give the same answer every run. */
export { mulberry32 };

/**
 * A clock for deterministic tests (pass it as `clock` to the gateway): waits are recorded and
 * pass at once, moving time forward by their length; `advance()` jumps ahead. Real time still
 * flows underneath, so budgets measured against real timers (attempt timeouts) stay consistent.
 */
export class FakeClock implements Clock {
  #offset = 0;
  /** Every wait asked for (retry backoff, Retry-After), in order. */
  readonly sleeps: number[] = [];
  #random: () => number;

  constructor(seed = 42) {
    this.#random = mulberry32(seed);
  }

  now(): number {
    return Date.now() + this.#offset;
  }

  /** Records the wait and lets it pass at once, moving time forward by it. */
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.#offset += ms;
  }

  random(): number {
    return this.#random();
  }

  advance(ms: number): void {
    this.#offset += ms;
  }
}
