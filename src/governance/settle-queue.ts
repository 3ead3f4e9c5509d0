/**
 * Settlements the store could not take (it was down), replayed in order until it takes them:
 * spend reported while Redis was away is booked when it is back, not lost. Bounded; beyond the
 * bound the oldest is dropped, and that is logged once per outage.
 */
import type { RawSettle, ScopeStore } from './store.ts';
import { StateUnavailableError, type GovernanceLogger } from './types.ts';

export interface SettleQueueOptions {
  max: number;
  retryEveryMs: number;
  log: GovernanceLogger;
}

export class SettleQueue {
  readonly #store: ScopeStore;
  readonly #options: SettleQueueOptions;
  readonly #pending: RawSettle[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #dropped = 0;
  /** Dropped since start (the queue was full), for metrics. */
  droppedTotal = 0;

  constructor(store: ScopeStore, options: SettleQueueOptions) {
    this.#store = store;
    this.#options = options;
  }

  get size(): number {
    return this.#pending.length;
  }

  push(settlement: RawSettle): void {
    if (this.#pending.length >= this.#options.max) {
      this.#pending.shift();
      this.droppedTotal++;
      if (this.#dropped++ === 0) this.#options.log.error({ max: this.#options.max }, 'state backend unavailable too long: dropping the oldest unsettled usage');
    }
    this.#pending.push(settlement);
    this.#timer ??= setInterval(() => void this.flush(), this.#options.retryEveryMs).unref();
  }

  /** Replays in order; stops at the first failure and tries again on the next tick. */
  flush(): Promise<void> {
    this.#flushing ??= this.#replay().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #replay(): Promise<void> {
    while (this.#pending.length > 0) {
      try {
        await this.#store.settle(this.#pending[0]!);
      } catch (err) {
        if (err instanceof StateUnavailableError) return;
        // Rejected, not unreachable: retrying would block everything behind it.
        this.#options.log.error({ err: String(err), lease: this.#pending[0]!.id }, 'state backend rejected a queued settlement');
      }
      this.#pending.shift();
    }
    if (this.#dropped > 0) this.#options.log.warn({ dropped: this.#dropped }, 'unsettled usage replayed; some was dropped');
    this.#dropped = 0;
    this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
