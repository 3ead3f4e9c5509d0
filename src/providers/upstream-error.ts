import { GatewayError } from '../errors.ts';

/** What a provider's native error body says, in its own words. */
export interface UpstreamFailure {
  message: string;
  /** The provider's own error code or type, if it has one (kept in the client message). */
  code?: string | null;
  /** The request field the provider blames, when it says. */
  param?: string | null;
  /** Override the status-based retry decision (e.g. a 400 that is really "overloaded"). */
  retryable?: boolean;
  /** Client-visible status override for odd providers (e.g. auth failure reported as 400). */
  status?: number;
  /** What kind of refusal this is, for `fallbacks:` (guessed from the message when unset). */
  category?: FailureCategory;
  /** A wait the provider asked for in its body (used when no Retry-After header came). */
  retryAfterMs?: number;
}

export type FailureCategory = 'context_window' | 'content_policy';

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

export type UpstreamErrorKind = 'http' | 'connect' | 'timeout' | 'protocol';

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/**
 * A failed attempt against one provider. The retry stage reads `retryable` and `retryAfterMs`;
 * `toClientError()` turns the last one into the catalogued error the client sees.
 */
export class UpstreamError extends Error {
  readonly provider: string;
  readonly kind: UpstreamErrorKind;
  /** The upstream HTTP status (0 when no response arrived). */
  readonly status: number;
  readonly failure: UpstreamFailure;
  readonly retryAfterMs?: number;
  readonly retryable: boolean;
  readonly category?: FailureCategory;

  constructor(provider: string, kind: UpstreamErrorKind, status: number, failure: UpstreamFailure, retryAfterMs?: number, cause?: unknown) {
    super(`${provider}: ${failure.message}`, cause === undefined ? undefined : { cause });
    this.name = 'UpstreamError';
    this.provider = provider;
    this.kind = kind;
    this.status = failure.status ?? status;
    this.failure = failure;
    this.retryAfterMs = retryAfterMs;
    this.retryable = failure.retryable ?? (kind !== 'http' || this.status >= 500 || RETRYABLE_STATUS.has(this.status));
    this.category = kind === 'http' ? categorize(failure) : undefined;
  }

  /** The error the client sees when this was the last attempt. `redact` scrubs configured secrets. */
  toClientError(redact: (text: string) => string = (t) => t): GatewayError {
    const { provider, status, failure } = this;
    const said = redact(failure.message);
    const withCode = failure.code ? `${said} (${provider} code: ${redact(String(failure.code))})` : said;
    const retryAfter = this.retryAfterMs === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(this.retryAfterMs / 1000))) };
    switch (this.kind) {
      case 'connect':
        return new GatewayError('upstream_error', `${provider}: could not reach the provider (${said})`, { cause: this });
      case 'timeout':
        return new GatewayError('timeout', `${provider}: ${said}`, { cause: this });
      case 'protocol':
        return new GatewayError('upstream_error', `${provider}: the provider sent a malformed answer (${said})`, { cause: this });
      case 'http':
        break;
    }
    if (status === 401 || status === 403) {
      // The provider refused the gateway's credentials: an operator problem, not the client's.
      // Its message is not echoed: it may quote (part of) the key.
      return new GatewayError('upstream_auth_failed', `${provider} rejected the gateway's credentials (HTTP ${status}); the gateway operator must fix providers.${provider} in gateway.yaml`, { cause: this });
    }
    if (status === 404) return new GatewayError('upstream_model_not_found', `${provider}: ${withCode}`, { cause: this });
    if (status === 402) return new GatewayError('upstream_error', `${provider}: ${withCode} (HTTP 402: the gateway's account with the provider)`, { cause: this });
    if (status === 408 || status === 504) return new GatewayError('timeout', `${provider}: ${withCode}`, { cause: this });
    if (status === 429) return new GatewayError('rate_limit_exceeded', `${provider}: ${withCode}`, { headers: retryAfter, cause: this });
    if (status === 503 || status === 529) return new GatewayError('provider_unavailable', `${provider}: ${withCode}`, { headers: retryAfter, cause: this });
    if (status >= 400 && status < 500 && status !== 409) {
      return new GatewayError('upstream_bad_request', `${provider}: ${withCode}`, { param: failure.param ?? null, cause: this });
    }
    return new GatewayError('upstream_error', `${provider}: ${withCode} (HTTP ${status})`, { cause: this });
  }
}

/** `retry-after-ms` (OpenAI, Azure), else `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const after = first(headers['retry-after']);
  if (after === undefined) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
