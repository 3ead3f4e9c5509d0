import Anthropic, {
  type APIError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  GatewayTimeoutError,
  InternalServerError,
  NotFoundError,
  OverloadedError,
  PermissionDeniedError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { ERROR_CATALOGUE, type ErrorCode, GatewayError } from '../../errors.ts';
import { ANTHROPIC_ERRORS, anthropicErrorOf } from './errors.ts';
import { shapeOf } from './testing.ts';

const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);
const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** https://docs.anthropic.com/en/api/errors#http-errors, plus 504 timeout_error (the SDK's ErrorType has it). */
const DOCUMENTED: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** What the official SDK throws for our answer to a request that failed with `error`. */
async function sdkErrorFor(error: GatewayError): Promise<{ thrown: APIError; fetches: number }> {
  const { status, body } = anthropicErrorOf(error, { requestId: 'req_1' });
  let fetches = 0;
  const client = new Anthropic({
    apiKey: 'sk-ant-test',
    maxRetries: 2,
    // Retries would wait; the test only counts them.
    timeout: 5_000,
    fetch: async () => {
      fetches++;
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'request-id': 'req_1', 'retry-after-ms': '1', ...error.headers } });
    },
  });
  try {
    await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  } catch (thrown) {
    return { thrown: thrown as APIError, fetches };
  }
  throw new Error('the SDK did not throw');
}

describe('anthropicErrorOf', () => {
  it('maps every code of the catalogue', () => {
    expect(Object.keys(ANTHROPIC_ERRORS).sort()).toEqual([...codes].sort());
  });

  it.each(codes)('%s: a status/type pair Anthropic documents (other 4xx are invalid_request_error)', (code) => {
    const { status, type } = ANTHROPIC_ERRORS[code];
    expect(type).toBe(DOCUMENTED[status] ?? (status < 500 ? 'invalid_request_error' : 'no such pair'));
    // The client's mistakes stay the client's, and the gateway's stay 5xx.
    expect(status >= 500).toBe(ERROR_CATALOGUE[code].status >= 500);
  });

  it('the envelope of a recorded Anthropic error, the message kept', () => {
    const { status, body } = anthropicErrorOf(new GatewayError('provider_unavailable', 'Every target is overloaded.'));
    expect(status).toBe(529);
    expect(body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Every target is overloaded.' } });
    expect(shapeOf(body)).toEqual(shapeOf(loadFixture(ANTHROPIC, 'error-529-overloaded').json));
  });

  it('request_id in the body when given, as Anthropic sends it', () => {
    const { body } = anthropicErrorOf(new GatewayError('invalid_request', "Invalid 'temperature'."), { requestId: 'req_011' });
    expect(shapeOf(body)).toEqual(shapeOf(loadFixture(ANTHROPIC, 'error-400-invalid-request').json));
    expect(body.request_id).toBe('req_011');
  });

  it('a code the table does not know yet falls back by status', () => {
    const odd: GatewayError = Object.assign(new GatewayError('internal_error', 'x'), { code: 'brand_new', status: 503 });
    expect(anthropicErrorOf(odd)).toMatchObject({ status: 529, body: { error: { type: 'overloaded_error' } } });
  });
});

describe('the official SDK raises its own classes from our answers', () => {
  it.each<[ErrorCode, new (...args: never[]) => APIError, boolean]>([
    ['invalid_request', BadRequestError, false],
    ['unsupported_parameter', BadRequestError, false],
    ['invalid_api_key', AuthenticationError, false],
    ['model_not_allowed', PermissionDeniedError, false],
    ['model_not_found', NotFoundError, false],
    ['request_too_large', ContentTooLargeError, false],
    ['rate_limit_exceeded', RateLimitError, true],
    ['internal_error', InternalServerError, true],
    ['upstream_error', InternalServerError, true],
    ['provider_unavailable', OverloadedError, true],
    ['timeout', GatewayTimeoutError, true],
  ])('%s → %s', async (code, errorClass, retried) => {
    const { thrown, fetches } = await sdkErrorFor(new GatewayError(code, 'the message'));
    expect(thrown).toBeInstanceOf(errorClass);
    expect(thrown.status).toBe(ANTHROPIC_ERRORS[code].status);
    expect(thrown.type).toBe(ANTHROPIC_ERRORS[code].type);
    expect(thrown.requestID).toBe('req_1');
    expect(thrown.message).toContain('the message');
    expect(fetches).toBe(retried ? 3 : 1);
  });

  it('a spent budget is a RateLimitError the SDK does not retry (x-should-retry: false)', async () => {
    const { thrown, fetches } = await sdkErrorFor(new GatewayError('insufficient_quota', 'Budget spent.', { headers: { 'x-should-retry': 'false' } }));
    expect(thrown).toBeInstanceOf(RateLimitError);
    expect(fetches).toBe(1);
  });
});

describe('anthropicErrorOf: details', () => {
  it("carries the error's details (the thread fallback's error_code) and leaves them out when there are none", () => {
    const details = { error_code: 'thread_unsupported_request', unsupported: ['thread'] };
    const withDetails = anthropicErrorOf(new GatewayError('unsupported_parameter', 'no threads here', { param: 'thread', details }), { requestId: 'req_1' });
    expect(withDetails).toEqual({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'no threads here', details }, request_id: 'req_1' } });
    expect(anthropicErrorOf(new GatewayError('invalid_request', 'x')).body.error).not.toHaveProperty('details');
  });
});
