/**
 * The gateway's errors in Google's envelope, a google.rpc.Status
 * (https://ai.google.dev/api/rest/v1beta/Status, https://cloud.google.com/apis/design/errors):
 * `{"error": {"code", "message", "status", "details"}}`, so the Google GenAI SDK raises its
 * ApiError with the status and Gemini CLI tells auth failures (401), quotas (429) and retryable
 * failures apart as it does against Google.
 *
 * - `status` is the canonical code for the HTTP status (400 INVALID_ARGUMENT, 401
 *   UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 5xx INTERNAL /
 *   UNAVAILABLE / DEADLINE_EXCEEDED). The HTTP status is the gateway's own.
 * - `details`: an ErrorInfo whose `reason` is the gateway's error code (domain
 *   `switchyard`, `param` in metadata when one is named), a RequestInfo with the request id, and
 *   a RetryInfo with the wait when the answer has a Retry-After (Gemini CLI waits that long).
 */
import type { GatewayError } from '../../errors.ts';
import type { ErrorAnswer } from '../../pipeline/exchange.ts';

const CANONICAL: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function statusName(httpStatus: number): string {
  return CANONICAL[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

const TYPE = 'type.googleapis.com/google.rpc.';

export function googleErrorOf(error: GatewayError, requestId: string): { status: number; body: { error: Record<string, unknown> } } {
  const info: Record<string, unknown> = { '@type': `${TYPE}ErrorInfo`, reason: error.code.toUpperCase(), domain: 'switchyard' };
  if (error.param) info.metadata = { param: error.param };
  const details: Array<Record<string, unknown>> = [info, { '@type': `${TYPE}RequestInfo`, requestId }];
  const retryAfter = Number(error.headers?.['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) details.push({ '@type': `${TYPE}RetryInfo`, retryDelay: `${retryAfter}s` });
  return { status: error.status, body: { error: { code: error.status, message: error.message, status: statusName(error.status), details } } };
}

/** The protocol's `error`: Google's envelope, and the request id beside the x-request-id header. */
export function geminiError(error: GatewayError, requestId: string): ErrorAnswer {
  return googleErrorOf(error, requestId);
}
