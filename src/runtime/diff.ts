/** What a reload changed, by name only (keys are never shown, only their names). */
import path from 'node:path';
import type { GatewayConfig } from '../config/types.ts';
import { stepDone } from './reload-steps.ts';

export interface SectionChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ConfigChanges {
  models: SectionChanges;
  providers: SectionChanges;
  keys: SectionChanges;
  pipeline: boolean;
  /** Plugin files loaded by path that changed on disk (re-imported). */
  pluginFiles: string[];
  /** Settings that only take effect after a restart. */
  needsRestart: string[];
}

/**
 * Each entry's JSON, remembered by object: a generation's entries are compared twice (as the
 * new one, then as the old one), and 10,000 keys stringified on the serving thread at every
 * reload cost a visible stall. A reload's worker thread computes the new keys' JSON (rememberJson).
 */
const jsonCache = new WeakMap<object, string>();

export function rememberJson(entry: object, json: string): void {
  jsonCache.set(entry, json);
}

function jsonOf(value: unknown): string {
  if (!value || typeof value !== 'object') return JSON.stringify(value);
  let json = jsonCache.get(value);
  if (json === undefined) jsonCache.set(value, (json = JSON.stringify(value)));
  return json;
}

function compare<T>(before: Record<string, T>, after: Record<string, T>): SectionChanges {
  return compareMaps(new Map(Object.entries(before)), new Map(Object.entries(after)));
}

/** Maps, not objects built from 10,000 keys' names: those are slow dictionaries to build and probe. */
function compareMaps<T>(before: ReadonlyMap<string, T>, after: ReadonlyMap<string, T>): SectionChanges {
  const out: SectionChanges = { added: [], removed: [], changed: [] };
  for (const [name, entry] of after) {
    const old = before.get(name);
    if (old === undefined) out.added.push(name);
    else if (old !== entry && jsonOf(old) !== jsonOf(entry)) out.changed.push(name);
  }
  for (const name of before.keys()) if (!after.has(name)) out.removed.push(name);
  return out;
}

function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

const byName = <T extends { name: string }>(list: readonly T[]): Map<string, T> => new Map(list.map((k) => [k.name, k]));

/**
 * describeChanges for the serving thread: the keys are compared a slice at a time, with the
 * requests waiting on this thread served between slices (10,000 keys at once are a stall).
 */
export async function describeChangesInSteps(before: GatewayConfig, after: GatewayConfig, pluginFiles: readonly string[] = []): Promise<ConfigChanges> {
  if (before.keys.length + after.keys.length <= KEYS_PER_STEP) return describeChanges(before, after, pluginFiles);
  const changes = describeChanges({ ...before, keys: [] }, { ...after, keys: [] }, pluginFiles);
  const old = byName(before.keys);
  await nextTask();
  const seen = new Set<string>();
  for (let from = 0; from < after.keys.length; from += KEYS_PER_STEP) {
    for (const entry of after.keys.slice(from, from + KEYS_PER_STEP)) {
      const previous = old.get(entry.name);
      seen.add(entry.name);
      if (previous === undefined) changes.keys.added.push(entry.name);
      else if (previous !== entry && jsonOf(previous) !== jsonOf(entry)) changes.keys.changed.push(entry.name);
    }
    stepDone('diff a slice of keys');
    await nextTask();
  }
  for (const name of old.keys()) if (!seen.has(name)) changes.keys.removed.push(name);
  return changes;
}

const KEYS_PER_STEP = 2_000;
const nextTask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function describeChanges(before: GatewayConfig, after: GatewayConfig, pluginFiles: readonly string[] = []): ConfigChanges {
  const needsRestart: string[] = [];
  for (const field of ['host', 'port', 'bodyLimit', 'inFlightBodyLimit', 'headersTimeoutMs', 'requestTimeoutMs', 'primaryTimeoutMs', 'workers'] as const) {
    if (before.server[field] !== after.server[field]) needsRestart.push(`server.${field}`);
  }
  if (before.log.format !== after.log.format) needsRestart.push('log.format');
  if (JSON.stringify({ ...before.state, prices: undefined }) !== JSON.stringify({ ...after.state, prices: undefined })) needsRestart.push('state');
  // Metrics and tracing are set up when the gateway starts (metrics.auth follows reloads).
  if (JSON.stringify({ ...before.metrics, auth: undefined }) !== JSON.stringify({ ...after.metrics, auth: undefined })) needsRestart.push('metrics');
  if (JSON.stringify(before.tracing) !== JSON.stringify(after.tracing)) needsRestart.push('tracing');
  return {
    models: compare(before.models, after.models),
    providers: compare(before.providers, after.providers),
    keys: compareMaps(byName(before.keys), byName(after.keys)),
    pipeline: JSON.stringify(before.pipeline) !== JSON.stringify(after.pipeline),
    pluginFiles: [...pluginFiles],
    needsRestart,
  };
}

/** "models +fast ~demo -old; providers +local; keys +ci" — empty sections left out. */
export function summarizeChanges(c: ConfigChanges): string {
  const parts: string[] = [];
  for (const section of ['models', 'providers', 'keys'] as const) {
    const s = c[section];
    const items = [...s.added.map((n) => `+${n}`), ...s.changed.map((n) => `~${n}`), ...s.removed.map((n) => `-${n}`)];
    if (items.length) parts.push(`${section} ${items.join(' ')}`);
  }
  if (c.pipeline) parts.push('pipeline changed');
  if (c.pluginFiles.length) parts.push(`plugin code changed: ${c.pluginFiles.map(displayPath).join(', ')}`);
  return parts.join('; ') || 'no effective change';
}
