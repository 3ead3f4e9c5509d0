/**
 * Where the pipeline meets the governance engine. Before the first try on a target, the key's,
 * its team's and the target's limits are checked and reserved in one atomic step; a target
 * whose own quota is full is skipped like a cooling one, a key or team over its limits gets
 * OpenAI's answer. When the response is complete (streams included) the reservation is settled
 * to the real usage and cost, or released when nothing was used.
 */
import type { GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import {
  costOf,
  keyScopeName,
  rateLimitHeaders,
  refusalAnswer,
  reservationCost,
  scopeOf,
  targetScopeName,
  teamScopeName,
  tokenEstimate,
  tokenUsageOf,
  type Lease,
  type Refusal,
  type Scope,
  type StateBackend,
  type TokenEstimate,
} from '../governance/index.ts';
import type { ModelRoute, RequestContext, RouteTarget } from '../plugin-api.ts';

/** A target skipped because its own quota is full (or it has no price for a key with a budget). */
export interface TargetSkip {
  reason: string;
  /** What the client gets if no other target serves. */
  error: GatewayError;
}

interface Hold {
  lease: Lease;
  /** The target whose scope the lease holds now (none after a skip). */
  target: RouteTarget | undefined;
  /** The reservation's estimate (none when nothing was counted). */
  estimate: TokenEstimate | undefined;
}

interface KeyScopes {
  scopes: Scope[];
}

/** `prompt + completion` estimated from what a stream delivered, for an abandoned stream the upstream never reported. */
const CHARS_PER_TOKEN = 4;

export class Governor {
  readonly #backend: StateBackend;
  readonly #closed: boolean;
  readonly #keys = new Map<string, KeyScopes>();
  readonly #targets = new Map<RouteTarget, Scope | undefined>();
  readonly #holds = new WeakMap<RequestContext, Hold>();

  constructor(backend: StateBackend, config: GatewayConfig, models: ReadonlyMap<string, ModelRoute>) {
    this.#backend = backend;
    this.#closed = config.state.onUnavailable === 'closed';
    for (const k of config.keys) {
      const team = k.team ? config.teams[k.team] : undefined;
      const scopes = [scopeOf(keyScopeName(k.name), k.limits, k.budget), k.team && team ? scopeOf(teamScopeName(k.team), team.limits, team.budget) : undefined].filter(
        (s): s is Scope => s !== undefined,
      );
      this.#keys.set(k.name, { scopes });
    }
    for (const [alias, route] of models) {
      route.targets.forEach((target, i) => this.#targets.set(target, scopeOf(targetScopeName(target.provider, target.model), config.models[alias].targets[i].limits)));
    }
  }

  /**
   * Admits the request on `target` (moving its reservation from the previous target, if any).
   * Returns undefined when admitted, a skip when the target cannot take it; throws the answer
   * when the key or team is over a limit.
   */
  async admit(ctx: RequestContext, target: RouteTarget): Promise<TargetSkip | undefined> {
    const held = this.#holds.get(ctx);
    if (held?.target === target) return undefined;
    const keyScopes = ctx.key ? (this.#keys.get(ctx.key.name)?.scopes ?? []) : [];
    const targetScope = this.#targets.get(target);
    const scopes = targetScope ? [...keyScopes, targetScope] : keyScopes;
    // Nothing to count against (a key without limits): no estimate to make, only usage to record.
    const estimate = scopes.length === 0 ? undefined : (held?.estimate ?? tokenEstimate(ctx.body));
    const previous = held?.target && this.#targets.get(held.target);
    if (previous) await this.#backend.release(held!.lease, [previous.name]);
    const result = await this.#backend.admit({ id: held?.lease.id, scopes, tokens: estimate?.total ?? 0, costUsd: estimate ? reservationCost(target.price, estimate) : 0 });
    if (result.status === 'admitted') {
      this.#holds.set(ctx, { lease: result.lease, target, estimate });
      Object.assign(ctx.responseHeaders, rateLimitHeaders(result.quota));
      return undefined;
    }
    if (result.status === 'unavailable') {
      if (this.#closed && scopes.length > 0) {
        throw new GatewayError('limits_unavailable', "The gateway cannot check this key's limits right now; try again shortly.", { headers: { 'retry-after': '1' } });
      }
      // Open: admitted without a reservation (the engine logged the outage once).
      this.#holds.set(ctx, { lease: result.lease, target, estimate });
      return undefined;
    }
    const headers = rateLimitHeaders(result.quota);
    const answer = errorOf(result.refusal, headers);
    if (targetScope && result.violations.every((v) => v.scope === targetScope.name || v.kind === 'unpriced')) {
      if (held) held.target = undefined;
      return { reason: describe(result.refusal), error: answer };
    }
    ctx.refusal = { scope: result.refusal.scope, kind: result.refusal.kind };
    Object.assign(ctx.responseHeaders, headers);
    throw answer;
  }

  /**
   * The request is over: settle to the real usage and cost (an abandoned stream without a usage
   * report is charged for its prompt estimate and what was delivered), or release it all.
   */
  async finish(ctx: RequestContext): Promise<void> {
    const hold = this.#holds.get(ctx);
    if (!hold) return;
    this.#holds.delete(ctx);
    let usage = ctx.usage ? tokenUsageOf(ctx.usage) : undefined;
    const reached = ctx.attempts.some((a) => a.outcome !== 'skipped');
    if (!usage && reached && ctx.delivered) {
      usage = { input: (hold.estimate ?? tokenEstimate(ctx.body)).prompt, cachedInput: 0, cacheWrite: 0, output: Math.ceil(ctx.delivered.chars / CHARS_PER_TOKEN) };
      ctx.costUsd = costOf(ctx.attempt?.target.price, usage);
    }
    if (!usage) {
      await this.#backend.release(hold.lease);
      return;
    }
    const model = ctx.route?.name ?? String(ctx.body?.model ?? '');
    await this.#backend.settle(hold.lease, { usage, costUsd: ctx.costUsd ?? null, labels: { key: ctx.key?.name ?? '-', team: ctx.key?.team, model } });
  }
}

function errorOf(refusal: Refusal, rateHeaders: Record<string, string>): GatewayError {
  const a = refusalAnswer(refusal);
  return new GatewayError(a.code, a.message, { type: a.type, headers: { ...rateHeaders, ...a.headers } });
}

function describe(r: Refusal): string {
  return r.kind === 'unpriced' ? 'no price is known for this target and the key has a budget' : `${r.scope} is at its ${r.kind} limit (${r.used}/${r.limit})`;
}
