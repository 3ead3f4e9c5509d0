/**
 * A config generation: everything a request needs, built completely before it serves (config,
 * provider instances, key index, model routes, the composed stage chain). A request takes the
 * generation current when it starts; a reload builds a new one beside it and swaps a reference.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { parseConfigFile, type ParsedConfig } from '../config/load.ts';
import { ConfigError, byPosition, type ConfigIssue } from '../config/issues.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { LocalModuleCache } from '../plugins/load.ts';
import { createProviders, releaseProviders, type ProviderHandle } from './providers.ts';
import { compose, composeOnResponse } from '../pipeline/compose.ts';
import { dispatch } from '../pipeline/dispatch.ts';
import type { GenerationServices } from '../pipeline/exchange.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import type { ProviderPlugin, RequestContext, RequestOutcome, RuntimeView, StageInstance, StagePlugin } from '../plugin-api.ts';
import { buildKeyIndex, keyFinder, plainKeySecrets } from './keys.ts';
import { mergeIndexes, redactionIndex, redactorFrom } from './redact.ts';
import { systemClock, type Clock } from './clock.ts';
import { inFlightBodyLimitOf, parseSize } from './size.ts';
import { rememberJson } from './diff.ts';
import { stepDone } from './reload-steps.ts';
import { loadPlugins } from './plugins.ts';
import { buildRoutes, modelResolver } from './routes.ts';
import { createStages } from './stages.ts';
import { Governor } from '../pipeline/governor.ts';
import { BUILT_IN_PRICES, extendPrices, loadPriceFile, type PriceTable, type StateBackend } from '../governance/index.ts';
import type { ConfigIssues } from '../config/source.ts';

export interface Runtime extends RuntimeView {
  readonly file: string;
  readonly config: GatewayConfig;
  /** Seconds since the epoch when this generation was built (the `created` of /v1/models). */
  readonly createdAt: number;
  readonly providers: ReadonlyMap<string, ProviderHandle>;
  readonly stages: readonly StageInstance[];
  /** The first stage that identifies callers, for routes outside the pipeline; undefined when none does. */
  readonly identify: StageInstance['identify'];
  readonly bodyLimit: number;
  /** `server.inFlightBodyLimit` in bytes, `auto` resolved. */
  readonly inFlightBodyLimit: number;
  /** Warnings found while building (e.g. providers left unavailable). */
  readonly warnings: readonly ConfigIssue[];
  /** The config file, the plugin files loaded by path and the `${file:...}` files: what a watcher should watch. */
  readonly files: readonly string[];
  /** The fingerprints of the config file and `${file:...}` files as this generation read them (config/fingerprint.ts). */
  readonly inputs: ReadonlyMap<string, string>;
  /** Folders of plugins loaded by path: their sibling source files are watched too. */
  readonly pluginFolders: readonly string[];
  /** Path-loaded plugin modules, handed to the next generation so unchanged files are reused. */
  readonly modules: LocalModuleCache;
  /** Plugin files re-imported because they changed since the previous generation. */
  readonly changedPluginFiles: readonly string[];
  /** Limits, budgets and spend (absent without a state backend). */
  readonly governor: Governor | undefined;
  /** What this generation gives each attempt (secrets to scrub, body limit, instruments, limits). */
  readonly services: GenerationServices;
  /** Requests started on this generation and not finished yet. */
  readonly lifecycle: { inFlight: number };
  /** Runs the stages, then the dispatcher. */
  run(ctx: RequestContext): Promise<void>;
  /** The stages' onResponse hooks, in pipeline order. */
  finish(ctx: RequestContext, outcome: RequestOutcome): Promise<void>;
  /** This generation is done: its provider instances are closed unless a newer one shares them. */
  close(): Promise<void>;
}

export interface BuildOptions {
  generation: number;
  /** The gateway's own URL once it listens. */
  selfUrl?: () => string | undefined;
  /** The gateway's instruments (metrics, traces): they outlive generations. */
  observer?: GatewayObserver;
  /** Live counters for limits and budgets (opened once by the gateway); absent: nothing is limited (validate). */
  state?: StateBackend;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** The generation being replaced: unchanged providers and plugin files are carried over. */
  previous?: Runtime;
}

/** Loads and builds a generation from a file; throws ConfigError with every issue found. */
export async function buildRuntimeFromFile(file: string, options: BuildOptions): Promise<Runtime> {
  const parsed = await parseConfigFile(file, options.env);
  return buildRuntime(parsed, options);
}

