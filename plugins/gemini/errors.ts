/** Google's error envelope: {"error": {"code", "message", "status", "details": [...]}}. */
import type { UpstreamFailure } from '../../src/providers/upstream-error.ts';

interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string }>;
}

export function readGoogleError(status: number, body: unknown): UpstreamFailure {
  const error = (body as { error?: GoogleError } | undefined)?.error;
  if (!error || typeof error !== 'object') {
    return { message: typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : `HTTP ${status}` };
  }
  const failure: UpstreamFailure = { message: error.message || error.status || `HTTP ${status}`, code: error.status ?? null };
  for (const d of error.details ?? []) {
    // An invalid key is reported as 400 INVALID_ARGUMENT: it is the gateway's credential, not the client's request.
    if (d.reason === 'API_KEY_INVALID') failure.status = 401;
    const delay = d['@type']?.endsWith('google.rpc.RetryInfo') ? /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay ?? '') : null;
    if (delay) failure.retryAfterMs = Math.round(Number(delay[1]) * 1000);
  }
  return failure;
}
