/**
 * Gauges read from the state backend when Prometheus scrapes: each key's and team's budget
 * (its limit and what was spent in the current period) and whether the backend answered at
 * all. One `status` call per scrape (with Redis, one round trip, even with no budget set, so it
 * doubles as the health probe), bounded by a timeout: a store that hangs never hangs a scrape.
 */
import { Gauge, type Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types.ts';
import { keyScopeName, scopeOf, teamScopeName, type Scope, type ScopeQuota, type StateBackend } from '../governance/index.ts';

export interface StateSource {
  /** The config serving now (undefined until the gateway has started). */
  config(): GatewayConfig | undefined;
  /** The limits/budgets/spend backend (undefined when there is none). */
  state(): StateBackend | undefined;
}

/** A scope with a budget, with its label values (gateway.yaml names). */
interface BudgetScope {
  scope: Scope;
  labels: { scope: 'key' | 'team'; name: string; period: string };
}

interface Reading {
  up: boolean;
  budgets: Array<{ labels: BudgetScope['labels']; limitUsd: number; spentUsd: number }>;
}

export const STATE_PROBE_TIMEOUT_MS = 2_000;

export function registerStateGauges(registry: Registry, source: StateSource, timeoutMs = STATE_PROBE_TIMEOUT_MS): void {
  const budgetsOf = budgetScopes();
  // The three gauges are collected together when scraped: they share one reading.
  let reading: Promise<Reading | undefined> | undefined;
  const read = (): Promise<Reading | undefined> => {
    reading ??= readState(source, budgetsOf, timeoutMs).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const registers = [registry];
  new Gauge({
    name: 'switchyard_state_backend_up',
    help: 'Whether the state backend (limits, budgets, spend) answered the last scrape: 1 yes, 0 no (down, or slower than 2 s).',
    registers,
    // Cluster workers reach one backend: any worker that cannot reach it is what an operator needs to see.
    aggregator: 'min',
    async collect() {
      this.reset();
      const r = await read();
      if (r) this.set(r.up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_budget_limit_usd',
    help: "A key's or team's budget (gateway.yaml `budget.usd`) for its period.",
    labelNames: ['scope', 'name', 'period'],
    registers,
    // Every worker reads the same shared figures: one of them, not their sum.
    aggregator: 'max',
    async collect() {
      this.reset();
      for (const b of (await read())?.budgets ?? []) this.set(b.labels, b.limitUsd);
    },
  });
  new Gauge({
    name: 'switchyard_budget_spent_usd',
    help: "USD a key or team has spent in its budget's current period (requests in flight not included).",
    labelNames: ['scope', 'name', 'period'],
    registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      for (const b of (await read())?.budgets ?? []) this.set(b.labels, b.spentUsd);
    },
  });
}

async function readState(source: StateSource, budgetsOf: (config: GatewayConfig) => BudgetScope[], timeoutMs: number): Promise<Reading | undefined> {
  const state = source.state();
  const config = source.config();
  if (!state || !config) return undefined;
  const budgets = budgetsOf(config);
  let quotas: ScopeQuota[];
  try {
    quotas = await withTimeout(state.status(budgets.map((b) => b.scope)), timeoutMs);
  } catch {
    // StateUnavailableError or a timeout: the figures are unknown, so none is shown.
    return { up: false, budgets: [] };
  }
  return {
    up: true,
    budgets: budgets.flatMap((b, i) => {
      const budget = quotas[i]?.budget;
      return budget ? [{ labels: b.labels, limitUsd: budget.usd, spentUsd: budget.spentUsd }] : [];
    }),
  };
}

/** The budgeted scopes of a config, made once per config generation. */
function budgetScopes(): (config: GatewayConfig) => BudgetScope[] {
  const cache = new WeakMap<GatewayConfig, BudgetScope[]>();
  return (config) => {
    let scopes = cache.get(config);
    if (!scopes) {
      scopes = [];
      for (const k of config.keys) if (k.budget) scopes.push(budgetScope('key', k.name, keyScopeName(k.name), k.budget));
      for (const [name, team] of Object.entries(config.teams)) if (team.budget) scopes.push(budgetScope('team', name, teamScopeName(name), team.budget));
      cache.set(config, scopes);
    }
    return scopes;
  };
}

function budgetScope(kind: 'key' | 'team', name: string, scopeName: string, budget: NonNullable<GatewayConfig['keys'][number]['budget']>): BudgetScope {
  return { scope: scopeOf(scopeName, undefined, budget)!, labels: Object.freeze({ scope: kind, name, period: budget.period }) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
