/** google.rpc error bodies → UpstreamFailure, and what the client sees for them. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { durationMs, readGoogleError } from './errors.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/gemini/', import.meta.url);

const body = (name: string) => loadFixture(FIXTURES, name).json;

describe('recorded error bodies', () => {
  it('API_KEY_INVALID (400) is the gateway credential: status 401, so 502 upstream_auth_failed without the message', () => {
    const failure = readGoogleError(400, body('error-400-api-key-invalid'));
    expect(failure).toEqual({ message: 'API key not valid. Please pass a valid API key.', code: 'INVALID_ARGUMENT', status: 401 });
    const client = UpstreamError.http('g', 400, failure).toClientError();
    expect(client.code).toBe('upstream_auth_failed');
    expect(client.message).not.toContain('API key not valid');
  });

  it("a plain INVALID_ARGUMENT (Vertex) stays a 400 with Google's message", () => {
    const failure = readGoogleError(400, body('vertex-error-400-invalid-argument'));
    expect(failure).toEqual({ message: expect.stringMatching(/^Cannot fetch content from the provided URL/), code: 'INVALID_ARGUMENT' });
    expect(UpstreamError.http('g', 400, failure).toClientError().code).toBe('upstream_bad_request');
  });

  it('NOT_FOUND and RESOURCE_EXHAUSTED keep their status names as the code', () => {
    expect(readGoogleError(404, body('error-404-model-not-found-on-stream'))).toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/^models\/custom-gemini-2\.0-flash is not found/) });
    expect(readGoogleError(429, body('error-429-resource-exhausted'))).toEqual({ message: 'Resource has been exhausted (e.g. check quota).', code: 'RESOURCE_EXHAUSTED' });
  });
});

describe('details and odd bodies', () => {
  it('RetryInfo sets the wait; a per-day QuotaFailure is not worth retrying on this target', () => {
    const failure = readGoogleError(429, {
      error: {
        code: 429,
        message: 'You exceeded your current quota.',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
            violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' }],
          },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '41s' },
        ],
      },
    });
    expect(failure).toMatchObject({ retryAfterMs: 41_000, retryable: false });
    const perMinute = readGoogleError(429, {
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel' }] }],
      },
    });
    expect(perMinute.retryable).toBeUndefined();
    expect(perMinute.message).toBe('RESOURCE_EXHAUSTED');
  });

  it('API_KEY_* reasons only turn a 400 into a 401', () => {
    const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_SERVICE_BLOCKED' };
    expect(readGoogleError(403, { error: { code: 403, message: 'blocked', status: 'PERMISSION_DENIED', details: [info] } }).status).toBeUndefined();
    expect(readGoogleError(400, { error: { code: 400, message: 'expired', status: 'INVALID_ARGUMENT', details: [{ ...info, reason: 'API_KEY_EXPIRED' }] } }).status).toBe(401);
  });

  it('the envelope wrapped in an array, a code without a status name, text and empty bodies', () => {
    expect(readGoogleError(400, [{ error: { code: 400, message: 'Function call is missing a thought_signature', status: 'INVALID_ARGUMENT' } }])).toEqual({
      message: 'Function call is missing a thought_signature',
      code: 'INVALID_ARGUMENT',
    });
    expect(readGoogleError(500, { error: { code: 500, message: 'boom' } })).toEqual({ message: 'boom', code: '500' });
    expect(readGoogleError(502, '  <html>Bad Gateway</html>\n')).toEqual({ message: '<html>Bad Gateway</html>' });
    expect(readGoogleError(503, '')).toEqual({ message: 'HTTP 503' });
    expect(readGoogleError(500, { error: 'not an object' })).toEqual({ message: 'HTTP 500' });
  });

  it('protobuf durations', () => {
    expect(durationMs('3s')).toBe(3000);
    expect(durationMs('0.250s')).toBe(250);
    expect(durationMs('1.5s')).toBe(1500);
    expect(durationMs('soon')).toBeUndefined();
    expect(durationMs(3)).toBeUndefined();
  });
});
