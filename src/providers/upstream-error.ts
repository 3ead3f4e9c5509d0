/**
 * Failed attempts against a provider: one class, four named kinds, and one table that decides
 * for every upstream status what the client sees, whether a retry may help, whether the target
 * is unhealthy (cooldown) and whether the client is at fault (no failover).
 */
import { GatewayError, type ErrorCode } from '../errors.ts';
import type { FailureCategory, UpstreamFailure } from '../plugin-api.ts';

export type UpstreamErrorKind = 'http' | 'connect' | 'timeout' | 'protocol';

/** How one kind of upstream failure is handled. */
export interface FailureRule {
  /** The catalogued error the client gets when this was the last attempt. */
  code: ErrorCode;
  /** Worth another try on the same target (subject to the alias's `retryOn`). */
  retryable: boolean;
  /** Says the target is unhealthy: counts towards its cooldown. */
  targetFault: boolean;
  /** The client's own mistake as the provider judged it: neither retry nor failover helps. */
  clientFault: boolean;
}

const rule = (code: ErrorCode, retryable: boolean, targetFault: boolean, clientFault: boolean): FailureRule => ({ code, retryable, targetFault, clientFault });

/**
 * Upstream HTTP status → handling. 401/402/403/404 are the operator's problem with that provider
 * (credentials, billing, a model name): not retried, but another target may serve. Statuses not
 * listed fall back to their class (`4xx`, `5xx`).
 */
export const HTTP_FAILURES: Readonly<Record<string, FailureRule>> = {
  400: rule('upstream_bad_request', false, false, true),
  401: rule('upstream_auth_failed', false, false, false),
  402: rule('upstream_error', false, false, false),
  403: rule('upstream_auth_failed', false, false, false),
  404: rule('upstream_model_not_found', false, false, false),
  408: rule('timeout', true, true, false),
  409: rule('upstream_error', true, false, false),
  429: rule('rate_limit_exceeded', true, true, false),
  503: rule('provider_unavailable', true, true, false),
  504: rule('timeout', true, true, false),
  529: rule('provider_unavailable', true, true, false),
  '4xx': rule('upstream_bad_request', false, false, true),
  '5xx': rule('upstream_error', true, true, false),
};

/** Failures without an HTTP answer. */
export const TRANSPORT_FAILURES: Readonly<Record<Exclude<UpstreamErrorKind, 'http'>, FailureRule>> = {
  connect: rule('upstream_error', true, true, false),
  timeout: rule('timeout', true, true, false),
  protocol: rule('upstream_error', true, true, false),
};

/** The rule for an HTTP status: its own row, else its class's. */
export function httpRule(status: number): FailureRule {
  return HTTP_FAILURES[status] ?? (status >= 500 ? HTTP_FAILURES['5xx'] : HTTP_FAILURES['4xx']);
}

const CONTEXT_WINDOW = /context[ _-]?(length|window)|maximum context|prompt is too long|input is too long|too many (input )?tokens|exceeds the maximum number of tokens|reduce the length/i;
const CONTENT_POLICY = /content[ _-]?(management[ _-]?)?polic|content[ _-]?filter|safety (system|filter)|responsible ai/i;

/** Recognises context-window and content-policy refusals across providers' wordings. */
export function categorize(failure: UpstreamFailure): FailureCategory | undefined {
  if (failure.category) return failure.category;
  const text = `${failure.code ?? ''} ${failure.message}`;
  if (CONTEXT_WINDOW.test(text)) return 'context_window';
  if (CONTENT_POLICY.test(text)) return 'content_policy';
  return undefined;
}

interface UpstreamErrorInit {
  provider: string;
  kind: UpstreamErrorKind;
  status: number;
  failure: UpstreamFailure;
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * A failed attempt against one provider. Make one with a named constructor: `http` (the provider
 * answered non-2xx, or its stream carried an error event), `connect`, `timeout` or `protocol`
 * (the answer could not be understood). The retry stage reads `rule`; `toClientError()` turns
 * the last one into the catalogued error the client sees.
 */
export class UpstreamError extends Error {
  readonly provider: string;
  readonly kind: UpstreamErrorKind;
  /** The upstream HTTP status (0 when no response arrived). */
  readonly status: number;
  readonly failure: UpstreamFailure;
  readonly retryAfterMs?: number;
  readonly rule: FailureRule;
  /** The rule's verdict unless the provider said otherwise (`failure.retryable`). */
  readonly retryable: boolean;
  readonly category?: FailureCategory;

