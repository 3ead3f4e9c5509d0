/** Bedrock error bodies and headers → upstream failures with the right status. */
import { describe, expect, it } from 'vitest';
import { exceptionName, readBedrockError, statusOf, streamFailure } from './errors.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/bedrock/', import.meta.url);

const fixture = (name: string) => loadFixture(FIXTURES, name);

describe('readBedrockError', () => {
  it('the type comes from x-amzn-errortype (its URL part cut off), the message from the body', () => {
    const f = fixture('error-400-validation-exception');
    expect(readBedrockError(f.status, f.json, f.headers)).toEqual({ message: f.json.message, code: 'ValidationException' });
  });

  it('or from the body’s __type; InternalServerError is a 500', () => {
    const throttle = fixture('error-429-throttling');
    expect(readBedrockError(429, throttle.json, throttle.headers)).toEqual({ message: 'Rate exceeded', code: 'ThrottlingException' });
    expect(readBedrockError(500, fixture('error-500-internal').json, {})).toEqual({ message: 'Internal error', code: 'InternalServerError' });
    expect(readBedrockError(429, { __type: 'com.amazon.coral.availability#ThrottlingException', message: 'slow down' }, {}).code).toBe('ThrottlingException');
  });

  it('a model id Bedrock does not know is the operator’s problem: 404', () => {
    const f = fixture('error-400-invalid-model-id');
    expect(readBedrockError(400, f.json, f.headers)).toEqual({ message: 'The provided model identifier is invalid.', code: null, status: 404 });
  });

  it('statuses that would mislead an OpenAI client are corrected', () => {
    expect(readBedrockError(424, { message: 'model failed' }, { 'x-amzn-errortype': 'ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/' })).toMatchObject({
      code: 'ModelErrorException',
      status: 500,
    });
    expect(readBedrockError(400, { message: 'quota' }, { 'x-amzn-errortype': 'ServiceQuotaExceededException' }).status).toBe(429);
    expect(
      readBedrockError(
        403,
        { Message: 'The security token included in the request is invalid.' },
        { 'x-amzn-errortype': 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/' },
      ),
    ).toEqual({
      message: 'The security token included in the request is invalid.',
      code: 'UnrecognizedClientException',
      status: 401,
    });
    expect(readBedrockError(403, { message: 'denied' }, { 'x-amzn-errortype': 'AccessDeniedException' })).toEqual({ message: 'denied', code: 'AccessDeniedException' });
  });

  it('bodies that are not Bedrock’s: text, empty', () => {
    expect(readBedrockError(502, '<html>bad gateway</html>', {})).toEqual({ message: '<html>bad gateway</html>', code: null });
    expect(readBedrockError(503, '', { 'x-amzn-errortype': ['ServiceUnavailableException'] })).toEqual({ message: 'ServiceUnavailableException', code: 'ServiceUnavailableException' });
    expect(readBedrockError(500, {}, {})).toEqual({ message: 'HTTP 500', code: null });
  });
});

describe('exception names and statuses', () => {
  it('names are cut from header and __type forms', () => {
    expect(exceptionName('ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/')).toBe('ValidationException');
    expect(exceptionName('aws.protocoltests#ThrottlingException')).toBe('ThrottlingException');
    expect(exceptionName('')).toBeUndefined();
    expect(exceptionName(undefined)).toBeUndefined();
  });

  it('statuses by name, whatever the case', () => {
    expect(
      [
        'ThrottlingException',
        'accessDeniedException',
        'UnrecognizedClientException',
        'ResourceNotFoundException',
        'ModelNotReadyException',
        'ServiceUnavailableException',
        'ValidationException',
        'InternalServerException',
        'ModelTimeoutException',
        'Unheard',
      ].map(statusOf),
    ).toEqual([429, 403, 401, 404, 503, 503, 400, 500, 408, undefined]);
  });

  it('in-stream exceptions: the frame’s type names the status', () => {
    expect(streamFailure('throttlingException', { message: 'Too many tokens' })).toEqual({ status: 429, failure: { message: 'Too many tokens', code: 'throttlingException' } });
    expect(streamFailure('modelStreamErrorException', { message: 'Model Stream Error', originalStatusCode: 500, originalMessage: 'The model stream failed.' })).toEqual({
      status: 500,
      failure: { message: 'Model Stream Error', code: 'modelStreamErrorException' },
    });
    expect(streamFailure('modelStreamErrorException', { message: 'busy', originalStatusCode: 429 }).status).toBe(429);
    expect(streamFailure('validationException', { message: 'bad' }).status).toBe(400);
    expect(streamFailure('internalServerException', {}).failure.message).toBe('internalServerException');
    expect(streamFailure('serviceUnavailableException', { message: 'x' }).status).toBe(503);
    expect(streamFailure('somethingNewException', { message: 'x' }).status).toBe(500);
  });
});
