/**
 * The exact cache in memory: least recently used first out, bounded by the bytes of the
 * entries' JSON (not their count: one long answer weighs what a thousand short ones do).
 */
import type { CacheEntry, CacheStore } from './entry.ts';

interface Slot {
  json: string;
  bytes: number;
  expiresAt: number;
}

export class MemoryCache implements CacheStore {
  readonly #slots = new Map<string, Slot>();
  readonly #maxBytes: number;
  readonly #now: () => number;
  #bytes = 0;

  constructor(maxBytes: number, now: () => number = Date.now) {
    this.#maxBytes = maxBytes;
    this.#now = now;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#slots.size;
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    this.#slots.delete(key);
    if (slot.expiresAt <= this.#now()) {
      this.#bytes -= slot.bytes;
      return undefined;
    }
    // Most recently used last: the map's order is the eviction order.
    this.#slots.set(key, slot);
    return JSON.parse(slot.json) as CacheEntry;
  }

  async set(key: string, json: string, ttlMs: number): Promise<void> {
    const bytes = Buffer.byteLength(json);
    // An entry bigger than a tenth of the cache would push out everything else: not kept.
    if (bytes > this.#maxBytes / 10) return;
    const old = this.#slots.get(key);
    if (old) {
      this.#slots.delete(key);
      this.#bytes -= old.bytes;
    }
    this.#slots.set(key, { json, bytes, expiresAt: this.#now() + ttlMs });
    this.#bytes += bytes;
    for (const [k, slot] of this.#slots) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#slots.delete(k);
      this.#bytes -= slot.bytes;
    }
  }
}
