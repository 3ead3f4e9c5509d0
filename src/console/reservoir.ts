/** Latency samples the console keeps per 10-second bucket: a fixed-size uniform sample, so percentiles stay fair under load. */
/** A uniform sample of at most `size` values (Vitter's algorithm R). */
export class Reservoir {
  readonly values: number[] = [];
  readonly size: number;
  #seen = 0;
  constructor(size: number) {
    this.size = size;
  }

  add(value: number): void {
    this.#seen++;
    if (this.values.length < this.size) this.values.push(value);
    else {
      const i = Math.floor(Math.random() * this.#seen);
      if (i < this.size) this.values[i] = value;
    }
  }

  merge(other: Reservoir): void {
    for (const v of other.values) this.add(v);
  }

  /** Nearest-rank quantile; null when empty. */
  quantile(q: number): number | null {
    if (this.values.length === 0) return null;
    const sorted = [...this.values].sort((a, b) => a - b);
    return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
  }
}
