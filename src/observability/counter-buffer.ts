/**
 * Per-request counting without prom-client's per-call work (hashing and checking the labels):
 * increments are added to plain numbers, one per label set, and handed to the Counter when it
 * is collected (a scrape, or a cluster primary gathering its workers). The label sets must be
 * made once and reused (the map is keyed by the object), so it holds at most one entry per
 * series and is emptied at every scrape.
 */
import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

export class BufferedCounter<T extends string> {
  readonly counter: Counter<T>;
  readonly #pending = new Map<LabelValues<T>, number>();

  constructor(config: Omit<CounterConfiguration<T>, 'collect'>) {
    const flush = () => this.flush();
    this.counter = new Counter<T>({
      ...config,
      collect() {
        flush();
      },
    });
  }

  /** Adds `n` to the series of `labels`, an object made once for that series. */
  add(labels: LabelValues<T>, n: number): void {
    this.#pending.set(labels, (this.#pending.get(labels) ?? 0) + n);
  }

  flush(): void {
    for (const [labels, n] of this.#pending) this.counter.inc(labels, n);
    this.#pending.clear();
  }
}
