/**
 * What the log says once the gateway listens: the /v1 base URL, every model and where it goes,
 * and a curl to paste. In a cluster a worker composes it and the primary logs it once, when every
 * worker listens, adding how many there are to the headline.
 */
import type { KeyConfig } from './config/types.ts';
import type { Gateway } from './gateway.ts';
import { sha256Hex } from './runtime/keys.ts';

/**
 * The key of the example gateway.yaml (`${SWITCHYARD_DEV_KEY:-sk-switchyard-dev}`). It is public,
 * so the startup hint can show it and be pasted as is; any other key stays a placeholder.
 */
const EXAMPLE_DEV_KEY = 'sk-switchyard-dev';

export interface StartupBanner {
  fields: { url: string; models: string[]; config: string };
  /** `Switchyard listening on <url>/v1` (tests and scripts look for it). */
  headline: string;
  /** The lines after it: models and the curl. */
  details: string;
}

export function startupBanner(gateway: Gateway): StartupBanner {
  const runtime = gateway.runtime;
  const models = [...runtime.models.values()].map((m) => `${m.name} → ${m.targets.map((t) => `${t.provider}/${t.model}${t.unavailable ? ' (unavailable)' : ''}`).join(', ')}`);
  const base = `${gateway.url}/v1`;
  const demo = [...runtime.models.keys()][0];
  return {
    fields: { url: base, models: [...runtime.models.keys()], config: runtime.file },
    headline: `Switchyard listening on ${base}`,
    details: `\n  models:\n    ${models.join('\n    ')}\n  try:\n    curl ${base}/chat/completions -H "Authorization: Bearer ${exampleKey(runtime.config.keys, runtime.file)}" -H "Content-Type: application/json" -d '{"model":"${demo}","messages":[{"role":"user","content":"Hello"}]}'`,
  };
}

/** The key to show in the startup hint: the example's public dev key when configured, else a placeholder. */
function exampleKey(keys: readonly KeyConfig[], file: string): string {
  const digest = `sha256:${sha256Hex(EXAMPLE_DEV_KEY)}`;
  return keys.some((k) => k.key === EXAMPLE_DEV_KEY || k.keyHash === digest) ? EXAMPLE_DEV_KEY : `<a key from ${file}>`;
}