  private constructor(init: UpstreamErrorInit) {
    super(`${init.provider}: ${init.failure.message}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.provider = init.provider;
    this.kind = init.kind;
    this.status = init.failure.status ?? init.status;
    this.failure = init.failure;
    this.retryAfterMs = init.retryAfterMs ?? init.failure.retryAfterMs;
    this.rule = init.kind === 'http' ? httpRule(this.status) : TRANSPORT_FAILURES[init.kind];
    this.retryable = init.failure.retryable ?? this.rule.retryable;
    this.category = init.kind === 'http' ? categorize(init.failure) : undefined;
  }

  /** The provider answered with an error status (or an error event inside a stream, with its status). */
  static http(provider: string, status: number, failure: UpstreamFailure, retryAfterMs?: number): UpstreamError {
    return new UpstreamError({ provider, kind: 'http', status, failure, retryAfterMs });
  }

  /** The provider could not be reached, or the connection broke. */
  static connect(provider: string, message: string, cause?: unknown): UpstreamError {
    return new UpstreamError({ provider, kind: 'connect', status: 0, failure: { message }, cause });
  }

  /** A time limit ran out (connect, first byte, idle gap or the whole attempt). */
  static timeout(provider: string, message: string, cause?: unknown): UpstreamError {
    return new UpstreamError({ provider, kind: 'timeout', status: 0, failure: { message }, cause });
  }

  /** The provider answered something the gateway cannot understand (bad JSON, a truncated stream). */
  static protocol(provider: string, message: string, cause?: unknown): UpstreamError {
    return new UpstreamError({ provider, kind: 'protocol', status: 200, failure: { message }, cause });
  }

  /** Not the client's mistake and not a refusal about the request: failover may help. */
  get clientFault(): boolean {
    return this.rule.clientFault && !this.failure.retryable;
  }

  get targetFault(): boolean {
    return this.rule.targetFault;
  }

  /** The error the client sees when this was the last attempt. `redact` scrubs configured secrets. */
  toClientError(redact: (text: string) => string = (t) => t): GatewayError {
    const { provider, status, failure, rule } = this;
    const said = redact(failure.message);
    if (this.kind !== 'http') {
      const message = this.kind === 'connect' ? `could not reach the provider (${said})` : this.kind === 'protocol' ? `the provider sent a malformed answer (${said})` : said;
      return new GatewayError(rule.code, `${provider}: ${message}`, { cause: this });
    }
    if (rule.code === 'upstream_auth_failed') {
      // The provider refused the gateway's credentials: an operator problem, not the client's.
      // Its message is not echoed: it may quote (part of) the key.
      return new GatewayError(rule.code, `${provider} rejected the gateway's credentials (HTTP ${status}); the gateway operator must fix providers.${provider} in gateway.yaml`, { cause: this });
    }
    const withCode = failure.code ? `${said} (${provider} code: ${redact(String(failure.code))})` : said;
    const retryAfter = this.retryAfterMs === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(this.retryAfterMs / 1000))) };
    switch (rule.code) {
      case 'upstream_bad_request':
        return new GatewayError(rule.code, `${provider}: ${withCode}`, { param: clientParam(failure.param, redact), cause: this });
      case 'rate_limit_exceeded':
      case 'provider_unavailable':
        return new GatewayError(rule.code, `${provider}: ${withCode}`, { headers: retryAfter, cause: this });
      case 'upstream_error':
        return new GatewayError(rule.code, `${provider}: ${withCode} (HTTP ${status}${status === 402 ? ": the gateway's account with the provider" : ''})`, { cause: this });
      default:
        return new GatewayError(rule.code, `${provider}: ${withCode}`, { cause: this });
    }
  }
}

/** Something that names a request field (`messages[0].content`), not free text. */
const FIELD_PATH = /^[A-Za-z_][\w.-]*(\[\d+\])*(\.[A-Za-z_][\w-]*(\[\d+\])*)*$/;

/**
 * The provider's `param`, passed on only when it looks like a field path and holds no secret:
 * anything else may be an echo of the request (a proxy once put the Authorization value there).
 */
function clientParam(param: string | null | undefined, redact: (text: string) => string): string | null {
  if (typeof param !== 'string' || param.length > 128 || !FIELD_PATH.test(param)) return null;
  return redact(param) === param ? param : null;
}

/** RFC 9110 delay-seconds (1*DIGIT); the `-ms` variant may carry a fraction. */
const DELAY = /^\s*\d+(\.\d+)?\s*$/;

/** `retry-after-ms` (OpenAI, Azure), else `retry-after` in seconds or as an HTTP date; empty or junk values are no wait at all. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && DELAY.test(ms)) return Number(ms);
  const after = first(headers['retry-after']);
  if (after === undefined || after.trim() === '') return undefined;
  if (DELAY.test(after)) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
