/**
 * The price table (prices.json) and how a target finds its price: the target's own `price:`
 * first, then the table by provider plugin and model id. Model ids are matched exactly, or as
 * a table id followed by a date or version suffix only (`gpt-4o-2024-08-06`,
 * `claude-sonnet-4-20250514`, `amazon.nova-pro-v1:0`; Bedrock's `us.`/`eu.`/… inference-profile
 * prefixes are ignored), so `gpt-4o-audio-preview` does not inherit gpt-4o's price: an unknown
 * model has no price rather than a wrong one.
 */
import { readFile } from 'node:fs/promises';
import builtIn from './prices.json' with { type: 'json' };
import type { Price } from './types.ts';

export interface PriceEntry extends Price {
  /** The provider's pricing page the figures come from. */
  source: string;
  /** When they were known to be in force (YYYY-MM). */
  date: string;
  note?: string;
}

/** plugin → model id → price. */
export type PriceTable = Readonly<Record<string, Readonly<Record<string, PriceEntry>>>>;

export const BUILT_IN_PRICES: PriceTable = builtIn.providers;

/** A date (`-20250514`, `-2024-08-06`), a Gemini version (`-001`), a Bedrock version (`-v1:0`, `:0`), or `-latest`. */
const VERSION_SUFFIX = /^(-\d{8}|-\d{4}-\d{2}-\d{2}|-\d{3})?(-v\d+(:\d+)?|:\d+)?(-latest)?$/;
const INFERENCE_PROFILE = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;

export function findPrice(table: PriceTable, plugin: string, model: string): PriceEntry | undefined {
  const models = table[plugin];
  if (!models) return undefined;
  const id = model.replace(INFERENCE_PROFILE, '');
  if (Object.hasOwn(models, id)) return models[id];
  let best: string | undefined;
  for (const known of Object.keys(models)) {
    if (id.startsWith(known) && VERSION_SUFFIX.test(id.slice(known.length)) && known.length > (best?.length ?? 0)) best = known;
  }
  // `*` prices every model of a plugin (the offline mock costs nothing).
  return best === undefined ? (Object.hasOwn(models, '*') ? models['*'] : undefined) : models[best];
}

/** The price of a target: its own `price:` wins; null when neither it nor the table knows. */
export function priceOf(table: PriceTable, target: { plugin: string; model: string; price?: Price }): Price | null {
  return target.price ?? findPrice(table, target.plugin, target.model) ?? null;
}

/** The table with an operator's additions and corrections (same shape as prices.json's `providers`) on top. */
export function extendPrices(base: PriceTable, extra: PriceTable): PriceTable {
  const merged: Record<string, Record<string, PriceEntry>> = {};
  for (const plugin of new Set([...Object.keys(base), ...Object.keys(extra)])) merged[plugin] = { ...base[plugin], ...extra[plugin] };
  return merged;
}

const isRate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Reads an operator's price file (prices.json's shape: `{ providers: { plugin: { model: entry } } }`), checking every rate. */
export async function loadPriceFile(path: string): Promise<PriceTable> {
  const doc = JSON.parse(await readFile(path, 'utf8')) as { providers?: unknown };
  const providers = doc.providers;
  if (!providers || typeof providers !== 'object') throw new Error(`${path}: expected an object with "providers"`);
  for (const [plugin, models] of Object.entries(providers as Record<string, Record<string, PriceEntry>>)) {
    for (const [model, entry] of Object.entries(models)) {
      const where = `${path}: providers.${plugin}.${model}`;
      if (!isRate(entry.input) || !isRate(entry.output)) throw new Error(`${where}: input and output must be numbers >= 0 (USD per million tokens)`);
      for (const field of ['cachedInput', 'cacheWrite'] as const) if (entry[field] !== undefined && !isRate(entry[field])) throw new Error(`${where}.${field}: must be a number >= 0`);
      if (typeof entry.source !== 'string' || typeof entry.date !== 'string') throw new Error(`${where}: name its source and date`);
    }
  }
  return providers as PriceTable;
}
