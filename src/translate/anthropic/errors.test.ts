/** Anthropic error bodies → UpstreamFailure, and the client error they end up as. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { readAnthropicError, statusOf } from './errors.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/anthropic/', import.meta.url);

const fixture = (name: string) => loadFixture(FIXTURES, name);
const upstream = (name: string) => {
  const f = fixture(name);
  return UpstreamError.http('claude', f.status, readAnthropicError(f.status, f.json, f.headers));
};

describe('readAnthropicError', () => {
  it('keeps the message and the error type as code (request_id is not echoed)', () => {
    const f = fixture('error-400-invalid-request');
    expect(readAnthropicError(400, f.json, f.headers)).toEqual({
      message: "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium.",
      code: 'invalid_request_error',
    });
  });

  it.each([
    ['error-400-invalid-request', 400, false, 'upstream_bad_request'],
    ['error-401-authentication', 401, false, 'upstream_auth_failed'],
    ['error-404-not-found-model', 404, false, 'upstream_model_not_found'],
    ['error-429-rate-limit', 429, true, 'rate_limit_exceeded'],
    ['error-529-overloaded', 529, true, 'provider_unavailable'],
  ])('%s → status %i, retryable %s, %s', (name, status, retryable, code) => {
    const err = upstream(name);
    expect(err.status).toBe(status);
    expect(err.retryable).toBe(retryable);
    expect(err.toClientError().code).toBe(code);
  });

  it('the 429 wording is recognised as neither context-window nor content-policy', () => {
    expect(upstream('error-429-rate-limit').category).toBeUndefined();
  });

  it('x-should-retry overrides the status-based decision', () => {
    const body = { type: 'error', error: { type: 'api_error', message: 'nope' } };
    expect(readAnthropicError(500, body, { 'x-should-retry': 'false' }).retryable).toBe(false);
    expect(readAnthropicError(400, body, { 'x-should-retry': 'true' }).retryable).toBe(true);
    expect(readAnthropicError(500, body, {})).not.toHaveProperty('retryable');
  });

  it('a non-JSON body (a proxy page) keeps its text; an empty one says the status', () => {
    expect(readAnthropicError(503, 'upstream connect error or disconnect/reset before headers', {})).toEqual({ message: 'upstream connect error or disconnect/reset before headers' });
    expect(readAnthropicError(502, '', {})).toEqual({ message: 'HTTP 502' });
    expect(readAnthropicError(500, { unexpected: true }, {})).toEqual({ message: 'HTTP 500' });
  });

  it('prompt too long is a context-window refusal (for fallbacks)', () => {
    const failure = readAnthropicError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }, {});
    expect(UpstreamError.http('claude', 400, failure).category).toBe('context_window');
  });

  it('statusOf maps in-stream error types to Anthropic’s HTTP statuses', () => {
    expect(statusOf('overloaded_error')).toBe(529);
    expect(statusOf('rate_limit_error')).toBe(429);
    expect(statusOf('permission_error')).toBe(403);
    expect(statusOf('request_too_large')).toBe(413);
    expect(statusOf('timeout_error')).toBe(504);
    expect(statusOf(undefined)).toBe(500);
  });
});
