/**
 * Finds and imports plugin modules: built-ins by id, others by path (relative to gateway.yaml)
 * or package name. Path-loaded modules are imported with a per-generation query so that a
 * reload picks up code edited on disk (ESM caches modules by URL).
 */
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PLUGIN_API_VERSION, type ProviderPlugin, type StagePlugin } from '../plugin-api.ts';
import { BUILTIN_STAGE_NAMES, builtinStage } from '../pipeline/stages.ts';
import { locateSyntaxError } from './syntax.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILTIN_PROVIDERS_DIR = path.join(ROOT, 'plugins');

export type PluginKind = 'provider' | 'stage';
type PluginOf<K extends PluginKind> = K extends 'provider' ? ProviderPlugin : StagePlugin;

export class PluginLoadError extends Error {}

export interface LoadedPlugin<K extends PluginKind> {
  plugin: PluginOf<K>;
  /** Absolute file for path and built-in plugins, the package name otherwise. */
  source: string;
  builtin: boolean;
  /** For plugins loaded by path: the file, to watch it for changes. */
  localFile?: string;
  /** A path-loaded plugin whose files changed since the cache saw them (re-imported). */
  changed?: boolean;
}

/** Path-loaded plugin modules by file, with the mtime they were imported at. */
export type LocalModuleCache = Map<string, { mtimeMs: number; plugin: unknown }>;

/**
 * Imports a plugin. A path-loaded file is re-imported (with a generation query, since ESM
 * caches by URL) only when its mtime changed since `cache` saw it; otherwise the same plugin
 * object is reused, so that an unchanged provider keeps its instance and connections.
 */
export async function loadPlugin<K extends PluginKind>(kind: K, specifier: string, configDir: string, generation: number, cache?: LocalModuleCache): Promise<LoadedPlugin<K>> {
  const stage = kind === 'stage' ? builtinStage(specifier) : undefined;
  if (stage) return { plugin: stage.plugin as PluginOf<K>, source: specifier, builtin: true };
  const { url, source, builtin, local } = await resolvePlugin(kind, specifier, configDir);
  if (local) {
    const mtimeMs = await folderMtime(source);
    const cached = cache?.get(source);
    if (cached && cached.mtimeMs === mtimeMs) return { plugin: cached.plugin as PluginOf<K>, source, builtin, localFile: source };
    const plugin = await importPlugin(kind, specifier, `${url}?generation=${generation}`, source);
    cache?.set(source, { mtimeMs, plugin });
    return { plugin, source, builtin, localFile: source, changed: cached !== undefined };
  }
  return { plugin: await importPlugin(kind, specifier, url), source, builtin };
}

async function importPlugin<K extends PluginKind>(kind: K, specifier: string, url: string, file?: string): Promise<PluginOf<K>> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const where = err instanceof SyntaxError && file ? await locateSyntaxError(err, file, SOURCE_FILE) : undefined;
    throw new PluginLoadError(`cannot load ${kind} plugin "${specifier}": ${where ? `syntax error at ${displayPath(where)}` : firstLine(err)}`);
  }
  const plugin = (mod.default ?? mod.plugin) as PluginOf<K> | undefined;
  checkShape(kind, specifier, plugin);
  return plugin as PluginOf<K>;
}

async function resolvePlugin(kind: PluginKind, specifier: string, configDir: string): Promise<{ url: string; source: string; builtin: boolean; local: boolean }> {
  const isPath = specifier.startsWith('.') || path.isAbsolute(specifier);
  if (!isPath) {
    const builtin = kind === 'provider' ? await findFile(path.join(BUILTIN_PROVIDERS_DIR, specifier)) : undefined;
    if (builtin && /^[a-z0-9-]+$/.test(specifier)) return { url: pathToFileURL(builtin).href, source: builtin, builtin: true, local: false };
    try {
      const resolved = createRequire(path.join(configDir, 'gateway.yaml')).resolve(specifier);
      return { url: pathToFileURL(resolved).href, source: specifier, builtin: false, local: false };
    } catch {
      const known = kind === 'provider' ? await builtinProviderIds() : BUILTIN_STAGE_NAMES;
      throw new PluginLoadError(`unknown ${kind} plugin "${specifier}": not a built-in (${known.join(', ')}) and no package of that name is installed; use ./path/to/plugin.ts for a file`);
    }
  }
  const absolute = path.resolve(configDir, specifier);
  const file = await findFile(absolute);
  if (!file) throw new PluginLoadError(`${kind} plugin file not found: ${specifier} (looked for ${absolute})`);
  return { url: pathToFileURL(file).href, source: file, builtin: false, local: true };
}

