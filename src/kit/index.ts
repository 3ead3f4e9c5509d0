/**
 * The provider author's kit: the helpers the built-in providers use, public so that a plugin
 * written outside this repository can do everything a built-in does.
 *
 * @example
 * import { defineHttpProvider } from 'switchyard-gateway';
 * import { ChunkBuilder, openAiStyleFailure, UpstreamError } from 'switchyard-gateway/kit';
 */
export { decodeSseJson, type SseJsonEvent } from '../providers/http-provider.ts';
export { UpstreamError, parseRetryAfter, categorize, HTTP_FAILURES, TRANSPORT_FAILURES, type FailureRule, type UpstreamErrorKind } from '../providers/upstream-error.ts';
export { unsupportedParam, checkUnsupported, checkSamplingExtras, functionOf } from '../providers/params.ts';
export { openAiStyleFailure } from '../protocol/openai-errors.ts';
export { readSse, sseData, type SseMessage } from '../protocol/sse.ts';
export { ChunkBuilder, type ChunkDelta } from '../protocol/chunks.ts';
export { textOf, partsOf, parseDataUrl, parseArguments, toolCallArguments } from '../protocol/content.ts';
export { GatewayError, ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
export { applyCapabilities } from '../providers/capabilities.ts';
export { mulberry32 } from '../protocol/random.ts';
