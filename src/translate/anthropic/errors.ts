/**
 * Anthropic error bodies: {"type": "error", "error": {"type", "message"}, "request_id"}. The error
 * type becomes the failure's code; request_id is not echoed to clients. HTTP 529 (overloaded) is
 * retryable like any 5xx; Anthropic's `x-should-retry` header, when present, decides instead.
 */
import type { UpstreamFailure } from '../../plugin-api.ts';
import type { AnthropicErrorBody } from './native.ts';
import type { Headers } from '../../providers/http-body.ts';

/** HTTP status Anthropic uses for each error type (for errors that arrive inside a stream). */
const STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function statusOf(type: string | undefined): number {
  return (type && STATUS[type]) || 500;
}

export function failureOf(body: unknown): UpstreamFailure {
  const error = (body as Partial<AnthropicErrorBody> | undefined)?.error;
  if (error && typeof error === 'object') return { message: error.message || error.type || 'unknown error', code: error.type ?? null };
  if (typeof body === 'string' && body.trim()) return { message: body.trim().slice(0, 500) };
  return { message: 'unknown error' };
}

export function readAnthropicError(status: number, body: unknown, headers: Headers): UpstreamFailure {
  const failure = failureOf(body);
  // Anthropic says explicitly whether a retry may help.
  const hint = headers['x-should-retry'];
  if (hint === 'true' || hint === 'false') failure.retryable = hint === 'true';
  if (failure.message === 'unknown error') failure.message = `HTTP ${status}`;
  return failure;
}
