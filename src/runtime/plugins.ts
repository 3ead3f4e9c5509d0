/**
 * Loading a generation's plugins: every provider and stage module at once (even after errors, so
 * one run reports everything), each plugin's options against its own schema, and the secrets its
 * options hold. A failure is an issue at the line that named the plugin.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { ParsedConfig } from '../config/load.ts';
import { describeSchemaErrors } from '../config/schema-errors.ts';
import type { PathSegment } from '../config/issues.ts';
import type { JsonSchema, ProviderPlugin, StagePlugin } from '../plugin-api.ts';
import { loadPlugin, PluginLoadError, type LocalModuleCache, type PluginKind } from '../plugins/load.ts';
import { pluginOptions } from './providers.ts';

// Plugin option schemas are the plugin author's: compile them leniently but report every error.
const pluginAjv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, strict: false });
/** Compiled once per schema object; a plugin module dropped on reload takes its entry with it. */
const compiled = new WeakMap<object, ValidateFunction>();

function optionsValidator(schema: JsonSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = pluginAjv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

export interface LoadedPlugins {
  /** Parallel to `Object.entries(config.providers)`; undefined where loading failed. */
  providers: Array<ProviderPlugin | undefined>;
  /** Parallel to `config.pipeline`. */
  stages: Array<StagePlugin | undefined>;
  /** Secrets found in provider options (`secretOptions`). */
  secrets: string[];
}

export interface LoadContext {
  generation: number;
  modules: LocalModuleCache;
  /** Collects the files of path-loaded plugins (to watch them). */
  files: Set<string>;
  /** Collects the path-loaded plugin files that changed since the previous generation. */
  changed: Set<string>;
}

export async function loadPlugins(parsed: ParsedConfig, ctx: LoadContext): Promise<LoadedPlugins> {
  const { source, config, configDir } = parsed;
  const providerEntries = Object.entries(config!.providers);
  const pipeline = config!.pipeline;
  const load = async <K extends PluginKind>(kind: K, specifier: string, at: PathSegment[]) => {
    try {
      const loaded = await loadPlugin(kind, specifier, configDir, ctx.generation, ctx.modules);
      if (loaded.localFile) ctx.files.add(loaded.localFile);
      if (loaded.changed && loaded.localFile) ctx.changed.add(loaded.localFile);
      return loaded.plugin;
    } catch (err) {
      if (!(err instanceof PluginLoadError)) throw err;
      source.error(at, err.message);
      return undefined;
    }
  };
  const [providers, stages] = await Promise.all([
    Promise.all(providerEntries.map(([name, p]) => load('provider', p.plugin, ['providers', name, 'plugin']))),
    Promise.all(pipeline.map((ref, i) => (typeof ref === 'string' ? load('stage', ref, ['pipeline', i]) : load('stage', ref.stage, ['pipeline', i, 'stage'])))),
  ]);

  const secrets: string[] = [];
  providerEntries.forEach(([name, p], i) => {
    const plugin = providers[i];
    if (!plugin) return;
    const opts = pluginOptions(p);
    const validate = optionsValidator(plugin.optionsSchema);
    if (!validate(opts)) {
      const unavailable = parsed.unavailable.has(name);
      for (const f of describeSchemaErrors(validate.errors ?? [], opts, ['providers', name])) {
        // Values still holding an unset ${VAR} are already reported as the reason it is unavailable.
        if (unavailable && String(valueAt(config, f.path)).includes('${')) continue;
        source.error(f.path, f.message, { key: f.key });
      }
    }
    for (const key of plugin.secretOptions ?? []) {
      // A dotted name reaches into an object option (`auth.key`).
      const value = key.split('.').reduce<unknown>((at, part) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined), opts);
      if (typeof value === 'string') secrets.push(value);
    }
  });
  pipeline.forEach((ref, i) => {
    const plugin = stages[i];
    if (!plugin?.optionsSchema) return;
    const opts = typeof ref === 'string' ? {} : (ref.options ??= {});
    const validate = optionsValidator(plugin.optionsSchema);
    if (!validate(opts)) {
      for (const f of describeSchemaErrors(validate.errors ?? [], opts, ['pipeline', i, 'options'])) source.error(f.path, f.message, { key: f.key });
    }
  });
  return { providers, stages, secrets };
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let node = root;
  for (const s of path) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[s] : undefined;
  return node;
}
