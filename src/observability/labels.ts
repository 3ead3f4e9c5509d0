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

export function keyLabel(ctx: ExchangeView): string {
  return ctx.key?.name ?? NONE;
}

export function teamLabel(ctx: ExchangeView): string {
  return ctx.key?.team ?? NONE;
}

export const LIMIT_KINDS = ['requests', 'tokens', 'concurrency', 'budget', 'unpriced'] as const;

/**
 * The kind of the key's or team's limit that refused the request (governance leaves it on the
 * context as `refusal`), or undefined when none did. A target at its own limit is skipped like
 * a cooling one, and an upstream's own 429 is not the gateway's limit: neither is counted.
 */
export function refusedLimit(ctx: ExchangeView): string | undefined {
  const kind = ctx.refusal?.kind;
  if (kind === undefined) return undefined;
  return (LIMIT_KINDS as readonly string[]).includes(kind) ? kind : OTHER;
}
