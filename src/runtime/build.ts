/**
 * A config generation: everything a request needs, built completely before it serves (config,
 * provider instances, key index, model routes, the composed stage chain). A request takes the
 * generation current when it starts; a reload builds a new one beside it and swaps a reference.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { Logger } from 'pino';
import { parseConfigFile, type ParsedConfig } from '../config/load.ts';
import { ConfigError, byPosition, type ConfigIssue } from '../config/issues.ts';
import { describeSchemaErrors } from '../config/schema-errors.ts';
import type { GatewayConfig, RetryConfig } from '../config/types.ts';
import path from 'node:path';
import { loadPlugin, PluginLoadError, type LocalModuleCache } from '../plugins/load.ts';
import { createProviders, pluginOptions, releaseProviders, type ProviderHandle } from './providers.ts';
import { compose, composeOnResponse } from '../pipeline/compose.ts';
import { dispatch } from '../pipeline/dispatch.ts';
import type { JsonSchema, KeyIdentity, ModelRoute, ProviderInstance, ProviderPlugin, RequestContext, RetryPolicy, RouteTarget, RuntimeView, StageInstance, StagePlugin } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { buildKeyIndex, sha256Hex } from './keys.ts';
import { makeRedactor } from './redact.ts';
import { systemClock, type Clock } from './clock.ts';
import { parseSize } from './size.ts';
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS } from '../routing/policy.ts';
import { TargetState } from '../routing/target-state.ts';

export interface Runtime extends RuntimeView {
  readonly file: string;
  readonly config: GatewayConfig;
  /** Seconds since the epoch when this generation was built (the `created` of /v1/models). */
  readonly createdAt: number;
  readonly providers: ReadonlyMap<string, ProviderHandle>;
  readonly stages: readonly StageInstance[];
  readonly bodyLimit: number;
  /** Warnings found while building (e.g. providers left unavailable). */
  readonly warnings: readonly ConfigIssue[];
  /** The config file and the plugin files loaded by path: what a watcher should watch. */
  readonly files: readonly string[];
  /** Folders of plugins loaded by path: their sibling source files are watched too. */
  readonly pluginFolders: readonly string[];
  /** Path-loaded plugin modules, handed to the next generation so unchanged files are reused. */
  readonly modules: LocalModuleCache;
  /** Requests started on this generation and not finished yet. */
  readonly lifecycle: { inFlight: number };
  run(ctx: RequestContext): Promise<void>;
  finish(ctx: RequestContext): Promise<void>;
  /** This generation is done: its provider instances are closed unless a newer one shares them. */
  close(): Promise<void>;
}

export interface BuildOptions {
  generation: number;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** The generation being replaced: unchanged providers and plugin files are carried over. */
  previous?: Runtime;
}


// Plugin option schemas are the plugin author's: compile them leniently but report every error.
const pluginAjv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

