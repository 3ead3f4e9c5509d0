/**
 * The built-in pipeline stages, declared once. The default pipeline, the loader's order and
 * presence checks, plugin resolution by name and the README's list all read this table.
 *
 * - `required`: a pipeline without it cannot answer.
 * - `ordered`: its position relative to the other ordered built-ins is fixed; custom stages may
 *   go anywhere between them. Every built-in appears at most once.
 */
import type { StagePlugin } from '../plugin-api.ts';
import auth from '../stages/auth.ts';
import validate from '../stages/validate.ts';
import route from '../stages/route.ts';
import cache from '../stages/cache.ts';
import guardrails from '../stages/guardrails.ts';
import retry from '../stages/retry.ts';
import transformResponse from '../stages/transform-response.ts';
import log from '../stages/log.ts';

export interface BuiltinStage {
  name: string;
  plugin: StagePlugin;
  required: boolean;
  ordered: boolean;
  /** Refuses every request unless gateway.yaml defines keys (the loader says so). */
  needsKeys: boolean;
  /** One line for the docs. */
  does: string;
  /** Not in the default pipeline: runs only where gateway.yaml's `pipeline:` names it. */
  optIn?: boolean;
}

export const BUILTIN_STAGES: readonly BuiltinStage[] = Object.freeze([
  { name: 'auth', plugin: auth as StagePlugin, required: false, ordered: true, needsKeys: true, does: 'bearer key → key identity; model scopes (401/403)' },
  { name: 'validate', plugin: validate as StagePlugin, required: false, ordered: true, needsKeys: false, does: 'the body against the Chat Completions schema (400 naming the field)' },
  { name: 'route', plugin: route as StagePlugin, required: true, ordered: true, needsKeys: false, does: 'model alias → its targets (404 when unknown)' },
  {
    name: 'guardrails',
    plugin: guardrails as unknown as StagePlugin,
    required: false,
    ordered: true,
    needsKeys: false,
    optIn: true,
    does: 'PII, secret and custom rules on the request and the answer: block, redact (and restore), log',
  },
  {
    name: 'cache',
    plugin: cache as unknown as StagePlugin,
    required: false,
    ordered: true,
    needsKeys: false,
    optIn: true,
    does: 'exact response cache per key, team or everyone: a repeated request answered without a provider, free',
  },
  { name: 'retry', plugin: retry as StagePlugin, required: false, ordered: true, needsKeys: false, does: 'routing strategy, retries, backoff, cooldowns, fallbacks; one attempt per try' },
  { name: 'transform-response', plugin: transformResponse as StagePlugin, required: true, ordered: true, needsKeys: false, does: "the provider's answer → OpenAI completion or chunks, per attempt" },
  { name: 'log', plugin: log as StagePlugin, required: false, ordered: false, needsKeys: false, does: 'one structured line per request, after the response' },
]);

export const BUILTIN_STAGE_NAMES: readonly string[] = BUILTIN_STAGES.map((s) => s.name);

/** The pipeline when gateway.yaml has no `pipeline:`: every built-in but the opt-in ones, in table order. */
export const DEFAULT_PIPELINE: readonly string[] = BUILTIN_STAGES.filter((s) => !s.optIn).map((s) => s.name);

export function builtinStage(name: string): BuiltinStage | undefined {
  return BUILTIN_STAGES.find((s) => s.name === name);
}
