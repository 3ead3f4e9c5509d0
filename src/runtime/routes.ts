/**
 * Model names → aliases: an exact alias first, then the pattern aliases (a name with `*` or `?`,
 * e.g. `claude-*`, `gpt-*-codex`, or `*` as a default) in file order, so that a client release's
 * new default model name finds its alias without an edit.
 */
export function modelResolver(models: ReadonlyMap<string, ModelRoute>): (name: string) => ModelRoute | undefined {
  const patterns = [...models.values()].filter((r) => /[*?]/.test(r.name)).map((route) => ({ glob: compileGlob(route.name), route }));
  if (patterns.length === 0) return (name) => models.get(name);
  return (name) => models.get(name) ?? patterns.find((p) => p.glob.test(name))?.route;
}

/**
 * A generation's model routes: each alias with its targets, policies resolved once (alias
 * settings over defaults, target settings over the alias's) and live state carried over from the
 * previous generation where the target did not change.
 */
import type { GatewayConfig, RetryConfig } from '../config/types.ts';
import type { ModelRoute, ProviderCapabilities, ProviderInstance, RetryPolicy, RouteTarget } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { compileGlob } from '../config/glob.ts';
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS } from '../routing/policy.ts';
import { TargetState } from '../routing/target-state.ts';
import type { ProviderHandle } from './providers.ts';
import { priceOf, type PriceTable } from '../governance/index.ts';

/** The generation being replaced, as far as routes care. */
export interface PreviousRoutes {
  config: GatewayConfig;
  models: ReadonlyMap<string, ModelRoute>;
  providers: ReadonlyMap<string, ProviderHandle>;
}

/**
 * @param prices the price table (built in, extended by `state.prices`); a target's own `price:` wins.
 * @param unpriced called for each target whose price nobody knows (its cost is then null).
 */
export function buildRoutes(
  config: GatewayConfig,
  providers: ReadonlyMap<string, ProviderHandle>,
  previous: PreviousRoutes | undefined,
  prices: PriceTable,
  unpriced: (alias: string, index: number) => void,
): Map<string, ModelRoute> {
  const models = new Map<string, ModelRoute>();
  for (const [alias, m] of Object.entries(config.models)) {
    const aliasRetry = retryPolicy(DEFAULT_RETRY, m.retry);
    const aliasTimeouts = { ...DEFAULT_TIMEOUTS, ...m.timeout };
    const targets = m.targets.map((t, i): RouteTarget => {
      const handle = providers.get(t.provider)!;
      const price = priceOf(prices, { plugin: handle.plugin.id, model: t.model, price: t.price }) ?? undefined;
      if (!price) unpriced(alias, i);
      return Object.freeze({
        provider: t.provider,
        model: t.model,
        unavailable: handle.unavailable,
        dropUnsupportedParams: m.dropUnsupportedParams ?? config.providers[t.provider].dropUnsupportedParams ?? false,
        instance: handle.instance ?? unavailableInstance,
        capabilities: targetCapabilities(capabilitiesOf(handle, t.model), t.reasoning),
        weight: t.weight,
        price,
        retry: retryPolicy(aliasRetry, t.retry),
        timeouts: Object.freeze({ ...aliasTimeouts, ...t.timeout }),
        state: carriedState(previous, alias, t.provider, t.model, handle, m.cooldown) ?? new TargetState(m.cooldown),
      });
    });
    const fallbacks = { context_window: m.fallbacks?.contextWindow, content_policy: m.fallbacks?.contentPolicy };
    const route: ModelRoute = { name: alias, strategy: m.strategy, retry: aliasRetry, targets: Object.freeze(targets), fallbacks };
    if (m.strict) route.strict = true;
    models.set(alias, Object.freeze(route));
  }
  return models;
}

/** The provider's declaration, with what the target's own config says of its model (`reasoning: false`): made once per generation. */
function targetCapabilities(declared: ProviderCapabilities | undefined, reasoning: boolean | undefined): ProviderCapabilities {
  if (reasoning === undefined) return declared ?? {};
  return Object.freeze({ ...declared, reasoning });
}

/**
 * A target that survives a reload unchanged (same alias, provider instance, model and cooldown
 * policy) keeps its live state, so a reload neither forgets a cooldown nor the latency average.
 */
function carriedState(previous: PreviousRoutes | undefined, alias: string, provider: string, model: string, handle: ProviderHandle, cooldown: unknown): RouteTarget['state'] | undefined {
  const before = previous?.models.get(alias);
  if (!before || JSON.stringify(previous!.config.models[alias]?.cooldown) !== JSON.stringify(cooldown)) return undefined;
  const target = before.targets.find((t) => t.provider === provider && t.model === model);
  return target && previous!.providers.get(provider) === handle ? target.state : undefined;
}

/** `base` overridden field by field by a gateway.yaml `retry:` block. */
export function retryPolicy(base: RetryPolicy, r: RetryConfig | undefined): RetryPolicy {
  if (!r) return base;
  return Object.freeze({
    attempts: r.attempts ?? base.attempts,
    backoff: { ...base.backoff, ...r.backoff },
    retryOn: r.retryOn ?? base.retryOn,
    maxRetryAfterMs: r.maxRetryAfterMs ?? base.maxRetryAfterMs,
    budgetMs: r.budgetMs ?? base.budgetMs,
  });
}

/** Stands in for a provider that could not be configured; attempts refuse before calling it. */
const unavailableInstance: ProviderInstance = {
  send: () => Promise.reject(new GatewayError('provider_unavailable', 'provider is unavailable')),
  toCompletion: () => {
    throw new GatewayError('provider_unavailable', 'provider is unavailable');
  },
  createStreamTranslator: () => {
    throw new GatewayError('provider_unavailable', 'provider is unavailable');
  },
};

/** The plugin's declaration, with what its instance says its options allow for this model and the native protocols they allow. */
function capabilitiesOf(handle: ProviderHandle, model: string): ProviderCapabilities {
  const plugin = handle.plugin.capabilities ?? {};
  const own = handle.instance?.capabilitiesFor?.(model);
  const declared = own ? { ...plugin, ...own } : plugin;
  const speaks = handle.instance?.nativeProtocols;
  return speaks || own ? Object.freeze({ ...declared, ...(speaks && { nativeProtocols: speaks }) }) : declared;
}
