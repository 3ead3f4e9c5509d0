/**
 * A log of (id, time, value) entries kept in time order with a running sum of the values: the
 * in-memory counterpart of a Redis sorted set plus a hash. The memory store's sliding windows
 * are two of these per scope (requests, tokens).
 */

interface Entry {
  readonly id: string;
  readonly at: number;
  value: number;
}

export class TimeLog {
  /** Ascending by time; equal times keep insertion order. */
  #entries: Entry[] = [];
  #byId = new Map<string, Entry>();
  #sum = 0;

  get size(): number {
    return this.#entries.length;
  }

  get sum(): number {
    return this.#sum;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  value(id: string): number | undefined {
    return this.#byId.get(id)?.value;
  }

  /** Time of the newest entry, or null when empty. */
  newest(): number | null {
    return this.#entries.at(-1)?.at ?? null;
  }

  /** The entry at `index` in time order. */
  nth(index: number): Entry | undefined {
    return this.#entries[index];
  }

  /** Adds an entry, or moves an existing one to `at` (as ZADD does). */
  add(id: string, at: number, value = 0): void {
    if (this.#byId.has(id)) this.remove(id);
    const entry: Entry = { id, at, value };
    // Callers mostly append (time only moves on), so search from the end.
    let i = this.#entries.length;
    while (i > 0 && this.#entries[i - 1]!.at > at) i--;
    this.#entries.splice(i, 0, entry);
    this.#byId.set(id, entry);
    this.#sum += value;
  }

  setValue(id: string, value: number): void {
    const entry = this.#byId.get(id);
    if (!entry) return;
    this.#sum += value - entry.value;
    entry.value = value;
  }

  remove(id: string): void {
    const entry = this.#byId.get(id);
    if (!entry) return;
    this.#entries.splice(this.#entries.indexOf(entry), 1);
    this.#byId.delete(id);
    this.#sum -= entry.value;
  }

  /** Drops the entries with `at <= cutoff`. */
  trim(cutoff: number): void {
    let n = 0;
    while (n < this.#entries.length && this.#entries[n]!.at <= cutoff) {
      const entry = this.#entries[n]!;
      this.#byId.delete(entry.id);
      this.#sum -= entry.value;
      n++;
    }
    if (n > 0) this.#entries.splice(0, n);
  }

  *[Symbol.iterator](): IterableIterator<Entry> {
    yield* this.#entries;
  }
}
