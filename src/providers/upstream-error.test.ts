/**
 * The upstream failure table, row by row, and what the client sees. Expected values are written
 * out here, not read from the table: a change to a row has to change this file too.
 */
import { describe, expect, it } from 'vitest';
import type { UpstreamFailure } from '../plugin-api.ts';
import { HTTP_FAILURES, TRANSPORT_FAILURES, UpstreamError, categorize, httpRule, parseRetryAfter } from './upstream-error.ts';

interface Row {
  /** Client error code and HTTP status from toClientError(). */
  code: string;
  clientStatus: number;
  retryable: boolean;
  targetFault: boolean;
  clientFault: boolean;
}

const row = (code: string, clientStatus: number, retryable: boolean, targetFault: boolean, clientFault: boolean): Row => ({ code, clientStatus, retryable, targetFault, clientFault });

describe('HTTP_FAILURES: one test per row', () => {
  it('has exactly the rows tested below', () => {
    expect(Object.keys(HTTP_FAILURES).sort()).toEqual(['400', '401', '402', '403', '404', '408', '409', '429', '4xx', '503', '504', '529', '5xx']);
    expect(Object.keys(TRANSPORT_FAILURES).sort()).toEqual(['connect', 'protocol', 'timeout']);
  });

  // [row key, upstream status that selects it, expected]
  it.each([
    ['400', 400, row('upstream_bad_request', 400, false, false, true)],
    ['401', 401, row('upstream_auth_failed', 502, false, false, false)],
    ['402', 402, row('upstream_error', 502, false, false, false)],
    ['403', 403, row('upstream_auth_failed', 502, false, false, false)],
    ['404', 404, row('upstream_model_not_found', 502, false, false, false)],
    ['408', 408, row('timeout', 504, true, true, false)],
    ['409', 409, row('upstream_error', 502, true, false, false)],
    ['429', 429, row('rate_limit_exceeded', 429, true, true, false)],
    ['503', 503, row('provider_unavailable', 503, true, true, false)],
    ['504', 504, row('timeout', 504, true, true, false)],
    ['529', 529, row('provider_unavailable', 503, true, true, false)],
    ['4xx', 418, row('upstream_bad_request', 400, false, false, true)],
    ['5xx', 500, row('upstream_error', 502, true, true, false)],
  ] as const)('row %s (upstream HTTP %i)', (key, status, expected) => {
    const err = UpstreamError.http('acme', status, { message: 'nope' });
    expect(err.kind).toBe('http');
    expect(err.status).toBe(status);
    expect(err.rule).toBe(HTTP_FAILURES[key]);
    expect(err.retryable).toBe(expected.retryable);
    expect(err.targetFault).toBe(expected.targetFault);
    expect(err.clientFault).toBe(expected.clientFault);
    const client = err.toClientError();
    expect(client.code).toBe(expected.code);
    expect(client.status).toBe(expected.clientStatus);
    expect(client.cause).toBe(err);
  });
});

describe('TRANSPORT_FAILURES: one test per row', () => {
  it.each([
    ['connect', UpstreamError.connect, 0, row('upstream_error', 502, true, true, false), 'acme: could not reach the provider (socket hang up)'],
    ['timeout', UpstreamError.timeout, 0, row('timeout', 504, true, true, false), 'acme: socket hang up'],
    ['protocol', UpstreamError.protocol, 200, row('upstream_error', 502, true, true, false), 'acme: the provider sent a malformed answer (socket hang up)'],
  ] as const)('%s', (kind, make, status, expected, message) => {
    const cause = new Error('low level');
    const err = make('acme', 'socket hang up', cause);
    expect(err.kind).toBe(kind);
    expect(err.status).toBe(status);
    expect(err.rule).toBe(TRANSPORT_FAILURES[kind]);
    expect(err.cause).toBe(cause);
    expect(err.category).toBeUndefined();
    expect(err.retryable).toBe(expected.retryable);
    expect(err.targetFault).toBe(expected.targetFault);
    expect(err.clientFault).toBe(expected.clientFault);
    const client = err.toClientError();
    expect(client.code).toBe(expected.code);
    expect(client.status).toBe(expected.clientStatus);
    expect(client.message).toBe(message);
  });
});

describe('class fallbacks', () => {
  it.each([413, 418, 422, 451, 499])('HTTP %i without a row uses the 4xx row', (status) => {
    expect(httpRule(status)).toBe(HTTP_FAILURES['4xx']);
    expect(UpstreamError.http('p', status, { message: 'm' }).toClientError().code).toBe('upstream_bad_request');
  });

  it.each([500, 501, 502, 505, 520, 599])('HTTP %i without a row uses the 5xx row', (status) => {
    expect(httpRule(status)).toBe(HTTP_FAILURES['5xx']);
    expect(UpstreamError.http('p', status, { message: 'm' }).toClientError().code).toBe('upstream_error');
  });
});