function optionsValidator(schema: JsonSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = pluginAjv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** Loads and builds a generation from a file; throws ConfigError with every issue found. */
export async function buildRuntimeFromFile(file: string, options: BuildOptions): Promise<Runtime> {
  const parsed = await parseConfigFile(file, options.env);
  return buildRuntime(parsed, options);
}

export async function buildRuntime(parsed: ParsedConfig, options: BuildOptions): Promise<Runtime> {
  const { source, config, configDir } = parsed;
  const { log, generation, previous } = options;
  const modules: LocalModuleCache = new Map(previous?.modules);
  const files = new Set<string>([path.resolve(configDir, path.basename(source.file))]);
  const clock = options.clock ?? systemClock;
  if (!config) throw new ConfigError(source.issues);

  // Load every plugin module at once, even after cross-check errors, so that one run reports
  // everything; a failure is an issue at the line that named the plugin.
  const providerEntries = Object.entries(config.providers);
  const providerPlugins = await Promise.all(
    providerEntries.map(async ([name, p]) => {
      try {
        const loaded = await loadPlugin('provider', p.plugin, configDir, generation, modules);
        if (loaded.localFile) files.add(loaded.localFile);
        return loaded.plugin;
      } catch (err) {
        if (!(err instanceof PluginLoadError)) throw err;
        source.error(['providers', name, 'plugin'], err.message);
        return undefined;
      }
    }),
  );
  const stagePlugins = await Promise.all(
    config.pipeline.map(async (ref, i) => {
      const specifier = typeof ref === 'string' ? ref : ref.stage;
      try {
        const loaded = await loadPlugin('stage', specifier, configDir, generation, modules);
        if (loaded.localFile) files.add(loaded.localFile);
        return loaded.plugin;
      } catch (err) {
        if (!(err instanceof PluginLoadError)) throw err;
        source.error(typeof ref === 'string' ? ['pipeline', i] : ['pipeline', i, 'stage'], err.message);
        return undefined;
      }
    }),
  );

  // Plugin options against each plugin's own schema, with the same precise positions.
  const secrets: string[] = [];
  providerEntries.forEach(([name, p], i) => {
    const plugin = providerPlugins[i];
    if (!plugin) return;
    const opts = pluginOptions(p);
    const validate = optionsValidator(plugin.optionsSchema);
    if (!validate(opts)) {
      const unavailable = parsed.unavailable.has(name);
      for (const f of describeSchemaErrors(validate.errors ?? [], opts, ['providers', name])) {
        // Values still holding an unset ${VAR} are already reported as the reason it is unavailable.
        if (unavailable && String(pathValue(config, f.path)).includes('${')) continue;
        source.error(f.path, f.message, { key: f.key });
      }
    }
    for (const key of plugin.secretOptions ?? []) if (typeof opts[key] === 'string') secrets.push(opts[key] as string);
  });
  config.pipeline.forEach((ref, i) => {
    const plugin = stagePlugins[i];
    if (!plugin?.optionsSchema) return;
    const opts = typeof ref === 'string' ? {} : (ref.options ??= {});
    const validate = optionsValidator(plugin.optionsSchema);
    if (!validate(opts)) {
      for (const f of describeSchemaErrors(validate.errors ?? [], opts, ['pipeline', i, 'options'])) source.error(f.path, f.message, { key: f.key });
    }
  });
  if (source.hasErrors) throw new ConfigError(source.issues);

  for (const k of config.keys) if (k.key) secrets.push(k.key);
  const redact = makeRedactor(secrets);

  // Provider instances (carried over when unchanged). A create() that throws is a config error.
  const providers = await createProviders(providerEntries, providerPlugins as ProviderPlugin[], parsed.unavailable, previous?.providers, { source, log, configDir, redact });
  const closeProviders = () => releaseProviders(providers.values());
  if (source.hasErrors) {
    await closeProviders();
    throw new ConfigError(source.issues);
  }

  const models = new Map<string, ModelRoute>();
  for (const [alias, m] of Object.entries(config.models)) {
    const aliasRetry = retryPolicy(DEFAULT_RETRY, m.retry);
    const aliasTimeouts = { ...DEFAULT_TIMEOUTS, ...m.timeout };
    const targets = m.targets.map((t): RouteTarget => {
      const handle = providers.get(t.provider)!;
      const dropUnsupportedParams = m.dropUnsupportedParams ?? config.providers[t.provider].dropUnsupportedParams ?? false;
      return Object.freeze({
        provider: t.provider,
        model: t.model,
        unavailable: handle.unavailable,
        dropUnsupportedParams,
        instance: handle.instance ?? unavailableInstance,
        weight: t.weight,
        price: t.price,
        retry: retryPolicy(aliasRetry, t.retry),
        timeouts: Object.freeze({ ...aliasTimeouts, ...t.timeout }),
        state: carriedState(previous, alias, t.provider, t.model, handle, m.cooldown) ?? new TargetState(m.cooldown),
      });
    });
    const fallbacks = { context_window: m.fallbacks?.contextWindow, content_policy: m.fallbacks?.contentPolicy };
    models.set(alias, Object.freeze({ name: alias, strategy: m.strategy, retry: aliasRetry, targets: Object.freeze(targets), fallbacks }));
  }

  const keyIndex = buildKeyIndex(config.keys);
  const view: RuntimeView = {
    generation,
    models,
    hasKeys: keyIndex.size > 0,
    findKey: (token: string): KeyIdentity | undefined => keyIndex.get(sha256Hex(token)),
    redact,
  };

  const stages: StageInstance[] = [];
  for (const [i, ref] of config.pipeline.entries()) {
    const plugin = stagePlugins[i] as StagePlugin;
    const opts = typeof ref === 'string' ? {} : (ref.options ?? {});
    try {
      const stage = await plugin.create(opts, { log, configDir, clock, runtime: view });
      stages.push({ ...stage, name: stage.name || plugin.name });
    } catch (err) {
      source.error(['pipeline', i], `stage "${plugin.name}" failed to start: ${String((err as Error)?.message ?? err)}`);
    }
  }
  if (source.hasErrors) {
    await closeProviders();
    throw new ConfigError(source.issues);
  }

  const run = compose(stages, dispatch);
  const finish = composeOnResponse(stages);
  return Object.freeze({
    ...view,
    file: source.file,
    config,
    createdAt: Math.floor(Date.now() / 1000),
    providers,
    stages,
    bodyLimit: parseSize(config.server.bodyLimit),
    warnings: source.issues.filter((i) => i.severity === 'warning').sort(byPosition),
    files: [...files],
    pluginFolders: [...new Set([...files].slice(1).map((f) => path.dirname(f)))],
    modules,
    lifecycle: { inFlight: 0 },
    run,
    finish,
    close: closeProviders,
  });
}

/**
 * A target that survives a reload unchanged (same alias, provider instance, model and cooldown
 * policy) keeps its live state, so a reload neither forgets a cooldown nor the latency average.
 */
function carriedState(previous: Runtime | undefined, alias: string, provider: string, model: string, handle: ProviderHandle, cooldown: unknown): TargetState | undefined {
  const before = previous?.models.get(alias);
  if (!before || JSON.stringify(previous!.config.models[alias]?.cooldown) !== JSON.stringify(cooldown)) return undefined;
  const target = before.targets.find((t) => t.provider === provider && t.model === model);
  return target && previous!.providers.get(provider) === handle ? target.state : undefined;
}

/** `base` overridden field by field by a gateway.yaml `retry:` block. */
function retryPolicy(base: RetryPolicy, r: RetryConfig | undefined): RetryPolicy {
  if (!r) return base;
  return Object.freeze({
    attempts: r.attempts ?? base.attempts,
    backoff: { ...base.backoff, ...r.backoff },
    retryOn: r.retryOn ?? base.retryOn,
    maxRetryAfterMs: r.maxRetryAfterMs ?? base.maxRetryAfterMs,
    budgetMs: r.budgetMs ?? base.budgetMs,
  });
}

/** Stands in for a provider that could not be configured; the dispatcher never calls it. */
const unavailableInstance: ProviderInstance = {
  send: () => Promise.reject(new GatewayError('provider_unavailable', 'provider is unavailable')),
  toCompletion: () => {
    throw new GatewayError('provider_unavailable', 'provider is unavailable');
  },
  createStreamTranslator: () => {
    throw new GatewayError('provider_unavailable', 'provider is unavailable');
  },
};

function pathValue(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const s of path) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[s] : undefined;
  return node;
}