export async function buildRuntime(parsed: ParsedConfig, options: BuildOptions): Promise<Runtime> {
  const { source, config, configDir } = parsed;
  const { log, generation, previous } = options;
  if (!config) throw new ConfigError(source.issues);
  const modules: LocalModuleCache = new Map(previous?.modules);
  const files = new Set<string>([path.resolve(configDir, path.basename(source.file))]);
  const changed = new Set<string>();

  const plugins = await loadPlugins(parsed, { generation, modules, files, changed });
  stepDone('plugins');
  if (source.hasErrors) throw new ConfigError(source.issues);
  const configSecrets = parsed.redaction ?? redactionIndex([...parsed.fileSecrets, ...plainKeySecrets(config.keys, parsed.keySecrets)]);
  const redact = redactorFrom(mergeIndexes(configSecrets, redactionIndex(plugins.secrets)));
  stepDone('redactor');

  // Provider instances (carried over when unchanged). A create() that throws is a config error.
  const providers = await createProviders(Object.entries(config.providers), plugins.providers as ProviderPlugin[], parsed.unavailable, previous?.providers, { source, log, configDir, redact });
  const closeProviders = () => releaseProviders(providers.values());
  stepDone('providers');
  if (source.hasErrors) {
    await closeProviders();
    throw new ConfigError(source.issues);
  }

  const prices = await priceTable(config, configDir, source);
  const models = buildRoutes(config, providers, previous, prices, (alias, i) => {
    const t = config.models[alias].targets[i];
    source.issue(
      'warning',
      ['models', alias, 'targets', i],
      `no price is known for ${t.provider}/${t.model}: its cost is logged as null, and keys with a budget may not use it; set price: { input, output } (USD per million tokens)`,
    );
  });
  stepDone('routes');
  // Between the steps that grow with the number of keys, requests waiting on this thread go first.
  await yieldToRequests();
  stepDone('yield');
  const keyIndex = buildKeyIndex(config.keys, parsed.keySecrets);
  stepDone('key index');
  if (parsed.keyJson) config.keys.forEach((k, i) => rememberJson(k, parsed.keyJson![i]));
  stepDone('key json');
  const view: RuntimeView = {
    generation,
    models,
    resolveModel: modelResolver(models),
    hasKeys: keyIndex.size > 0,
    findKey: keyFinder(keyIndex),
    redact,
    upstreamBodyLimit: parseSize(config.server.upstreamBodyLimit),
    selfUrl: options.selfUrl,
  };
  await yieldToRequests();
  stepDone('yield');
  const governor = options.state ? new Governor(options.state, config, models) : undefined;
  stepDone('governor');
  const services: GenerationServices = { redact, upstreamBodyLimit: view.upstreamBodyLimit, observer: options.observer, limits: governor };
  const stages = await createStages(config.pipeline, plugins.stages as StagePlugin[], { log, configDir, clock: options.clock ?? systemClock, runtime: view }, source);
  stepDone('stages');
  if (source.hasErrors) {
    await closeProviders();
    throw new ConfigError(source.issues);
  }

  return Object.freeze({
    ...view,
    file: source.file,
    config,
    createdAt: Math.floor(Date.now() / 1000),
    providers,
    stages,
    identify: stages.find((s) => s.identify)?.identify,
    bodyLimit: parseSize(config.server.bodyLimit),
    inFlightBodyLimit: inFlightBodyLimitOf(config.server.inFlightBodyLimit, parseSize(config.server.bodyLimit)),
    warnings: source.issues.filter((i) => i.severity === 'warning').sort(byPosition),
    files: [...new Set([...files, ...parsed.inputs.keys()])],
    inputs: parsed.inputs,
    pluginFolders: [...new Set([...files].slice(1).map((f) => path.dirname(f)))],
    governor,
    modules,
    changedPluginFiles: [...changed],
    services,
    lifecycle: { inFlight: 0 },
    run: compose(stages, dispatch),
    finish: composeOnResponse(stages),
    close: async () => {
      await closeProviders();
      await Promise.allSettled(stages.map((s) => s.close?.()));
    },
  });
}

const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The built-in price table, extended by the operator's `state.prices` file when there is one. */
async function priceTable(config: GatewayConfig, configDir: string, source: ConfigIssues): Promise<PriceTable> {
  if (!config.state.prices) return BUILT_IN_PRICES;
  try {
    return extendPrices(BUILT_IN_PRICES, await loadPriceFile(path.resolve(configDir, config.state.prices)));
  } catch (err) {
    source.error(['state', 'prices'], `cannot read the price file: ${(err as Error).message}`);
    return BUILT_IN_PRICES;
  }
}
