/**
 * From a store's raw figures (integers, nano-USD, absolute times) to the public answer: the
 * quotas behind the x-ratelimit-* headers and the refusal to answer with. Pure, and shared by
 * both stores, so they cannot word the same state differently.
 */
import { periodEnd } from './periods.ts';
import { fromNano, toNano, WINDOW_MS, type RawFigures, type RawScope, type RawViolation } from './store.ts';
import type { Refusal, Scope, ScopeQuota } from './types.ts';

/**
 * Retry hint when only requests in flight stand in the way (a concurrency limit, a budget held
 * by reservations): when they end is not known in advance.
 */
export const CONTENDED_RETRY_MS = 1_000;

export function rawScope(scope: Scope): RawScope {
  const { rpm, tpm, concurrency, budget } = scope.limits;
  return { name: scope.name, rpm, tpm, concurrency, budgetNano: budget ? toNano(budget.usd) : undefined, period: budget?.period ?? 'total' };
}

/** Until the newest entry leaves the window, i.e. the window is back to its initial state. */
const resetMs = (newest: number | null, now: number): number => (newest === null ? 0 : Math.max(0, newest + WINDOW_MS - now));

export function quotaOf(scope: Scope, f: RawFigures, now: number): ScopeQuota {
  const { rpm, tpm, concurrency, budget } = scope.limits;
  const quota: ScopeQuota = { scope: scope.name, spentUsd: fromNano(f.spentNano) };
  if (rpm !== undefined) quota.requests = { limit: rpm, remaining: Math.max(0, rpm - f.requests), resetMs: resetMs(f.requestsNewest, now) };
  if (tpm !== undefined) quota.tokens = { limit: tpm, remaining: Math.max(0, tpm - f.tokens), resetMs: resetMs(f.tokensNewest, now) };
  if (concurrency !== undefined) quota.concurrency = { limit: concurrency, inFlight: f.inFlight };
  if (budget) {
    const left = toNano(budget.usd) - f.spentNano - f.reservedNano;
    quota.budget = {
      usd: budget.usd,
      period: budget.period,
      spentUsd: fromNano(f.spentNano),
      reservedUsd: fromNano(f.reservedNano),
      remainingUsd: fromNano(Math.max(0, left)),
      resetsAt: periodEnd(budget.period, now),
    };
  }
  return quota;
}

export function refusalOf(v: RawViolation, scopes: readonly Scope[], tokens: number, costNano: number, now: number): Refusal {
  const scope = scopes[v.scope]!;
  if (v.kind === 'budget') {
    const resetsAt = periodEnd(scope.limits.budget?.period ?? 'total', now);
    return {
      scope: scope.name,
      kind: 'budget',
      used: fromNano(v.used),
      limit: fromNano(v.limit),
      requested: fromNano(costNano),
      retryAfterMs: v.final ? null : CONTENDED_RETRY_MS,
      final: v.final,
      resetsAt,
    };
  }
  let retryAfterMs = v.retryAt === null ? null : Math.max(0, v.retryAt - now);
  if (retryAfterMs === null && !v.final) retryAfterMs = CONTENDED_RETRY_MS;
  return { scope: scope.name, kind: v.kind, used: v.used, limit: v.limit, requested: v.kind === 'tokens' ? tokens : 1, retryAfterMs, final: v.final };
}

const rank = (r: Refusal): number => (r.kind === 'budget' && r.final ? 3 : r.final ? 2 : 1);

/**
 * The one to answer with: a spent budget first (retrying will not help), then any other
 * refusal that retrying cannot cure, then the longest wait (the request fits only once every
 * limit has room).
 */
export function chooseRefusal(refusals: readonly Refusal[]): Refusal {
  let best = refusals[0]!;
  for (const r of refusals.slice(1)) {
    if (rank(r) > rank(best) || (rank(r) === rank(best) && (r.retryAfterMs ?? Infinity) > (best.retryAfterMs ?? Infinity))) best = r;
  }
  return best;
}
