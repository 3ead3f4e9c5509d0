/**
 * Metric label values, guarded: they come only from gateway.yaml names (aliases, providers,
 * targets, keys, teams) and fixed enums, never from what a client sent. A model nobody
 * configured is counted under one value, so no client can grow the number of series.
 */
import { ERROR_CATALOGUE } from '../errors.ts';
import type { ModelRoute, RouteTarget } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';

/** A value the config does not name (an unknown model asked for, an unknown error code). */
export const OTHER = '_other';
/** Nothing to name (no key presented, no team, no provider reached). */
export const NONE = '_none';

/** The alias the request was routed to; an alias the config names when routing did not happen yet; else OTHER. */
export function modelLabel(ctx: ExchangeView, models: ReadonlyMap<string, ModelRoute> | undefined): string {
  if (ctx.route) return ctx.route.name;
  const asked = ctx.body?.model;
  return typeof asked === 'string' && models?.has(asked) ? asked : OTHER;
}

/** The provider of the last attempt (its name in gateway.yaml), NONE when no attempt started. */
export function providerLabel(ctx: ExchangeView): string {
  return ctx.attempt?.target.provider ?? NONE;
}

/** A target as `provider/model`, both from gateway.yaml: unique within an alias. */
export function targetLabel(target: Pick<RouteTarget, 'provider' | 'model'>): string {
  return `${target.provider}/${target.model}`;
}

/** `ok`, or the catalogue code of the error the client got (in-stream errors included). */
export function codeLabel(ctx: ExchangeView): string {
  const error = ctx.streamError ?? ctx.error;
  if (!error) return 'ok';
  return Object.hasOwn(ERROR_CATALOGUE, error.code) ? error.code : OTHER;
}

/** HTTP status sent (499: the client left); 0 when none was set. */
export function statusLabel(ctx: ExchangeView): string {
  const status = ctx.status ?? 0;
  return Number.isInteger(status) && status >= 0 && status < 600 ? String(status) : OTHER;
}

/** The key's name in gateway.yaml, once `auth` knew it (an expired key is refused before that: NONE). */
export function keyLabel(ctx: ExchangeView): string {
  return ctx.key?.name ?? NONE;
}

export function teamLabel(ctx: ExchangeView): string {
  return ctx.key?.team ?? NONE;
}

/** Why the gateway itself refused a request: a limit (named as in gateway.yaml's `limits:`), the key, or the state backend. */
export const REFUSAL_REASONS = ['rpm', 'tpm', 'concurrency', 'budget', 'unpriced', 'invalid_key', 'model_not_allowed', 'state_unavailable', 'bodies_in_flight', 'limit'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];
/** Whose rule refused it. */
export const REFUSAL_SCOPES = ['key', 'team', 'target', 'gateway'] as const;
export type RefusalScope = (typeof REFUSAL_SCOPES)[number];

export interface RefusalLabels {
  reason: RefusalReason;
  scope: RefusalScope;
}

/** governance's limit kinds → the names `limits:` gives them. */
const REASON_OF_KIND: Record<string, RefusalReason> = { requests: 'rpm', tokens: 'tpm', concurrency: 'concurrency', budget: 'budget', unpriced: 'unpriced' };

/**
 * Why the gateway refused the request, or undefined when it did not. A key's or team's limit
 * is on the context as `refusal` (its scope name says whose); an unknown or expired key, a
 * model the key may not use and the state backend down (`onUnavailable: closed`) are known by
 * their error code. When every target was skipped at its own limit the answer is a 429 with no
 * attempt sent and no `refusal`: scope `target`, and the kind only where the error says it
 * (`tokens`), else `limit` (rpm and concurrency answer alike). An upstream's own 429 is not a
 * refusal.
 */
