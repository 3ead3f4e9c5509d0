/**
 * The StateBackend the pipeline uses, over either store: request ids made unique, prices
 * checked, leases renewed while requests run, settlements kept while the store is down, and
 * the store's raw integers turned into quotas and refusals (decide.ts). Never rejects on the
 * request path: admit answers `unavailable`, settle answers `queued`.
 */
import { randomUUID } from 'node:crypto';
import { chooseRefusal, quotaOf, rawScope, refusalOf } from './decide.ts';
import { LeaseBook } from './lease-book.ts';
import { SettleQueue } from './settle-queue.ts';
import { toNano, type RawSettle, type ScopeStore } from './store.ts';
import { daysOf, usagePage } from './usage-report.ts';
import {
  StateUnavailableError,
  type AdmitRequest,
  type AdmitResult,
  type GovernanceLogger,
  type Lease,
  type Refusal,
  type Scope,
  type ScopeQuota,
  type SettleOutcome,
  type Settlement,
  type StateBackend,
  type TokenUsage,
  type UsagePage,
  type UsageQuery,
} from './types.ts';

export interface EngineOptions {
  log: GovernanceLogger;
  /** Epoch ms for what the store does not time (leases admitted without it); default Date.now. */
  now?: () => number;
  /** A concurrency slot whose instance stops renewing it is free again after this long. */
  leaseTtlMs?: number;
  /** Default: a third of leaseTtlMs, so a lease survives two missed renewals. */
  renewEveryMs?: number;
  /** Settlements kept while the store is down. */
  maxQueued?: number;
  retryEveryMs?: number;
  /**
   * Whether settlements write usage records (default true). False when the request ledger keeps
   * them (its rows answer the usage report): a lease that counts against nothing then has nothing
   * to settle, and a request of a key without limits costs the store nothing.
   */
  usageRecords?: boolean;
}

const NOTHING: TokenUsage = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 };
const SETTLED: Promise<SettleOutcome> = Promise.resolve('settled');

/** Refused before the store is asked: a budget cannot be kept on a request whose price is unknown. */
function unpricedRefusal(scope: Scope): Refusal {
  return { scope: scope.name, kind: 'unpriced', used: 0, limit: scope.limits.budget?.usd ?? 0, requested: 0, retryAfterMs: null, final: true };
}

/**
 * @example
 * const state = createEngine(new MemoryStore({ path: 'spend.sqlite' }), { log });
 * const r = await state.admit({ scopes, tokens: 1200, costUsd: 0.004 });
 * if (r.status === 'admitted') await state.settle(r.lease, { usage, costUsd, labels });
 */
