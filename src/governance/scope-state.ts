/**
 * One scope's live counters in the memory store: the request and token windows and the leases
 * of the requests in flight. The rules are those of the Redis admission script (redis-lua.ts),
 * line for line; the shared backend suite holds both to them.
 */
import { TimeLog } from './time-log.ts';
import { WINDOW_MS, type RawFigures, type RawScope, type RawViolation } from './store.ts';

interface Held {
  expiresAt: number;
  costNano: number;
}

export class ScopeState {
  readonly #requests = new TimeLog();
  readonly #tokens = new TimeLog();
  readonly #leases = new Map<string, Held>();
  #reservedNano = 0;

  /**
   * Drops what left the window and forgets the expired leases, whose reserved cost `book` charges
   * first (the ids name their persisted reservations). A `book` that throws (the state file is
   * locked) leaves the leases held: the next call books them, never once for nothing.
   */
  trim(now: number, book: (expired: string[], chargedNano: number) => void): void {
    this.#requests.trim(now - WINDOW_MS);
    this.#tokens.trim(now - WINDOW_MS);
    let charged = 0;
    const expired: string[] = [];
    for (const [id, lease] of this.#leases) {
      if (lease.expiresAt > now) continue;
      charged += lease.costNano;
      expired.push(id);
    }
    if (expired.length === 0) return;
    book(expired, charged);
    for (const id of expired) this.#leases.delete(id);
    this.#reservedNano -= charged;
  }

  holds(id: string): boolean {
    return this.#leases.has(id);
  }

  /** The limits this reservation would break; a lease this request already holds is not counted twice. */
  check(index: number, scope: RawScope, id: string, tokens: number, costNano: number, spentNano: number): RawViolation[] {
    const found: RawViolation[] = [];
    const held = this.#leases.get(id);
    if (scope.rpm !== undefined && !held && this.#requests.size + 1 > scope.rpm) {
      // The window fits one more once the entries up to this one have expired.
      const oldest = this.#requests.nth(this.#requests.size - scope.rpm);
      found.push({ scope: index, kind: 'requests', used: this.#requests.size, limit: scope.rpm, retryAt: oldest ? oldest.at + WINDOW_MS : null, final: !oldest });
    }
    if (scope.tpm !== undefined) {
      const over = this.#tokens.sum + tokens - (this.#tokens.value(id) ?? 0) - scope.tpm;
      if (over > 0) {
        const tooLarge = tokens > scope.tpm;
        found.push({ scope: index, kind: 'tokens', used: this.#tokens.sum, limit: scope.tpm, retryAt: tooLarge ? null : this.#tokensFreedAt(id, over), final: tooLarge });
      }
    }
    if (scope.concurrency !== undefined && !held && this.#leases.size + 1 > scope.concurrency) {
      found.push({ scope: index, kind: 'concurrency', used: this.#leases.size, limit: scope.concurrency, retryAt: null, final: scope.concurrency === 0 });
    }
    if (scope.budgetNano !== undefined) {
      const used = spentNano + this.#reservedNano;
      // Final: even with every reservation in flight given back, this request would not fit.
      if (spentNano + costNano > scope.budgetNano) found.push({ scope: index, kind: 'budget', used, limit: scope.budgetNano, retryAt: null, final: true });
      else if (used - (held?.costNano ?? 0) + costNano > scope.budgetNano) found.push({ scope: index, kind: 'budget', used, limit: scope.budgetNano, retryAt: null, final: false });
    }
    return found;
  }

  /** When `need` tokens will have left the window (entries expire oldest first). */
  #tokensFreedAt(id: string, need: number): number | null {
    let freed = 0;
    for (const entry of this.#tokens) {
      if (entry.id === id) continue;
      freed += entry.value;
      if (freed >= need) return entry.at + WINDOW_MS;
    }
    return null;
  }

  reserve(id: string, now: number, tokens: number, costNano: number, leaseTtlMs: number): void {
    const held = this.#leases.get(id);
    if (!held) this.#requests.add(id, now);
    this.#reservedNano += costNano - (held?.costNano ?? 0);
    this.#leases.set(id, { expiresAt: now + leaseTtlMs, costNano });
    if (this.#tokens.has(id)) this.#tokens.setValue(id, tokens);
    else this.#tokens.add(id, now, tokens);
  }

  /** Ends the lease; false when there was none (never reserved, settled already, or expired and charged). */
  endLease(id: string): boolean {
    const held = this.#leases.get(id);
    if (!held) return false;
    this.#leases.delete(id);
    this.#reservedNano -= held.costNano;
    return true;
  }

  /** Real tokens into the request's window entry, if it is still in the window. */
  setTokens(id: string, tokens: number): void {
    this.#tokens.setValue(id, tokens);
  }

  renew(id: string, expiresAt: number): void {
    const held = this.#leases.get(id);
    if (held) held.expiresAt = expiresAt;
  }

  figures(spentNano: number): RawFigures {
    return {
      requests: this.#requests.size,
      requestsNewest: this.#requests.newest(),
      tokens: this.#tokens.sum,
      tokensNewest: this.#tokens.newest(),
      inFlight: this.#leases.size,
      reservedNano: this.#reservedNano,
      spentNano,
    };
  }
}
