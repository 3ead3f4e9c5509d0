/**
 * The one catalogue of errors a client can see. Every response body is the OpenAI envelope
 * {"error":{"message","type","param","code"}}, so the official SDKs raise their own classes
 * (AuthenticationError, NotFoundError, ...) from the status. 4xx means the client's mistake;
 * anything the gateway or an upstream got wrong is 5xx.
 */

export interface CatalogueEntry {
  status: number;
  type: string;
  /** Short description, also rendered into the README's error table. */
  summary: string;
}

export const ERROR_CATALOGUE = {
  invalid_api_key: { status: 401, type: 'authentication_error', summary: 'Missing or unknown gateway key in `Authorization: Bearer`.' },
  model_not_allowed: { status: 403, type: 'permission_error', summary: 'The key exists but may not use this model (its `models` globs).' },
  model_not_found: { status: 404, type: 'invalid_request_error', summary: 'No model alias of that name in `gateway.yaml`.' },
  not_found: { status: 404, type: 'invalid_request_error', summary: 'Unknown URL.' },
  response_not_found: {
    status: 404,
    type: 'invalid_request_error',
    summary: "No stored response (or item) of that id for this key: never stored, expired, deleted, or another key's (`state.responses.scope`).",
  },
  previous_response_not_found: { status: 400, type: 'invalid_request_error', summary: '`previous_response_id` names no stored response this key may chain (or one before it in its chain expired).' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', summary: 'Known URL, wrong HTTP method (see `Allow`).' },
  invalid_json: { status: 400, type: 'invalid_request_error', summary: 'The body is not valid JSON.' },
  invalid_request: { status: 400, type: 'invalid_request_error', summary: 'The body breaks the Chat Completions schema; `param` names the field.' },
  missing_required_parameter: { status: 400, type: 'invalid_request_error', summary: 'A required field (`model`, `messages`) is absent; `param` names it.' },
  unsupported_parameter: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'The provider serving the model cannot honour this parameter (`param`); set `dropUnsupportedParams: true` to drop it instead.',
  },
  content_policy_violation: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'A guardrail blocked the request or the answer; the message names the rule and the kind of thing found, never the text.',
  },
  upstream_bad_request: { status: 400, type: 'invalid_request_error', summary: 'The provider rejected the request as invalid; its message is kept, prefixed by the provider name.' },
  bad_request: { status: 400, type: 'invalid_request_error', summary: 'The HTTP request itself is malformed (request line, headers, framing); the connection is closed.' },
  request_timeout: {
    status: 408,
    type: 'invalid_request_error',
    summary: 'The request (headers: `server.headersTimeoutMs`, whole request: `server.requestTimeoutMs`) arrived too slowly; the connection is closed.',
  },
  headers_too_large: { status: 431, type: 'invalid_request_error', summary: 'The request headers are larger than the server accepts; the connection is closed.' },
  request_too_large: { status: 413, type: 'invalid_request_error', summary: 'The body is larger than `server.bodyLimit`.' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', summary: 'The body is not `application/json`.' },
  rate_limit_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    summary: "Over a key's, team's or provider's limit (`type` `requests` or `tokens`, as OpenAI says), or every target was rate limited upstream; `Retry-After` says when to come back.",
  },
  insufficient_quota: { status: 429, type: 'insufficient_quota', summary: "The key's or team's budget for the period is spent; `x-should-retry: false`." },
  internal_error: { status: 500, type: 'server_error', summary: 'A bug in the gateway or a plugin; the log line has the details.' },
  upstream_error: { status: 502, type: 'upstream_error', summary: 'The provider failed (5xx, reset connection, malformed answer) on every attempt.' },
  upstream_auth_failed: { status: 502, type: 'upstream_error', summary: "The provider refused the gateway's own credentials: a configuration problem, not the client's." },
  upstream_model_not_found: { status: 502, type: 'upstream_error', summary: 'The provider does not know the model a target names: a configuration problem.' },
  limits_unavailable: {
    status: 503,
    type: 'service_unavailable_error',
    summary: 'The shared state backend (Redis) cannot be reached and `state.onUnavailable` is `closed`: keys with limits or budgets wait until it is back.',
  },
  server_busy: {
    status: 503,
    type: 'service_unavailable_error',
    summary: 'The request bodies the gateway is receiving and holding reached `server.inFlightBodyLimit`; the body was not read; `Retry-After` says when to try again.',
  },
  store_unavailable: { status: 503, type: 'service_unavailable_error', summary: 'Stored responses cannot be read now: the state backend (Redis, the state file) is unavailable.' },
  guardrail_unavailable: { status: 503, type: 'service_unavailable_error', summary: "A guardrail's webhook failed or did not answer in time, and its rule fails closed (`onError: block`)." },
  provider_unavailable: { status: 503, type: 'service_unavailable_error', summary: 'Every target of the alias is unavailable (e.g. its provider key is not set) or overloaded.' },
  shutting_down: {
    status: 503,
    type: 'service_unavailable_error',
    summary: 'The gateway is shutting down and its grace period (`server.shutdownGraceMs`) ended; sent inside a stream that was still running.',
  },
  timeout: { status: 504, type: 'timeout_error', summary: 'The provider did not answer in time on any attempt.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** An error meant for the client. Only these leave the gateway; anything else becomes internal_error. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers?: Record<string, string>;
  /** Machine-readable details a protocol's envelope carries (Anthropic's `error.details`, e.g. `error_code`); never client input. */
  readonly details?: Readonly<Record<string, unknown>>;

  /** `type` overrides the catalogue's where OpenAI itself varies it (rate limits: `requests` or `tokens`). */
  constructor(code: ErrorCode, message: string, opts: { param?: string | null; headers?: Record<string, string>; cause?: unknown; type?: string; details?: Readonly<Record<string, unknown>> } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    const entry: CatalogueEntry = ERROR_CATALOGUE[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = entry.status;
    this.type = opts.type ?? entry.type;
    this.param = opts.param ?? null;
    this.headers = opts.headers;
    if (opts.details) this.details = opts.details;
  }

  /**
   * This error with configured secrets scrubbed from the parts that may quote client input (a
   * model name, a field path): a client that sends a key where it does not belong never sees
   * it echoed, nor does the log.
   */
  redacted(redact: (text: string) => string): GatewayError {
    const message = redact(this.message);
    const param = this.param === null ? null : redact(this.param);
    if (message === this.message && param === this.param) return this;
    return new GatewayError(this.code, message, { param, headers: this.headers, type: this.type, cause: this.cause, details: this.details });
  }

  toJSON(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

/** Normalises anything thrown into a client-safe error: no stack traces, no foreign messages. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal_error', 'The gateway failed to handle this request; see the gateway log for its request id.', { cause: err });
}