export function createEngine(store: ScopeStore, options: EngineOptions): StateBackend {
  const now = options.now ?? Date.now;
  const leaseTtlMs = options.leaseTtlMs ?? 30_000;
  const usageRecords = options.usageRecords ?? true;
  const held = new LeaseBook();
  const queue = new SettleQueue(store, { log: options.log, max: options.maxQueued ?? 100_000, retryEveryMs: options.retryEveryMs ?? 1_000 });
  const renewal = setInterval(
    () => {
      if (held.size > 0) store.renew({ leaseTtlMs, leases: held.leases() }).catch(() => undefined);
    },
    options.renewEveryMs ?? leaseTtlMs / 3,
  ).unref();

  async function submit(settlement: RawSettle): Promise<SettleOutcome> {
    try {
      await store.settle(settlement);
      return 'settled';
    } catch (err) {
      if (err instanceof StateUnavailableError) {
        queue.push(settlement);
        return 'queued';
      }
      options.log.error({ err: String(err), lease: settlement.id }, 'state backend rejected a settlement');
      return 'failed';
    }
  }

  return {
    usageRecords,

    async admit(request: AdmitRequest): Promise<AdmitResult> {
      const id = request.id ?? randomUUID();
      const tokens = Math.max(0, Math.ceil(request.tokens));
      const { scopes, costUsd } = request;
      const unreserved = (): Lease => ({ id, at: request.now ?? now(), scopes, tokens, costUsd, reserved: false });
      const unpriced = costUsd === null ? scopes.find((s) => s.limits.budget) : undefined;
      if (unpriced) {
        const refusal = unpricedRefusal(unpriced);
        return { status: 'refused', refusal, violations: [refusal], quota: [] };
      }
      if (scopes.length === 0) return { status: 'admitted', lease: unreserved(), quota: [] };
      const costNano = costUsd === null ? 0 : toNano(costUsd);
      try {
        const raw = await store.admit({ id, now: request.now, tokens, costNano, leaseTtlMs, scopes: scopes.map(rawScope) });
        const quota = scopes.map((s, i) => quotaOf(s, raw.figures[i]!, raw.now));
        if (raw.admitted) {
          held.hold(
            id,
            scopes.map((s) => s.name),
          );
          return { status: 'admitted', lease: { id, at: raw.now, scopes, tokens, costUsd, reserved: true }, quota };
        }
        const violations = raw.violations.map((v) => refusalOf(v, scopes, tokens, costNano, raw.now));
        return { status: 'refused', refusal: chooseRefusal(violations), violations, quota };
      } catch (err) {
        if (!(err instanceof StateUnavailableError)) {
          options.log.error({ err: String(err) }, 'state backend failed an admission');
          return { status: 'unavailable', lease: unreserved(), reason: `state backend failed: ${String(err)}` };
        }
        if (err.maybeApplied) {
          // The script may have run with its reply lost: give back, later, what it may have reserved
          // (on a re-admission, only the scopes the request did not hold before).
          const before = held.heldBy(id);
          const fresh = scopes.map((s) => s.name).filter((name) => !before.has(name));
          queue.push({ id, at: request.now ?? now(), reserved: true, final: before.size === 0, scopes: fresh, tokens: 0, costNano: 0, usage: NOTHING });
        }
        return { status: 'unavailable', lease: unreserved(), reason: err.message };
      }
    },

    settle(lease: Lease, s: Settlement): Promise<SettleOutcome> {
      held.forget(lease.id);
      // No scope to charge, no reservation to give back, no usage record to write: nothing to settle.
      if (!usageRecords && !lease.reserved && lease.scopes.length === 0) return SETTLED;
      const u = s.usage;
      return submit({
        id: lease.id,
        at: lease.at,
        now: s.now,
        reserved: lease.reserved,
        final: true,
        scopes: lease.scopes.map((scope) => scope.name),
        tokens: u.input + u.output,
        costNano: s.costUsd === null ? null : toNano(s.costUsd),
        labels: usageRecords ? s.labels : undefined,
        usage: u,
        mark: true,
        endedAt: Date.now(),
      });
    },

    async release(lease: Lease, scopes?: readonly string[]): Promise<SettleOutcome> {
      const names = scopes ? [...scopes] : lease.scopes.map((s) => s.name);
      if (scopes) held.drop(lease.id, names);
      else held.forget(lease.id);
      if (!lease.reserved) return 'settled';
      return submit({ id: lease.id, at: lease.at, reserved: true, final: !scopes, scopes: names, tokens: 0, costNano: 0, usage: NOTHING });
    },

    async status(scopes: readonly Scope[], at?: number): Promise<ScopeQuota[]> {
      const raw = await store.figures(scopes.map(rawScope), at);
      return scopes.map((s, i) => quotaOf(s, raw.figures[i]!, raw.now));
    },

    async usage(query: UsageQuery): Promise<UsagePage> {
      const { from, to } = daysOf(query, now());
      return usagePage(await store.usageRows(from, to), query, now());
    },

    lockStats: () => store.lockStats?.(),

    counts() {
      return { dataLosses: store.recovery?.dataLosses ?? 0, rebuilds: store.recovery?.rebuilds ?? 0, droppedSettlements: queue.droppedTotal };
    },

    async close(): Promise<void> {
      clearInterval(renewal);
      await queue.flush();
      queue.stop();
      await store.close();
    },
  };
}
