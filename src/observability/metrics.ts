/**
 * Prometheus metrics (prom-client): the GenAI conventions' histograms in their Prometheus form,
 * the gateway's own counters, and Node's process metrics. One registry per gateway, fed by an
 * observer that lives as long as the gateway, so a reload never sends a counter backwards.
 * Every label value goes through ./labels.ts (gateway.yaml names and fixed enums only).
 *
 * Per request the work is a handful of map look-ups and additions, once, when it ends; the
 * gauges that describe state (target breakers, config generation) are read only when scraped.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { GatewayConfig } from '../config/types.ts';
import type { StateBackend } from '../governance/index.ts';
import type { AttemptRecord, Clock, KeyIdentity, ModelRoute, Operation, RouteTarget, RuntimeView } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import { BufferedCounter } from './counter-buffer.ts';
import { NO_LABELS, SeriesHistogram } from './series-histogram.ts';
import { BUCKETS } from './semconv.ts';
import { OTHER, codeLabel, droppedFieldLabel, keyLabel, modelLabel, NONE, providerLabel, refusalLabels, statusLabel, targetLabel, teamLabel } from './labels.ts';
import { registerIdentityMetrics, type ProviderHandles } from './identity-metrics.ts';
import { registerStateGauges } from './state-gauges.ts';
import { overheadMs } from './timing.ts';
import {
  type AttemptLabels,
  attemptOutcome,
  type AttemptOutcome,
  failedLabels,
  GENAI_LABELS,
  genAiLabelSets,
  type GenAiLabelSets,
  type KeyLabels,
  modelLabelSets,
  requestLabels,
} from './label-sets.ts';

/** `switchyard_target_state`: 0 healthy, 1 cooling down, 2 half-open (the next request, or the one running, is the probe). */
export const TARGET_STATE = { healthy: 0, cooling: 1, probing: 2 } as const;

/** Node's process metrics are the process's, not a gateway's: one registry for all gateways in it. */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    // Gauges whose `_total` suffix promtool rejects (only counters may have it); their
    // per-type breakdowns (nodejs_active_handles{type} ...) carry the same numbers.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

export interface MetricsSource {
  /** The generation serving now (undefined until the gateway has started); its providers report their credentials. */
  runtime(): (RuntimeView & { readonly config?: GatewayConfig; readonly providers?: ProviderHandles }) | undefined;
  /** The limits/budgets/spend backend, read when scraped (budgets, whether it answers); none: those gauges are absent. */
  state?(): StateBackend | undefined;
  /** The clock the target breakers run on. */
  clock: Clock;
}

/** What the guardrails stage annotates (src/guardrails/policy.ts `Verdict`), as far as metrics read it. */
interface GuardrailVerdict {
  rule: string;
  action: string;
  site: string;
}

export class GatewayMetrics implements GatewayObserver {
  readonly registry = new Registry();
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly #source: MetricsSource;
  /** GenAI label sets per target and alias: built once, shared by every request routed there. */
  readonly #genAiLabels = new WeakMap<RouteTarget, Map<ModelRoute, { chat?: GenAiLabelSets; embeddings?: GenAiLabelSets }>>();

  // Histograms whose series are bound to label objects made once (./series-histogram.ts).
  readonly #operationDuration: SeriesHistogram<(typeof GENAI_LABELS)[number] | 'error_type'>;
  readonly #tokenUsage: SeriesHistogram<(typeof GENAI_LABELS)[number] | 'gen_ai_token_type'>;
  readonly #timeToFirstToken: SeriesHistogram<(typeof GENAI_LABELS)[number]>;
  // The three counters every request adds to are buffered (./counter-buffer.ts).
  readonly #requests: BufferedCounter<'key' | 'team' | 'model' | 'provider' | 'status' | 'code'>;
  readonly #attempts: BufferedCounter<'provider' | 'target' | 'outcome'>;
  /** Attempt label sets by provider, model and outcome (gateway.yaml names, a fixed set): made once. */
  readonly #attemptLabels = new Map<string, Map<string, Partial<Record<AttemptOutcome, AttemptLabels>>>>();
  /** Read by the in-flight gauge when scraped. */
  #inFlight = 0;
  readonly #cost: BufferedCounter<'key' | 'team' | 'model'>;
  readonly #tokens: BufferedCounter<'key' | 'team' | 'model' | 'type'>;
  readonly #refusals: Counter<'key' | 'team' | 'reason' | 'scope'>;
  readonly #reloads: Counter<'result'>;
  readonly #lastReloadOk: Gauge;
  readonly #overhead: SeriesHistogram<never>;
  readonly #unknownRoutes: Counter<'method' | 'status'>;
  readonly #dropped: Counter<'ingress' | 'field'>;
  readonly #guardrails: Counter<'rule' | 'action' | 'site'>;
  readonly #cache: Counter<'result'>;
  readonly #cacheSaved: Counter;
  /** Label sets per key identity (one per key of a generation), made once and gone with it. */
  readonly #keyLabels = new WeakMap<KeyIdentity, KeyLabels>();
  /** Requests without a known key (refused at auth, or no auth stage). */
  readonly #anonymous: KeyLabels = { key: NONE, team: NONE, byModel: new Map(), requests: new Map() };

