/**
 * `state.backend: memory`: one process's counters, exact because JavaScript runs each operation
 * to its end before the next starts (the same all-or-nothing step the Redis store gets from a
 * Lua script). Windows and leases live in memory and are lost on restart, as rate windows may
 * be; spend and usage go to a SQLite file (ledger.ts) and survive it. So does each budgeted
 * scope's reservation, from admission to settlement: after a crash the next start books the
 * reservations left at their worst case, as the Redis store books a lease that expired, so the
 * spend of the requests in flight at the crash is never lost.
 */
import { Ledger } from './ledger.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLocked, LockWatch, type LockStats } from '../runtime/sqlite.ts';
import { periodId } from './periods.ts';
import { ScopeState } from './scope-state.ts';
import { StateUnavailableError } from './types.ts';
import type { RawAdmit, RawAdmitResult, RawFigures, RawRenew, RawScope, RawSettle, ScopeStore, UsageRow } from './store.ts';

/** A failing state file (disk full, locked) is an outage of the store, as a lost Redis is. */
export interface MemoryStoreOptions {
  /** SQLite file for spend and usage; omit to keep them for this process only. */
  path?: string;
  /** Where the file's lock transitions are logged. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Epoch ms; tests inject a clock they move. */
  now?: () => number;
}

/** How long an admitted request may go unsettled before it is forgotten (as the Redis marker expires). */
const OPEN_REQUEST_TTL_MS = 86_400_000;
const SWEEP_EVERY_MS = 60_000;
/** How long an operation waits for another connection's write lock (in pauses of 1, 2, 4… ms) before the store counts as unavailable. */
const LOCK_WAIT_MS = 200;

export class MemoryStore implements ScopeStore {
  readonly #ledger: Ledger;
  #lockWatch: LockWatch | undefined;
  readonly #now: () => number;
  readonly #scopes = new Map<string, ScopeState>();
  /** Requests admitted and not yet settled, with when to forget them: a second settle is a no-op. */
  readonly #open = new Map<string, number>();
  /** Request id → the budgeted scopes whose reservation is in the file. */
  readonly #persisted = new Map<string, Set<string>>();
  #nextSweep = 0;
  /** performance.now() when a write first found the file locked, until one passes. */
  #lockedSince: number | undefined;
  #lockedAt = 0;
  /** What a previous process left reserved (it died with requests in flight), booked at open. */
  readonly recovered: { requests: number; nano: number };

  constructor(options: MemoryStoreOptions = {}) {
    this.#ledger = new Ledger(options.path ?? ':memory:');
    if (options.log) this.#lockWatch = new LockWatch(`state file ${options.path ?? ':memory:'}`, options.log, true);
    this.#now = options.now ?? Date.now;
    this.recovered = this.#ledger.bookLeftReservations();
  }

