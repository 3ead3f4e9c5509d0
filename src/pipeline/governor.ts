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
  type Refusal,
  type Scope,
  type StateBackend,
  type TokenUsage,
} from '../governance/index.ts';
import type { ModelRoute, RouteTarget } from '../plugin-api.ts';
import type { Exchange, Limits, TargetSkip } from './exchange.ts';
import { deltaLength } from '../protocol/delivered.ts';

interface KeyScopes {
  scopes: Scope[];
}

/** `prompt + completion` estimated from what a stream delivered, for an abandoned stream the upstream never reported. */
const CHARS_PER_TOKEN = 4;

export class Governor implements Limits {
  readonly #backend: StateBackend;
  readonly #closed: boolean;
  readonly #keys = new Map<string, KeyScopes>();
  readonly #targets = new Map<RouteTarget, Scope | undefined>();

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
  async admit(x: Exchange, target: RouteTarget): Promise<TargetSkip | undefined> {
    const held = x.hold;
    if (held?.target === target) return undefined;
    const keyScopes = x.key ? (this.#keys.get(x.key.name)?.scopes ?? []) : [];
    const targetScope = this.#targets.get(target);
    const scopes = targetScope ? [...keyScopes, targetScope] : keyScopes;
    // Nothing to count against, nothing held, usage booked by the ledger: no lease to take or settle.
    if (scopes.length === 0 && !held && this.#backend.usageRecords === false) return undefined;
    // Nothing to count against (a key without limits), or a token count (a request, no tokens): no estimate to make.
    const estimate = scopes.length === 0 || x.operation === 'count_tokens' ? undefined : (held?.estimate ?? tokenEstimate(x.body));
    const previous = held?.target && this.#targets.get(held.target);
    if (previous) await this.#backend.release(held!.lease, [previous.name]);
    const result = await this.#backend.admit({ id: held?.lease.id, scopes, tokens: estimate?.total ?? 0, costUsd: estimate ? reservationCost(target.price, estimate) : 0 });
    if (result.status === 'admitted') {
      x.hold = { lease: result.lease, target, estimate };
      // A key with no limits (no quota) gets no rate-limit headers: nothing to build.
      if (result.quota.length > 0) Object.assign(x.responseHeaders, rateLimitHeaders(result.quota));
      return undefined;
    }
    if (result.status === 'unavailable') {
      if (this.#closed && scopes.length > 0) {
        throw new GatewayError('limits_unavailable', "The gateway cannot check this key's limits right now; try again shortly.", { headers: { 'retry-after': '1' } });
      }
      // Open: admitted without a reservation (the engine logged the outage once).
      x.hold = { lease: result.lease, target, estimate };
      return undefined;
    }
    const headers = rateLimitHeaders(result.quota);
    const answer = errorOf(result.refusal, headers);
    // The target's own quota, or its missing price (a key with a budget cannot use it): another target may serve.
    if (result.violations.every((v) => (targetScope !== undefined && v.scope === targetScope.name) || v.kind === 'unpriced')) {
      if (held) held.target = undefined;
      return { reason: describe(result.refusal), error: answer };
    }
    x.refusal = { scope: result.refusal.scope, kind: result.refusal.kind };
    Object.assign(x.responseHeaders, headers);
    throw answer;
  }

  async admitFree(x: Exchange): Promise<void> {
    const scopes = x.key ? (this.#keys.get(x.key.name)?.scopes ?? []) : [];
    if (scopes.length === 0) return;
    const result = await this.#backend.admit({ scopes, tokens: 0, costUsd: 0 });
    // Nothing to settle but the request itself: its lease is released at the end (no usage).
    if (result.status !== 'refused') {
      x.hold = { lease: result.lease, target: undefined, estimate: undefined };
      if (result.status === 'admitted' && result.quota.length > 0) Object.assign(x.responseHeaders, rateLimitHeaders(result.quota));
      return;
    }
    const headers = rateLimitHeaders(result.quota);
    x.refusal = { scope: result.refusal.scope, kind: result.refusal.kind };
    Object.assign(x.responseHeaders, headers);
    throw errorOf(result.refusal, headers);
  }

  /**
   * The request is over: settle to the real usage and cost (an abandoned stream without a usage
   * report is charged for its prompt estimate and what was delivered), or release it all.
   */
  async finish(x: Exchange): Promise<void> {
    const hold = x.hold;
    const reached = x.triedCount > 0;
    // No lease and no upstream reached (a cache hit, a refusal): nothing to charge or settle.
    if (!hold && !reached) return;
    x.hold = undefined;
    // An answer without a usage report (an abandoned stream; older vLLM, Ollama or LM Studio builds
    // and some proxies send none) is charged its prompt estimate and what it delivered: never free.
    // A request admitted without a lease (no limits) gets the same estimate, for the ledger's row.
    const delivered = reached && !x.usage ? deliveredChars(x) : undefined;
    let estimated: TokenUsage | undefined;
    if (delivered !== undefined) {
      estimated = { input: (hold?.estimate ?? tokenEstimate(x.body)).prompt, cachedInput: 0, cacheWrite: 0, output: Math.ceil(delivered / CHARS_PER_TOKEN) };
      x.costUsd = costOf(x.attempt?.target.price, estimated);
      x.estimatedUsage = estimated;
    }
    if (!hold) return;
    const usage = x.usage ? tokenUsageOf(x.usage) : estimated;
    if (!usage) {
      await this.#backend.release(hold.lease);
      return;
    }
    const model = x.route?.name ?? String(x.body?.model ?? '');
    await this.#backend.settle(hold.lease, { usage, costUsd: x.costUsd ?? null, labels: { key: x.key?.name ?? '-', team: x.key?.team, model } });
  }
}

/** Characters a request without a usage report delivered: a stream's, counted as written, or a completion's; undefined when nothing was answered. */
function deliveredChars(x: Exchange): number | undefined {
  if (x.delivered) return x.delivered.chars;
  const response = x.attempt?.response;
  if (response?.kind !== 'completion') return undefined;
  let chars = 0;
  for (const choice of response.body.choices) chars += deltaLength(choice.message);
  return chars;
}

function errorOf(refusal: Refusal, rateHeaders: Record<string, string>): GatewayError {
  const a = refusalAnswer(refusal);
  return new GatewayError(a.code, a.message, { type: a.type, headers: { ...rateHeaders, ...a.headers } });
}

function describe(r: Refusal): string {
  return r.kind === 'unpriced' ? 'no price is known for this target and the key has a budget' : `${r.scope} is at its ${r.kind} limit (${r.used}/${r.limit})`;
}