export function refusalLabels(ctx: ExchangeView): RefusalLabels | undefined {
  const refusal = ctx.refusal;
  if (refusal) return { reason: REASON_OF_KIND[refusal.kind] ?? 'limit', scope: scopeOf(refusal.scope) };
  const error = ctx.error;
  if (!error) return undefined;
  switch (error.code) {
    case 'invalid_api_key':
      return INVALID_KEY;
    case 'limits_unavailable':
      return STATE_UNAVAILABLE;
    case 'server_busy':
      return BODIES_IN_FLIGHT;
    case 'model_not_allowed':
      // Every target skipped: the key's (or team's) budget cannot be kept on an unpriced target.
      return targetsAllSkipped(ctx) ? UNPRICED : MODEL_NOT_ALLOWED;
    case 'rate_limit_exceeded':
      if (!targetsAllSkipped(ctx)) return undefined;
      return error.type === 'tokens' ? TARGET_TPM : TARGET_LIMIT;
    default:
      return undefined;
  }
}

// Frozen and shared: the label objects are made once, not per refused request.
const INVALID_KEY: RefusalLabels = Object.freeze({ reason: 'invalid_key', scope: 'key' });
const STATE_UNAVAILABLE: RefusalLabels = Object.freeze({ reason: 'state_unavailable', scope: 'key' });
const MODEL_NOT_ALLOWED: RefusalLabels = Object.freeze({ reason: 'model_not_allowed', scope: 'key' });
const BODIES_IN_FLIGHT: RefusalLabels = Object.freeze({ reason: 'bodies_in_flight', scope: 'gateway' });
const UNPRICED: RefusalLabels = Object.freeze({ reason: 'unpriced', scope: 'key' });
const TARGET_TPM: RefusalLabels = Object.freeze({ reason: 'tpm', scope: 'target' });
const TARGET_LIMIT: RefusalLabels = Object.freeze({ reason: 'limit', scope: 'target' });

/** `key:ci` → key; governance names every scope `<kind>:<name>`. */
function scopeOf(name: string): RefusalScope {
  const kind = name.slice(0, name.indexOf(':'));
  return kind === 'team' || kind === 'target' ? kind : 'key';
}

/** Targets were tried and every one was skipped (cooling or at its limit): nothing went upstream. */
function targetsAllSkipped(ctx: ExchangeView): boolean {
  return ctx.attempts.length > 0 && ctx.attempts.every((a) => a.outcome === 'skipped');
}

/**
 * Request fields the ways in are known to drop (Messages, chat, Responses and Gemini names): a
 * dropped field is counted under its top-level name when listed here, else OTHER, so that a
 * client's unknown fields cannot grow the number of series. The log line names the field itself.
 */
export const DROPPED_FIELD_NAMES: ReadonlySet<string> = new Set([
  // Anthropic Messages (Claude Code, the tool runner)
  'context_management',
  'thread',
  'container',
  'mcp_servers',
  'inference_geo',
  'cache_control',
  'thinking',
  'output_config',
  'top_k',
  // Other servers' sampling parameters, dropped for OpenAI's own API (plugins/openai/server.ts)
  'min_p',
  'repetition_penalty',
  'service_tier',
  'metadata',
  'system',
  // OpenAI chat and Responses (Codex)
  'client_metadata',
  'tools',
  'tool_choice',
  'messages',
  'input',
  'include',
  'store',
  'reasoning',
  'reasoning_effort',
  'verbosity',
  'prompt_cache_key',
  'safety_identifier',
  'web_search_options',
  'prediction',
  'audio',
  'modalities',
  'seed',
  'n',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'presence_penalty',
  'frequency_penalty',
  'response_format',
  'parallel_tool_calls',
  'user',
  'stream',
  'stream_options',
  'text',
  'truncation',
  'background',
  'previous_response_id',
  'conversation',
  // Gemini
  'contents',
  'requests',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'toolConfig',
  'labels',
]);

/** A dropped field's label: its top-level name (`tools[8]` → tools, `thinking.type` → thinking) when known, else OTHER. */
export function droppedFieldLabel(field: string): string {
  const end = field.search(/[[.]/);
  const top = end === -1 ? field : field.slice(0, end);
  return DROPPED_FIELD_NAMES.has(top) ? top : OTHER;
}
