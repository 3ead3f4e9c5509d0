/**
 * Google's error body (a google.rpc.Status: `{"error": {"code", "message", "status", "details"}}`,
 * sometimes wrapped in a one-element array) → UpstreamFailure.
 *
 * - `message` is Google's, `code` its canonical status name (INVALID_ARGUMENT, NOT_FOUND, ...).
 * - An invalid or expired API key is a 400 whose ErrorInfo reason is API_KEY_*: it is the
 *   gateway's credential, so it counts as 401 (the core answers 502 upstream_auth_failed and
 *   never echoes the message).
 * - RetryInfo's `retryDelay` ("3s", "0.5s") becomes the wait when no Retry-After header came.
 * - A QuotaFailure on a per-day quota will not clear by retrying this target: not retryable
 *   (the core moves on to the next target).
 * - A body that is not JSON (an HTML page from a proxy) is kept as trimmed text.
 */
import type { UpstreamFailure } from '../../plugin-api.ts';
import type { GoogleStatus } from './native.ts';

export function readGoogleError(status: number, body: unknown): UpstreamFailure {
  const envelope = Array.isArray(body) ? body[0] : body;
  const error = envelope && typeof envelope === 'object' ? (envelope as { error?: GoogleStatus }).error : undefined;
  if (!error || typeof error !== 'object') {
    const text = typeof body === 'string' ? body.trim() : '';
    return { message: text ? text.slice(0, 500) : `HTTP ${status}` };
  }
  const failure: UpstreamFailure = {
    message: typeof error.message === 'string' && error.message ? error.message : (error.status ?? `HTTP ${status}`),
    code: error.status ?? (error.code != null ? String(error.code) : null),
  };
  for (const detail of Array.isArray(error.details) ? error.details : []) {
    const type = String(detail['@type'] ?? '');
    if (type.endsWith('google.rpc.ErrorInfo') && typeof detail.reason === 'string' && detail.reason.startsWith('API_KEY_') && status === 400) failure.status = 401;
    if (type.endsWith('google.rpc.RetryInfo')) {
      const ms = durationMs(detail.retryDelay);
      if (ms !== undefined) failure.retryAfterMs = ms;
    }
    if (type.endsWith('google.rpc.QuotaFailure') && perDay(detail.violations)) failure.retryable = false;
  }
  return failure;
}

/** A google.protobuf.Duration in JSON ("3s", "1.5s", "0.250s") in milliseconds. */
export function durationMs(value: unknown): number | undefined {
  const m = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value.trim()) : null;
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}

function perDay(violations: unknown): boolean {
  return Array.isArray(violations) && violations.some((v) => /PerDay/i.test(String((v as { quotaId?: unknown })?.quotaId ?? '')));
}
