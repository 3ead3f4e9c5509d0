/**
 * The gateway's errors in Anthropic's envelope, `{"type":"error","error":{"type","message"}}`, with
 * Anthropic's status/type pairs (https://docs.anthropic.com/en/api/errors#http-errors), so the
 * official SDKs raise their own classes from the status (BadRequestError, AuthenticationError,
 * PermissionDeniedError, NotFoundError, RateLimitError, InternalServerError, OverloadedError, ...)
 * and retry what they retry (408, 409, 429, 5xx; `x-should-retry` overrides, so the gateway's
 * `x-should-retry: false` on a spent budget still holds).
 *
 * Every code of the catalogue is mapped (the Record type makes a missing one a compile error):
 * - 4xx statuses stay; Anthropic uses invalid_request_error "for other 4XX status codes" too.
 * - The gateway's 502s (an upstream failed, or refused the gateway's own credentials or model)
 *   are Anthropic's 500 api_error: Anthropic never answers 502, and to the client it is the
 *   service's fault either way.
 * - 503s (no target available, the state backend down, shutting down) are 529 overloaded_error:
 *   temporary, retry later, which is what Anthropic's clients do on 529.
 * - 504 stays, as timeout_error (the SDK's GatewayTimeoutError).
 * - A spent budget (insufficient_quota) stays 429, as rate_limit_error (Anthropic has no quota
 *   type on 429); the gateway's `x-should-retry: false` on it stops the SDK retrying.
 */
import { ERROR_CATALOGUE, type ErrorCode, type GatewayError } from '../../errors.ts';
import type { AnthropicErrorBody, AnthropicErrorType } from './types.ts';

export const ANTHROPIC_ERRORS: Readonly<Record<ErrorCode, { status: number; type: AnthropicErrorType }>> = {
  invalid_api_key: { status: 401, type: 'authentication_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  not_found: { status: 404, type: 'not_found_error' },
  response_not_found: { status: 404, type: 'not_found_error' },
  previous_response_not_found: { status: 400, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  missing_required_parameter: { status: 400, type: 'invalid_request_error' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  content_policy_violation: { status: 400, type: 'invalid_request_error' },
  upstream_bad_request: { status: 400, type: 'invalid_request_error' },
  bad_request: { status: 400, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'request_too_large' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  insufficient_quota: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_error: { status: 500, type: 'api_error' },
  upstream_auth_failed: { status: 500, type: 'api_error' },
  upstream_model_not_found: { status: 500, type: 'api_error' },
  limits_unavailable: { status: 529, type: 'overloaded_error' },
  store_unavailable: { status: 529, type: 'overloaded_error' },
  guardrail_unavailable: { status: 529, type: 'overloaded_error' },
  server_busy: { status: 529, type: 'overloaded_error' },
  provider_unavailable: { status: 529, type: 'overloaded_error' },
  shutting_down: { status: 529, type: 'overloaded_error' },
  timeout: { status: 504, type: 'timeout_error' },
};

/**
 * The status and body to answer with. The caller adds the `request-id` header (Anthropic's name
 * for it) and the error's own headers (Retry-After, x-should-retry); `requestId` also goes into
 * the body's `request_id`, as Anthropic's bodies carry it.
 */
export function anthropicErrorOf(error: GatewayError, options: { requestId?: string } = {}): { status: number; body: AnthropicErrorBody } {
  const pair = ANTHROPIC_ERRORS[error.code] ?? statusPair(error.status ?? ERROR_CATALOGUE.internal_error.status);
  const body: AnthropicErrorBody = { type: 'error', error: { type: pair.type, message: error.message } };
  // e.g. `error_code: thread_unsupported_request`, which the Anthropic SDK reads to fall back by itself.
  if (error.details) body.error.details = error.details;
  if (options.requestId) body.request_id = options.requestId;
  return { status: pair.status, body };
}

/** For a code added to the catalogue later and not yet to the table above (a test keeps them in step). */
function statusPair(status: number): { status: number; type: AnthropicErrorType } {
  if (status === 401) return { status, type: 'authentication_error' };
  if (status === 403) return { status, type: 'permission_error' };
  if (status === 404) return { status, type: 'not_found_error' };
  if (status === 413) return { status, type: 'request_too_large' };
  if (status === 429) return { status, type: 'rate_limit_error' };
  if (status < 500) return { status, type: 'invalid_request_error' };
  if (status === 503) return { status: 529, type: 'overloaded_error' };
  if (status === 504) return { status, type: 'timeout_error' };
  return { status: 500, type: 'api_error' };
}