  /**
   * A write the file did not take (locked by another process: the busy timeout is a few ms, never
   * the serving thread's seconds) becomes StateUnavailable. A lock held for a moment is waited
   * out (#afterLock); past that the settlement waits in the settle queue and is replayed until
   * the lock is gone, and an admission follows `onUnavailable`.
   */
  #durably<T>(fn: () => T, writes = true): T {
    const started = performance.now();
    try {
      const result = fn();
      // Reads pass under a write lock (WAL): only a write says the lock is gone.
      if (writes) {
        this.#lockedSince = undefined;
        this.#lockWatch?.succeeded();
      }
      return result;
    } catch (err) {
      // A lock met again within LOCK_WAIT_MS of the last is the same episode (an outage goes on).
      if (isLocked(err)) {
        if (this.#lockedSince === undefined || started - this.#lockedAt > LOCK_WAIT_MS) this.#lockedSince = started;
        this.#lockedAt = started;
      }
      this.#lockWatch?.failed(err, performance.now() - started);
      throw new StateUnavailableError(`state file: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  /** Forgets the persisted reservations of `id` in `scopes`; returns those there were (to delete from the file). */
  #release(id: string, scopes: Iterable<string>): string[] {
    const held = this.#persisted.get(id);
    if (!held) return [];
    const freed: string[] = [];
    for (const name of scopes) if (held.delete(name)) freed.push(name);
    if (held.size === 0) this.#persisted.delete(id);
    return freed;
  }

  #state(name: string): ScopeState {
    let state = this.#scopes.get(name);
    if (!state) this.#scopes.set(name, (state = new ScopeState()));
    return state;
  }

  /** Trims the scope's windows, charges its dead leases, and returns what it has spent in `scope.period`. */
  #refresh(scope: RawScope, now: number): { state: ScopeState; spent: number } {
    const state = this.#state(scope.name);
    state.trim(now, (expired, charged) => {
      const persisted = expired.filter((id) => this.#persisted.get(id)?.has(scope.name));
      // The dead leases' worst case is booked and their reservations leave the file together;
      // the leases are forgotten only once that is written.
      this.#ledger.atomically(() => {
        this.#ledger.addSpend(scope.name, now, charged);
        for (const id of persisted) this.#ledger.unreserve(id, scope.name);
      });
      for (const id of persisted) this.#release(id, [scope.name]);
    });
    return { state, spent: this.#ledger.spent(scope.name, periodId(scope.period, now)) };
  }

  /**
   * Runs `op` again (synchronous, all or nothing, as every operation here) after `err`, waiting
   * out a write lock another connection holds for a moment (a cluster worker's ledger batch, a
   * replacement worker's start): an admission that met one would otherwise be refused
   * (`onUnavailable: closed`) or let through without a reservation (`open`). The waits are
   * timers, never the thread's. A lock held longer than LOCK_WAIT_MS is an outage: until a write
   * passes, later calls try once and fail at once.
   */
  async #afterLock<T>(err: unknown, op: () => T): Promise<T> {
    for (let pause = 1; ; pause *= 2) {
      const left = this.#lockedSince === undefined ? 0 : LOCK_WAIT_MS - (performance.now() - this.#lockedSince);
      if (left <= 0) {
        this.#lockWatch?.outage();
        throw err;
      }
      await sleep(Math.min(pause, left));
      try {
        return op();
      } catch (again) {
        err = again;
      }
    }
  }

  async admit(request: RawAdmit): Promise<RawAdmitResult> {
    try {
      return this.#admit(request);
    } catch (err) {
      return this.#afterLock(err, () => this.#admit(request));
    }
  }

  #admit(request: RawAdmit): RawAdmitResult {
    const now = request.now ?? this.#now();
    this.#sweep(now);
    const live = this.#durably(() => request.scopes.map((scope) => this.#refresh(scope, now)), false);
    const violations = request.scopes.flatMap((scope, i) => live[i]!.state.check(i, scope, request.id, request.tokens, request.costNano, live[i]!.spent));
    const admitted = violations.length === 0;
    if (admitted) {
      // Budgeted scopes' reservations go to the file first: if it fails, nothing was reserved.
      const budgeted = request.costNano > 0 ? request.scopes.filter((scope) => scope.budgetNano !== undefined) : [];
      if (budgeted.length > 0) {
        this.#durably(() => this.#ledger.atomically(() => budgeted.forEach((scope) => this.#ledger.reserve(request.id, scope.name, now, request.costNano))));
        let held = this.#persisted.get(request.id);
        if (!held) this.#persisted.set(request.id, (held = new Set()));
        for (const scope of budgeted) held.add(scope.name);
      }
      for (const { state } of live) state.reserve(request.id, now, request.tokens, request.costNano, request.leaseTtlMs);
      this.#open.set(request.id, now + OPEN_REQUEST_TTL_MS);
    }
    return { now, admitted, figures: live.map(({ state, spent }) => state.figures(spent)), violations };
  }

  async settle(settlement: RawSettle): Promise<void> {
    try {
      this.#settle(settlement);
    } catch (err) {
      await this.#afterLock(err, () => this.#settle(settlement));
    }
  }

  #settle(settlement: RawSettle): void {
    const { id, reserved, final, costNano } = settlement;
    if (final && reserved && !this.#open.has(id)) return;
    const states = settlement.scopes.map((name) => this.#scopes.get(name));
    // The file first: if it fails, nothing changed and the settlement can be replayed whole.
    // A reserved lease that is gone expired and was charged its worst case already.
    const charged = costNano === null || costNano === 0 ? [] : settlement.scopes.filter((_, i) => !reserved || states[i]?.holds(id));
    // The settled scopes' reservations leave the file with the spend that replaces them (a final settle: all of them).
    const held = this.#persisted.get(id);
    const freed = held ? [...held].filter((name) => final || settlement.scopes.includes(name)) : [];
    if (charged.length || freed.length) {
      this.#durably(() =>
        this.#ledger.atomically(() => {
          for (const name of charged) this.#ledger.addSpend(name, settlement.at, costNano!);
          for (const name of freed) this.#ledger.unreserve(id, name);
        }),
      );
      this.#release(id, freed);
    }
    // Usage records are gathered and written together (they feed reports, not budgets).
    if (final && settlement.labels) this.#ledger.addUsage(settlement.at, settlement.labels, settlement.usage, costNano);
    if (final) this.#open.delete(id);
    for (const state of states) {
      state?.endLease(id);
      state?.setTokens(id, settlement.tokens);
    }
  }

  async renew(renewal: RawRenew): Promise<void> {
    const now = renewal.now ?? this.#now();
    for (const lease of renewal.leases) {
      for (const name of lease.scopes) this.#scopes.get(name)?.renew(lease.id, now + renewal.leaseTtlMs);
      if (this.#open.has(lease.id)) this.#open.set(lease.id, now + OPEN_REQUEST_TTL_MS);
    }
  }

  async figures(scopes: RawScope[], at?: number): Promise<{ now: number; figures: RawFigures[] }> {
    try {
      return this.#figures(scopes, at);
    } catch (err) {
      return this.#afterLock(err, () => this.#figures(scopes, at));
    }
  }

  #figures(scopes: RawScope[], at?: number): { now: number; figures: RawFigures[] } {
    const now = at ?? this.#now();
    // Charging a dead lease writes: a lock may be waited out here too.
    const live = this.#durably(() => scopes.map((scope) => this.#refresh(scope, now)), false);
    return { now, figures: live.map(({ state, spent }) => state.figures(spent)) };
  }

  async usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    return this.#ledger.usageRows(fromDay, toDay);
  }

  /** The state file's lock waits, for metrics (undefined without a logger: nothing is watched). */
  lockStats(): LockStats | undefined {
    return this.#lockWatch?.stats;
  }

  async close(): Promise<void> {
    this.#ledger.close();
  }

  #sweep(now: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + SWEEP_EVERY_MS;
    for (const [id, until] of this.#open) if (until <= now) this.#open.delete(id);
  }
}