  constructor(source: MetricsSource) {
    this.#source = source;
    const registers = [this.registry];
    this.#operationDuration = new SeriesHistogram({
      name: 'gen_ai_client_operation_duration_seconds',
      help: 'GenAI operation duration: one chat request through the gateway, retries and fallbacks included, until its answer ended (OTel gen_ai.client.operation.duration).',
      labelNames: [...GENAI_LABELS, 'error_type'],
      buckets: BUCKETS.operationDuration,
      registers,
    });
    this.#tokenUsage = new SeriesHistogram({
      name: 'gen_ai_client_token_usage',
      help: 'Number of input and output tokens used per request, as the provider reported them (OTel gen_ai.client.token.usage).',
      labelNames: [...GENAI_LABELS, 'gen_ai_token_type'],
      buckets: BUCKETS.tokenUsage,
      registers,
    });
    this.#timeToFirstToken = new SeriesHistogram({
      name: 'gen_ai_server_time_to_first_token_seconds',
      help: 'Streams: time from the request arriving to its first chunk being sent (OTel gen_ai.server.time_to_first_token).',
      labelNames: GENAI_LABELS,
      buckets: BUCKETS.timeToFirstToken,
      registers,
    });
    this.#requests = new BufferedCounter({
      name: 'switchyard_requests_total',
      help: 'Chat requests answered, by key and team (_none: no key known), model alias (_other: not in gateway.yaml), provider that answered last, HTTP status and error code (ok when none).',
      labelNames: ['key', 'team', 'model', 'provider', 'status', 'code'],
      registers,
    });
    this.#attempts = new BufferedCounter({
      name: 'switchyard_attempts_total',
      help: 'Upstream attempts by provider, target (provider/model) and outcome: succeeded, retried (the same target was tried again), failed_over (another target was tried next), failed (the last one), skipped (cooling down or unavailable).',
      labelNames: ['provider', 'target', 'outcome'],
      registers,
    });
    const inFlight = () => this.#inFlight;
    new Gauge({
      name: 'switchyard_in_flight_requests',
      help: 'Chat requests being served now (streams until their last byte).',
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.#cost = new BufferedCounter({
      name: 'switchyard_cost_usd_total',
      help: 'USD spent at the configured prices, by key, team and model alias.',
      labelNames: ['key', 'team', 'model'],
      registers,
    });
    this.#tokens = new BufferedCounter({
      name: 'switchyard_tokens_total',
      help: 'Tokens used, by key, team, model alias and type (input, output).',
      labelNames: ['key', 'team', 'model', 'type'],
      registers,
    });
    this.#refusals = new Counter({
      name: 'switchyard_refusals_total',
      help: 'Requests the gateway itself refused, by key, team, reason (rpm, tpm, concurrency, budget, unpriced, invalid_key, model_not_allowed, state_unavailable, limit) and scope whose rule refused (key, team, target).',
      labelNames: ['key', 'team', 'reason', 'scope'],
      registers,
    });
    this.#unknownRoutes = new Counter({
      name: 'switchyard_unknown_routes_total',
      help: 'Requests for a path the gateway does not serve (status 404) or with a method it does not take there (405), by method; the path is in the log line.',
      labelNames: ['method', 'status'],
      registers,
    });
    this.#dropped = new Counter({
      name: 'switchyard_dropped_fields_total',
      help: 'Request fields the gateway read but did not carry to the target by ingress and top-level field name (a known one, else _other); the log line names each.',
      labelNames: ['ingress', 'field'],
      registers,
    });
    this.#guardrails = new Counter({
      name: 'switchyard_guardrail_verdicts_total',
      help: 'Requests a guardrail rule found something in, by rule (its gateway.yaml name), action (block, redact, log) and site (request, answer); never the text found.',
      labelNames: ['rule', 'action', 'site'],
      registers,
    });
    this.#cache = new Counter({
      name: 'switchyard_cache_requests_total',
      help: 'Chat requests the exact cache saw, by result: hit (answered from the cache), miss, bypass (Cache-Control: no-cache or no-store).',
      labelNames: ['result'],
      registers,
    });
    this.#cacheSaved = new Counter({ name: 'switchyard_cache_saved_usd_total', help: 'What the answers served from the exact cache cost when they were made (USD): spend saved.', registers });
    this.#reloads = new Counter({ name: 'switchyard_config_reloads_total', help: 'Config reload attempts by result (ok, rejected).', labelNames: ['result'], registers });
    this.#reloads.inc({ result: 'ok' }, 0);
    this.#reloads.inc({ result: 'rejected' }, 0);
    this.#lastReloadOk = new Gauge({
      name: 'switchyard_config_last_reload_successful',
      help: 'Whether the last config reload was applied: 1 yes (or none tried yet), 0 rejected (the previous generation still serves).',
      registers,
      // Any worker that rejected its reload is serving an older config.
      aggregator: 'min',
    });
    this.#lastReloadOk.set(1);
    this.#overhead = new SeriesHistogram({
      name: 'switchyard_overhead_seconds',
      help: 'Time a request spent in the gateway itself: its whole duration minus the waits for upstreams (retry backoff and writing to a slow client included).',
      buckets: BUCKETS.overhead,
      registers,
    });
    new Gauge({
      name: 'switchyard_config_generation',
      help: 'The config generation serving new requests (1 at start, +1 per successful reload).',
      registers,
      // Summed over cluster workers it would mean nothing; the newest is what an operator asks.
      aggregator: 'max',
      collect() {
        this.set(source.runtime()?.generation ?? 0);
      },
    });
    new Gauge({
      name: 'switchyard_target_state',
      help: 'Circuit breaker of each alias target: 0 healthy, 1 cooling down, 2 half-open (probing).',
      labelNames: ['model', 'target'],
      registers,
      // Cluster workers keep their own breakers: the worst state any of them sees.
      aggregator: 'max',
      collect() {
        // Reset first: targets removed by a reload disappear instead of reporting a stale state.
        this.reset();
        const runtime = source.runtime();
        if (!runtime) return;
        const now = source.clock.now();
        for (const route of runtime.models.values()) {
          for (const target of route.targets) this.set({ model: route.name, target: targetLabel(target) }, targetState(target, now));
        }
      },
    });
    // Token expiry is wall-clock time, not the breakers' clock.
    registerIdentityMetrics(this.registry, { providers: () => source.runtime()?.providers, now: Date.now });
    if (source.state) registerStateGauges(this.registry, { config: () => source.runtime()?.config, state: source.state });
  }

  /** The exposition text: the process's metrics, then this gateway's (or, in a cluster worker, every worker's: see renderWith). */
  render(): Promise<string> {
    return this.#render();
  }

  #render = async (): Promise<string> => {
    const [process, gateway] = await Promise.all([processMetrics().metrics(), this.registry.metrics()]);
    return process + gateway;
  };

  /** The process's registry and this gateway's: what a cluster primary sums over its workers (src/cluster). */
  get registries(): Registry[] {
    return [processMetrics(), this.registry];
  }

  /** A cluster worker answers scrapes with the sum of every worker's figures, which its primary makes. */
  renderWith(render: () => Promise<string>): void {
    this.#render = render;
  }

  countReload(ok: boolean): void {
    this.#reloads.inc({ result: ok ? 'ok' : 'rejected' });
    this.#lastReloadOk.set(ok ? 1 : 0);
  }

  requestStarted(): void {
    this.#inFlight++;
  }

  unknownRoute(method: string, status: number): void {
    // Methods are HTTP's few (anything else is one value); the path, a client's to choose, is only logged.
    this.#unknownRoutes.inc({ method: HTTP_METHODS.has(method) ? method : OTHER, status: status === 405 ? '405' : '404' });
  }

  requestEnded(ctx: ExchangeView): void {
    this.#inFlight--;
    const now = performance.now();
    const model = modelLabel(ctx, this.#source.runtime()?.models);
    const code = codeLabel(ctx);
    const who = this.#labelsOfKey(ctx);
    this.#requests.add(requestLabels(who, model, providerLabel(ctx), statusLabel(ctx), code), 1);
    this.#overhead.observe(NO_LABELS, overheadMs(ctx, now) / 1000);
    const refusal = refusalLabels(ctx);
    if (refusal) this.#refusals.inc({ key: who.key, team: who.team, reason: refusal.reason, scope: refusal.scope });
    this.#countAttempts(ctx.attempts);
    const dropped = ctx.dropped;
    if (dropped) for (const d of dropped) this.#dropped.inc({ ingress: ctx.ingress, field: droppedFieldLabel(d.field) });
    const verdicts = ctx.annotations?.guardrails;
    if (Array.isArray(verdicts)) for (const v of verdicts as GuardrailVerdict[]) this.#guardrails.inc({ rule: v.rule, action: v.action, site: v.site });
    const cache = ctx.annotations?.cache as { result: string; savedUsd?: number | null } | undefined;
    if (cache) {
      this.#cache.inc({ result: cache.result });
      if (typeof cache.savedUsd === 'number') this.#cacheSaved.inc(cache.savedUsd);
    }

    const attempt = ctx.attempt;
    // Requests refused before any upstream was tried are not GenAI operations (they are counted above).
    if (!attempt || !ctx.route) return;
    const genAiSets = this.#genAiLabelsOf(ctx.route, attempt.target, ctx.operation);
    const genAi = genAiSets.base;
    this.#operationDuration.observe(code === 'ok' ? genAi : failedLabels(genAiSets, code), (now - ctx.startedAt) / 1000);
    if (ctx.timing.firstChunkMs !== undefined) this.#timeToFirstToken.observe(genAi, ctx.timing.firstChunkMs / 1000);
    const usage = ctx.usage;
    const perModel = usage || ctx.costUsd ? modelLabelSets(who, model) : undefined;
    if (usage && perModel) {
      this.#tokenUsage.observe(genAiSets.input, usage.prompt_tokens);
      this.#tokenUsage.observe(genAiSets.output, usage.completion_tokens);
      this.#tokens.add(perModel.input, usage.prompt_tokens);
      this.#tokens.add(perModel.output, usage.completion_tokens);
    }
    // Set by governance from the target's price; null when the price is unknown (nothing to add).
    const cost = ctx.costUsd;
    if (perModel && typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) this.#cost.add(perModel.cost, cost);
  }

  /** A key's label values from gateway.yaml, cached per key of a generation (a reload makes new ones). */
  #labelsOfKey(ctx: ExchangeView): KeyLabels {
    const identity = ctx.key;
    if (!identity) return this.#anonymous;
    let labels = this.#keyLabels.get(identity);
    if (!labels) this.#keyLabels.set(identity, (labels = { key: keyLabel(ctx), team: teamLabel(ctx), byModel: new Map(), requests: new Map() }));
    return labels;
  }

  /** Each attempt's outcome, known only once the next one (or none) followed it. */
  #countAttempts(records: readonly AttemptRecord[]): void {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      this.#attempts.add(this.#attemptLabelsOf(r, attemptOutcome(records, i)), 1);
    }
  }

  #attemptLabelsOf(r: AttemptRecord, outcome: AttemptOutcome): AttemptLabels {
    let byModel = this.#attemptLabels.get(r.provider);
    if (!byModel) this.#attemptLabels.set(r.provider, (byModel = new Map()));
    let byOutcome = byModel.get(r.model);
    if (!byOutcome) byModel.set(r.model, (byOutcome = {}));
    let labels = byOutcome[outcome];
    if (!labels) byOutcome[outcome] = labels = Object.freeze({ provider: r.provider, target: targetLabel(r), outcome });
    return labels;
  }

  #genAiLabelsOf(route: ModelRoute, target: RouteTarget, operation: Operation): GenAiLabelSets {
    // Cached per target, then per alias routed to it (a fallback alias uses another's targets) and
    // operation; a generation's targets and routes go together, so do their labels.
    let byRoute = this.#genAiLabels.get(target);
    if (!byRoute) this.#genAiLabels.set(target, (byRoute = new Map()));
    let sets = byRoute.get(route);
    if (!sets) byRoute.set(route, (sets = {}));
    const kind = operation === 'embeddings' ? 'embeddings' : 'chat';
    let labels = sets[kind];
    if (!labels) {
      labels = genAiLabelSets(route, target, operation);
      sets[kind] = labels;
    }
    return labels;
  }
}

function targetState(target: RouteTarget, now: number): number {
  const state = target.state;
  if (state.coolingFor(now) > 0) return TARGET_STATE.cooling;
  // TargetState's breaker stays open after the cooldown until a probe succeeds (half-open).
  return (state as { readonly open?: boolean }).open ? TARGET_STATE.probing : TARGET_STATE.healthy;
}

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
