/**
 * The JSON the console page reads (GET /admin/v1/console/*): each view is built from what the
 * gateway already keeps — the serving generation's routes and target state, the recent-activity
 * observer, the state backend's quotas — and carries nothing of a prompt or a completion.
 */
import { readFileSync } from 'node:fs';
import { keyReports, keyScopes, quotasOf, teamReports, teamScopes, withLedgerSpend, type KeyReport, type TeamReport } from '../admin/report.ts';
import type { StateBackend } from '../governance/index.ts';
import type { RequestLedger } from '../ledger/index.ts';
import type { Runtime } from '../runtime/build.ts';
import { BUCKET_MS, WINDOW_MS, targetKey, type BucketView, type RecentActivity, type TargetActivity } from './activity.ts';
import type { ClusterConsole, ConsoleScope, CoolingTarget, LastReloadView } from './cluster-view.ts';

/** What the console needs from the gateway beyond the route dependencies. */
export interface ConsoleSource {
  activity: RecentActivity;
  /** The environment `${VAR}` references resolve in (the gateway's own), for the validate box. */
  env: NodeJS.ProcessEnv;
  /** The clock the target breakers run on (epoch ms). */
  now(): number;
}

/** Rates over the last minute: what the big numbers show. */
const RECENT_MS = 60_000;

export interface Overview {
  version: string;
  uptime_s: number;
  generation: number;
  in_flight: number;
  now: {
    requests_per_s: number;
    error_rate: number | null;
    p50_ms: number | null;
    p99_ms: number | null;
    ttft_p50_ms: number | null;
    ttft_p99_ms: number | null;
    tokens_per_s: number;
    spend_per_hour_usd: number;
  };
  last_15m: { requests: number; errors: number; tokens: number; cost_usd: number };
  bucket_ms: number;
  window_ms: number;
  /** Oldest first. */
  series: BucketView[];
  /** The processes these figures cover (every cluster worker that answered). */
  scope: ConsoleScope;
  cooling: CoolingTarget[];
  last_reload: LastReloadView | null;
}

/** Every figure over all the processes in `view` (a lone process, or every worker of a cluster). */
export function overview(runtime: Runtime, view: ClusterConsole, nowMs = Date.now()): Overview {
  const activity = view.activity;
  const recent = activity.totals(nowMs, RECENT_MS);
  const all = activity.totals(nowMs);
  // The current bucket is partial: rates are over the time actually covered.
  const spanS = Math.min(RECENT_MS, Math.max(1000, nowMs - activity.startedAt)) / 1000;
  return {
    version: packageVersion(),
    uptime_s: view.uptime(),
    generation: runtime.generation,
    in_flight: activity.inFlight,
    now: {
      requests_per_s: round(recent.requests / spanS, 3),
      error_rate: recent.requests === 0 ? null : round(recent.errors / recent.requests, 4),
      p50_ms: recent.p50Ms,
      p99_ms: recent.p99Ms,
      ttft_p50_ms: recent.ttftP50Ms,
      ttft_p99_ms: recent.ttftP99Ms,
      tokens_per_s: round(recent.tokens / spanS, 2),
      spend_per_hour_usd: round((recent.costUsd / spanS) * 3600, 6),
    },
    last_15m: { requests: all.requests, errors: all.errors, tokens: all.tokens, cost_usd: round(all.costUsd, 6) },
    bucket_ms: BUCKET_MS,
    window_ms: WINDOW_MS,
    series: activity.series(nowMs),
    scope: view.scope(),
    cooling: view.cooling(runtime),
    last_reload: view.lastReload(),
  };
}

export interface TargetView extends TargetActivity {
  provider: string;
  model: string;
  /** `unavailable` (its provider cannot serve), `cooling` (breaker open), `probing` (one trial request), `healthy`. */
  state: 'healthy' | 'cooling' | 'probing' | 'unavailable';
  /** Epoch ms when a cooling target may take traffic again. */
  cooling_until: number | null;
  unavailable: string | null;
  in_flight: number;
  latency_ms: number | null;
}

/** @param breakerNow the breakers' clock now (the gateway's Clock; Date.now() unless a test injects one). */
export function targets(runtime: Runtime, activity: RecentActivity, breakerNow: number, nowMs = Date.now()): Array<{ alias: string; strategy: string; targets: TargetView[] }> {
  return [...runtime.models.values()].map((route) => ({
    alias: route.name,
    strategy: route.strategy,
    targets: route.targets.map((t): TargetView => {
      const cooling = t.state.coolingFor(breakerNow);
      // TargetState's breaker stays open after the cooldown until a probe succeeds (half-open).
      const breaker = t.state as { readonly open?: boolean; readonly probing?: boolean };
      const state = t.unavailable ? 'unavailable' : cooling > 0 ? 'cooling' : breaker.probing || breaker.open ? 'probing' : 'healthy';
      return {
        provider: t.provider,
        model: t.model,
        state,
        cooling_until: state === 'cooling' ? nowMs + cooling : null,
        unavailable: t.unavailable ? runtime.redact(t.unavailable) : null,
        in_flight: t.state.inFlight,
        latency_ms: t.state.latencyMs === undefined ? null : Math.round(t.state.latencyMs),
        ...activity.target(targetKey(route.name, t.provider, t.model), nowMs),
      };
    }),
  }));
}

export interface KeyView extends KeyReport {
  /** Epoch ms of this key's last request seen by this instance; null when none since start. */
  last_request_at: number | null;
}

/** Every key with its limits, what is used now and its spend, the biggest spender first. */
export async function keys(runtime: Runtime, state: StateBackend, activity: RecentActivity, ledger?: RequestLedger, nowMs = Date.now()): Promise<KeyView[]> {
  const counted = keyReports(runtime.config, await quotasOf(state, keyScopes(runtime.config)), nowMs);
  // Keys without limits have no counters: their spend comes from the ledger, when one is kept.
  const reports = ledger ? withLedgerSpend(counted, await ledger.spendByKey()) : counted;
  return reports.map((r) => ({ ...r, last_request_at: activity.lastRequestOf(r.name) })).sort((a, b) => (b.spent_usd ?? -1) - (a.spent_usd ?? -1) || a.name.localeCompare(b.name));
}

export interface TeamView extends TeamReport {
  /** The team's keys' last request (epoch ms) seen by the console; null when none since start. */
  last_request_at: number | null;
}

/** Every team with its limits, what is used now, its budget and spend, its keys; the biggest spender first. */
export async function teams(runtime: Runtime, state: StateBackend, activity: RecentActivity): Promise<TeamView[]> {
  const reports = teamReports(runtime.config, await quotasOf(state, teamScopes(runtime.config)));
  return reports
    .map((r) => {
      const last = Math.max(0, ...r.keys.map((k) => activity.lastRequestOf(k) ?? 0));
      return { ...r, last_request_at: last > 0 ? last : null };
    })
    .sort((a, b) => (b.spent_usd ?? -1) - (a.spent_usd ?? -1) || a.name.localeCompare(b.name));
}

const round = (n: number, digits: number): number => Number(n.toFixed(digits));

let version: string | undefined;
function packageVersion(): string {
  if (version === undefined) {
    try {
      version = JSON.parse(readFileSync(new URL(import.meta.resolve('switchyard-gateway/package.json')), 'utf8')).version as string;
    } catch {
      version = 'unknown';
    }
  }
  return version;
}
