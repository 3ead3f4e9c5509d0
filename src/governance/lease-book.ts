/**
 * The leases this instance holds, so that they are renewed while their requests run. A lease
 * nobody renews expires (its instance died) and its concurrency slot comes back to the others.
 */
import type { RawRenew } from './store.ts';

export class LeaseBook {
  readonly #held = new Map<string, Set<string>>();

  hold(id: string, scopes: Iterable<string>): void {
    let names = this.#held.get(id);
    if (!names) this.#held.set(id, (names = new Set()));
    for (const name of scopes) names.add(name);
  }

  /** The scopes of `id` this instance holds already (a re-admission does not count them again). */
  heldBy(id: string): ReadonlySet<string> {
    return this.#held.get(id) ?? new Set();
  }

  drop(id: string, scopes: Iterable<string>): void {
    const names = this.#held.get(id);
    if (!names) return;
    for (const name of scopes) names.delete(name);
    if (names.size === 0) this.#held.delete(id);
  }

  forget(id: string): void {
    this.#held.delete(id);
  }

  get size(): number {
    return this.#held.size;
  }

  leases(): RawRenew['leases'] {
    return [...this.#held].map(([id, names]) => ({ id, scopes: [...names] }));
  }
}