describe("the provider's overrides", () => {
  it('failure.status replaces the HTTP status and picks that row (auth failure sent as 400)', () => {
    const err = UpstreamError.http('g', 400, { message: 'API key not valid: AIzaSecret', status: 401 });
    expect(err.status).toBe(401);
    expect(err.rule).toBe(HTTP_FAILURES['401']);
    expect(err.clientFault).toBe(false);
    const client = err.toClientError();
    expect(client.code).toBe('upstream_auth_failed');
    expect(client.message).not.toContain('AIzaSecret');
  });

  it("failure.retryable true makes a 400 retryable and no longer the client's fault", () => {
    const err = UpstreamError.http('p', 400, { message: 'overloaded', retryable: true });
    expect(err.retryable).toBe(true);
    expect(err.clientFault).toBe(false);
    expect(err.rule.retryable).toBe(false); // the table row itself is unchanged
  });

  it('failure.retryable false stops retries of a 503 but it still marks the target unhealthy', () => {
    const err = UpstreamError.http('p', 503, { message: 'daily quota', retryable: false });
    expect(err.retryable).toBe(false);
    expect(err.targetFault).toBe(true);
    expect(err.clientFault).toBe(false);
  });

  it("failure.retryable false keeps a 400 the client's fault", () => {
    const err = UpstreamError.http('p', 400, { message: 'bad', retryable: false });
    expect(err.retryable).toBe(false);
    expect(err.clientFault).toBe(true);
  });
});

describe('categorize', () => {
  const cat = (message: string, code?: string) => categorize({ message, code });

  it.each([
    ["This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."],
    ['prompt is too long: 210000 tokens > 200000 maximum'],
    ['Input is too long for requested model.'],
    ['The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'],
    ['Too many input tokens'],
    ['Please reduce the length of the messages.'],
    ['the context window was exceeded'],
  ])('context window: %s', (message) => {
    expect(cat(message)).toBe('context_window');
  });

  it("context window from the provider's code alone", () => {
    expect(cat('Invalid request', 'context_length_exceeded')).toBe('context_window');
  });

  it.each([
    ["The response was filtered due to the prompt triggering Azure OpenAI's content management policy."],
    ['Your request was rejected as a result of our safety system.'],
    ['Blocked by the content filter'],
    ['This request violates our Responsible AI policies'],
    ['Request blocked by safety filter'],
  ])('content policy: %s', (message) => {
    expect(cat(message)).toBe('content_policy');
  });

  it("content policy from the provider's code alone", () => {
    expect(cat('The response was filtered', 'content_filter')).toBe('content_policy');
  });

  it.each([['Invalid value for temperature'], ['Rate limit reached for requests'], ['model not found']])('no category: %s', (message) => {
    expect(cat(message)).toBeUndefined();
  });

  it('an explicit failure.category wins over the wording', () => {
    expect(categorize({ message: 'maximum context length exceeded', category: 'content_policy' })).toBe('content_policy');
  });

  it('is set on HTTP errors only', () => {
    expect(UpstreamError.http('p', 400, { message: 'prompt is too long' }).category).toBe('context_window');
    expect(UpstreamError.http('p', 400, { message: 'bad temperature' }).category).toBeUndefined();
    expect(UpstreamError.protocol('p', 'prompt is too long').category).toBeUndefined();
  });
});

describe('toClientError: messages and headers', () => {
  it("keeps the provider's message and code, prefixed by the provider name", () => {
    const client = UpstreamError.http('acme', 400, { message: 'temperature must be <= 2', code: 'invalid_value' }).toClientError();
    expect(client.message).toBe('acme: temperature must be <= 2 (acme code: invalid_value)');
  });

  it('upstream_error says the HTTP status; a 402 says whose account it is', () => {
    expect(UpstreamError.http('acme', 500, { message: 'boom' }).toClientError().message).toBe('acme: boom (HTTP 500)');
    expect(UpstreamError.http('acme', 402, { message: 'insufficient credit' }).toClientError().message).toBe("acme: insufficient credit (HTTP 402: the gateway's account with the provider)");
  });

  it.each([401, 403])("HTTP %i never echoes the provider's message or code (it may quote the key)", (status) => {
    const client = UpstreamError.http('acme', status, { message: 'Incorrect API key provided: sk-live-1234', code: 'sk-live-1234' }).toClientError();
    expect(client.message).toBe(`acme rejected the gateway's credentials (HTTP ${status}); the gateway operator must fix providers.acme in gateway.yaml`);
    expect(client.message).not.toContain('sk-live');
    expect(client.param).toBeNull();
  });

  it("redact scrubs the provider's message and code", () => {
    const redact = (t: string) => t.replaceAll('sk-secret', '[redacted]');
    const client = UpstreamError.http('acme', 500, { message: 'bad key sk-secret', code: 'sk-secret' }).toClientError(redact);
    expect(client.message).toBe('acme: bad key [redacted] (acme code: [redacted]) (HTTP 500)');
    const connect = UpstreamError.connect('acme', 'to https://sk-secret@host').toClientError(redact);
    expect(connect.message).toBe('acme: could not reach the provider (to https://[redacted]@host)');
  });

  it.each([429, 503, 529])('HTTP %i carries retry-after in whole seconds, rounded up, at least 1', (status) => {
    expect(UpstreamError.http('p', status, { message: 'm' }, 1_500).toClientError().headers).toEqual({ 'retry-after': '2' });
    expect(UpstreamError.http('p', status, { message: 'm' }, 200).toClientError().headers).toEqual({ 'retry-after': '1' });
    expect(UpstreamError.http('p', status, { message: 'm' }, 0).toClientError().headers).toEqual({ 'retry-after': '1' });
    expect(UpstreamError.http('p', status, { message: 'm' }, 30_000).toClientError().headers).toEqual({ 'retry-after': '30' });
  });

  it('no retry-after without a known wait, and none on other codes', () => {
    expect(UpstreamError.http('p', 429, { message: 'm' }).toClientError().headers).toBeUndefined();
    expect(UpstreamError.http('p', 500, { message: 'm' }, 5_000).toClientError().headers).toBeUndefined();
    expect(UpstreamError.http('p', 400, { message: 'm' }, 5_000).toClientError().headers).toBeUndefined();
  });

  it('the wait from the body (failure.retryAfterMs) is used when no header came; the header wins', () => {
    const fromBody = UpstreamError.http('p', 429, { message: 'm', retryAfterMs: 41_000 });
    expect(fromBody.retryAfterMs).toBe(41_000);
    expect(fromBody.toClientError().headers).toEqual({ 'retry-after': '41' });
    expect(UpstreamError.http('p', 429, { message: 'm', retryAfterMs: 41_000 }, 2_000).retryAfterMs).toBe(2_000);
  });
});

