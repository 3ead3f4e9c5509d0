/**
 * The admin API's answers, built from gateway.yaml and the state backend's figures: the costs
 * page (OpenAI's organization costs API shape) and the keys' and teams' limits, what is left of
 * them now, and their budgets. Snake case and unix seconds, as OpenAI's admin APIs write them.
 * A key's secret and hash never appear.
 */
import type { BudgetConfig, GatewayConfig, RateLimits } from '../config/types.ts';
import { keyScopeName, scopeOf, teamScopeName, type Scope, type ScopeQuota, type StateBackend, type UsagePage } from '../governance/index.ts';

export interface CostsResult {
  object: 'gateway.costs.result';
  /** USD of the priced requests; null when none of them had a price (unknown is never 0). */
  amount: { value: number; currency: 'usd' } | null;
  key: string | null;
  team: string | null;
  model: string | null;
  num_model_requests: number;
  /** Requests whose cost is unknown, not in `amount`. */
  unpriced_requests: number;
}

export interface CostsPage {
  object: 'page';
  data: Array<{ object: 'bucket'; start_time: number; end_time: number; results: CostsResult[] }>;
  has_more: false;
  next_page: null;
}

/** The usage page narrowed to money, as GET /v1/organization/costs answers. */
export function costsPage(usage: UsagePage): CostsPage {
  return {
    ...usage,
    data: usage.data.map((bucket) => ({
      ...bucket,
      results: bucket.results.map((r) => ({
        object: 'gateway.costs.result',
        amount: r.amount,
        key: r.key,
        team: r.team,
        model: r.model,
        num_model_requests: r.num_model_requests,
        unpriced_requests: r.unpriced_requests,
      })),
    })),
  };
}

/** Limits and what is left of them now; a dimension the scope does not limit is null. */
export interface QuotaReport {
  limits: { rpm: number | null; tpm: number | null; concurrency: number | null };
  requests: { limit: number; remaining: number; reset_ms: number } | null;
  tokens: { limit: number; remaining: number; reset_ms: number } | null;
  concurrency: { limit: number; in_flight: number } | null;
  budget: { usd: number; period: BudgetConfig['period']; spent_usd: number; reserved_usd: number; remaining_usd: number; resets_at: number | null } | null;
  /**
   * USD spent in the budget's period (`spent_period`), or in total without a budget. Null when
   * the key or team has neither limits nor a budget: the gateway keeps no counters for it (its
   * requests are still in /admin/v1/usage and /admin/v1/costs).
   */
  spent_usd: number | null;
  spent_period: BudgetConfig['period'] | null;
}

export interface KeyReport extends QuotaReport {
  object: 'gateway.key';
  name: string;
  team: string | null;
  models: string[];
  metadata: Record<string, string>;
  /** Unix seconds; null when the key does not expire. */
  expires_at: number | null;
  expired: boolean;
}

export interface TeamReport extends QuotaReport {
  object: 'gateway.team';
  name: string;
  /** The keys that count against this team. */
  keys: string[];
  metadata: Record<string, string>;
}

/**
 * The scopes the pipeline counts (the same names and limits as the Governor's), one per key or
 * team; undefined for one with neither limits nor a budget, which nothing counts.
 */
export function keyScopes(config: GatewayConfig): Array<Scope | undefined> {
  return config.keys.map((k) => scopeOf(keyScopeName(k.name), k.limits, k.budget));
}

export function teamScopes(config: GatewayConfig): Array<Scope | undefined> {
  return Object.entries(config.teams).map(([name, t]) => scopeOf(teamScopeName(name), t.limits, t.budget));
}

/** Figures for the counted scopes, in the order given (undefined for the uncounted ones), in one call. */
export async function quotasOf(state: StateBackend, scopes: ReadonlyArray<Scope | undefined>): Promise<Array<ScopeQuota | undefined>> {
  const counted = scopes.filter((s): s is Scope => s !== undefined);
  const figures = counted.length > 0 ? await state.status(counted) : [];
  let next = 0;
  return scopes.map((s) => (s ? figures[next++] : undefined));
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

function quotaReport(limits: RateLimits | undefined, q: ScopeQuota | undefined): QuotaReport {
  return {
    limits: { rpm: limits?.rpm ?? null, tpm: limits?.tpm ?? null, concurrency: limits?.concurrency ?? null },
    requests: q?.requests ? { limit: q.requests.limit, remaining: q.requests.remaining, reset_ms: q.requests.resetMs } : null,
    tokens: q?.tokens ? { limit: q.tokens.limit, remaining: q.tokens.remaining, reset_ms: q.tokens.resetMs } : null,
    concurrency: q?.concurrency ? { limit: q.concurrency.limit, in_flight: q.concurrency.inFlight } : null,
    budget: q?.budget
      ? {
          usd: q.budget.usd,
          period: q.budget.period,
          spent_usd: q.budget.spentUsd,
          reserved_usd: q.budget.reservedUsd,
          remaining_usd: q.budget.remainingUsd,
          resets_at: q.budget.resetsAt === null ? null : seconds(q.budget.resetsAt),
        }
      : null,
    spent_usd: q ? q.spentUsd : null,
    spent_period: q ? (q.budget?.period ?? 'total') : null,
  };
}

/** `quotas` in the order of keyScopes(config). */
export function keyReports(config: GatewayConfig, quotas: ReadonlyArray<ScopeQuota | undefined>, nowMs: number): KeyReport[] {
  return config.keys.map((k, i) => {
    const expiresAt = k.expiresAt === undefined ? null : Date.parse(k.expiresAt);
    return {
      object: 'gateway.key',
      name: k.name,
      team: k.team ?? null,
      models: [...k.models],
      metadata: { ...k.metadata },
      expires_at: expiresAt === null ? null : seconds(expiresAt),
      expired: expiresAt !== null && nowMs >= expiresAt,
      ...quotaReport(k.limits, quotas[i]),
    };
  });
}

/**
 * Keys the gateway keeps no counters for (no limits, no budget) get their spend from the
 * request ledger: every row kept, so `spent_period` is `total`. Counted keys keep their counters' figure.
 */
export function withLedgerSpend(reports: KeyReport[], spendUsd: ReadonlyMap<string, number>): KeyReport[] {
  return reports.map((r) => (r.spent_usd === null ? { ...r, spent_usd: spendUsd.get(r.name) ?? 0, spent_period: 'total' } : r));
}

/** `quotas` in the order of teamScopes(config). */
export function teamReports(config: GatewayConfig, quotas: ReadonlyArray<ScopeQuota | undefined>): TeamReport[] {
  return Object.entries(config.teams).map(([name, t], i) => ({
    object: 'gateway.team',
    name,
    keys: config.keys.filter((k) => k.team === name).map((k) => k.name),
    metadata: { ...t.metadata },
    ...quotaReport(t.limits, quotas[i]),
  }));
}
