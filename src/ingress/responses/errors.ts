/**
 * Errors of the Responses translation. Nothing new on the wire: the Responses API answers errors
 * with the same OpenAI envelope as chat ({"error":{"message","type","param","code"}}), so a
 * refused request is a catalogued GatewayError like any other. Inside a stream, OpenAI reports a
 * failure twice: an `error` event, then `response.failed` whose `response.error` carries one of
 * its ResponseErrorCode values (https://platform.openai.com/docs/api-reference/responses-streaming/error).
 */
import { GatewayError } from '../../errors.ts';
import type { ResponseError } from './types.ts';

/** A field of the body has the wrong shape: 400 invalid_request naming it, in the validate stage's wording. */
export function invalidParam(param: string, problem: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid '${param}': ${problem}.`, { param });
}

/** 400 invalid_request in OpenAI's own words for the case (a dangling tool call, say). */
export function invalidRequest(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/** A valid Responses feature the translation to chat cannot honour: 400 unsupported_parameter naming it. */
export function unsupportedParam(param: string, message: string): GatewayError {
  return new GatewayError('unsupported_parameter', message, { param });
}

/**
 * A gateway error as the `error` of a failed response. ResponseErrorCode is a closed list about
 * OpenAI's own failures (images, prompts, residency); of the gateway's failures only a rate limit
 * has a name there, everything else reached mid-stream is the server's side.
 */
export function responseErrorOf(error: GatewayError): ResponseError {
  return { code: error.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: error.message };
}