describe('toClientError: param', () => {
  const param = (p: UpstreamFailure['param'], redact?: (t: string) => string, status = 400) => UpstreamError.http('p', status, { message: 'm', param: p }).toClientError(redact).param;

  it.each(['messages[0].content', 'temperature', 'tools[0].function.name', 'response_format.json_schema', 'stop[2]', 'stream_options.include_usage'])('a field path is passed on: %s', (p) => {
    expect(param(p)).toBe(p);
  });

  it('also for 4xx statuses without a row of their own', () => {
    expect(param('messages[1].content', undefined, 422)).toBe('messages[1].content');
  });

  it.each([
    ['free text', 'The value of temperature is invalid'],
    ['an Authorization echo', 'Bearer sk-abc'],
    ['a JSON fragment', '{"model":"x"}'],
    ['an empty string', ''],
    ['a leading digit', '0.content'],
    ['too long', `a${'b'.repeat(128)}`],
  ])('dropped when it is %s', (_why, p) => {
    expect(param(p)).toBeNull();
  });

  it('null and absent stay null', () => {
    expect(param(null)).toBeNull();
    expect(param(undefined)).toBeNull();
  });

  it('dropped when it contains a configured secret, even though it looks like a path', () => {
    const redact = (t: string) => t.replaceAll('sk-live-9f8e', '[redacted]');
    expect(param('sk-live-9f8e', redact)).toBeNull();
    expect(param('messages[0].sk-live-9f8e', redact)).toBeNull();
    expect(param('messages[0].content', redact)).toBe('messages[0].content');
  });

  it('only upstream_bad_request carries it', () => {
    expect(param('messages[0].content', undefined, 429)).toBeNull();
    expect(param('messages[0].content', undefined, 500)).toBeNull();
    expect(param('model', undefined, 404)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

  it('retry-after-ms (OpenAI, Azure) in milliseconds', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '1500' })).toBe(1_500);
    expect(parseRetryAfter({ 'retry-after-ms': '0' })).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '12.5' })).toBe(12.5);
  });

  it('retry-after-ms wins over retry-after', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
  });

  it('an unusable retry-after-ms falls back to retry-after', () => {
    expect(parseRetryAfter({ 'retry-after-ms': 'soon', 'retry-after': '3' })).toBe(3_000);
    expect(parseRetryAfter({ 'retry-after-ms': '-5', 'retry-after': '3' })).toBe(3_000);
  });

  it('retry-after in seconds', () => {
    expect(parseRetryAfter({ 'retry-after': '3' })).toBe(3_000);
    expect(parseRetryAfter({ 'retry-after': '0' })).toBe(0);
    expect(parseRetryAfter({ 'retry-after': '120' })).toBe(120_000);
  });

  it('retry-after as an HTTP date, relative to now; a past date is 0', () => {
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, now)).toBe(30_000);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, now)).toBe(0);
  });

  it('the first value of a repeated header', () => {
    expect(parseRetryAfter({ 'retry-after': ['4', '99'] })).toBe(4_000);
    expect(parseRetryAfter({ 'retry-after-ms': ['700', '1'] })).toBe(700);
  });

  it('garbage or nothing: undefined', () => {
    expect(parseRetryAfter({})).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': undefined })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'Infinity' })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after-ms': 'later' })).toBeUndefined();
  });

  // Bug: Number('') is 0, so an empty header reads as "retry now" (the retry stage then skips
  // its backoff), and an empty retry-after-ms hides a valid retry-after. RFC 9110 §10.2.3 allows
  // only digits or an HTTP date.
  it('an empty header value is not a wait of 0', () => {
    expect(parseRetryAfter({ 'retry-after': '' })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after-ms': '', 'retry-after': '3' })).toBe(3_000);
  });
});