/**
 * The newest modification time among the plugin file and the source files beside it: a plugin
 * is usually a folder whose entry imports its siblings, and an edit to any of them counts.
 */
async function folderMtime(file: string): Promise<number> {
  const dir = path.dirname(file);
  const { readdir } = await import('node:fs/promises');
  let newest = (await stat(file)).mtimeMs;
  for (const name of await readdir(dir)) {
    if (!SOURCE_FILE.test(name)) continue;
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info?.isFile() && info.mtimeMs > newest) newest = info.mtimeMs;
  }
  return newest;
}

/** Files whose edits count as a plugin change (tests excluded). */
export const SOURCE_FILE = /^(?!.*\.test\.)[^.].*\.(ts|mts|js|mjs|cjs|json)$/;

/** A file as named, or a directory's index.{ts,mts,js,mjs}. */
async function findFile(candidate: string): Promise<string | undefined> {
  const info = await stat(candidate).catch(() => undefined);
  if (info?.isFile()) return candidate;
  if (info?.isDirectory()) {
    for (const index of ['index.ts', 'index.mts', 'index.js', 'index.mjs']) {
      const file = path.join(candidate, index);
      if ((await stat(file).catch(() => undefined))?.isFile()) return file;
    }
  }
  return undefined;
}

export async function builtinProviderIds(): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const entries = await readdir(BUILTIN_PROVIDERS_DIR, { withFileTypes: true });
  const ids: string[] = [];
  for (const e of entries) {
    if (e.isDirectory() && e.name !== 'examples' && (await findFile(path.join(BUILTIN_PROVIDERS_DIR, e.name)))) ids.push(e.name);
  }
  return ids.sort();
}

function checkShape(kind: PluginKind, specifier: string, plugin: unknown): void {
  const helper = kind === 'provider' ? 'defineProvider() or defineHttpProvider()' : 'defineStage()';
  if (!plugin || typeof plugin !== 'object') {
    throw new PluginLoadError(`"${specifier}" has no default export; export default ${helper}`);
  }
  const p = plugin as Record<string, unknown>;
  if (p.kind !== kind) throw new PluginLoadError(`"${specifier}" exports a ${String(p.kind ?? 'non-plugin object')}, not a ${kind} plugin`);
  // Version 1 plugins still load: providers are unchanged, stages run through a compatibility view (runtime/stages.ts).
  if (p.apiVersion !== PLUGIN_API_VERSION && p.apiVersion !== 1) {
    throw new PluginLoadError(`"${specifier}" targets plugin API version ${String(p.apiVersion)}, this gateway speaks version ${PLUGIN_API_VERSION} (and still loads 1)`);
  }
  if (typeof p.create !== 'function') throw new PluginLoadError(`"${specifier}" has no create() function`);
  if (kind === 'provider' && (typeof p.id !== 'string' || !p.optionsSchema || typeof p.optionsSchema !== 'object')) {
    throw new PluginLoadError(`"${specifier}" must declare an id and an optionsSchema`);
  }
  if (kind === 'stage' && typeof p.name !== 'string') throw new PluginLoadError(`"${specifier}" must declare a name`);
}

/** Paths inside the working directory are shown relative to it, like config files. */
function displayPath(text: string): string {
  const cwd = process.cwd() + path.sep;
  return text.startsWith(cwd) ? text.slice(cwd.length) : text;
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0];
}
