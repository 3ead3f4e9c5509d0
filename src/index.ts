/**
 * Switchyard's public API, for plugin authors and for embedding the gateway.
 *
 * @example A provider plugin for an OpenAI-compatible server with a custom header
 * import { defineHttpProvider } from 'switchyard';
 */
export {
  PLUGIN_API_VERSION,
  defineProvider,
  defineStage,
  type AttemptRecord,
  type Clock,
  type GatewayResponse,
  type JsonSchema,
  type KeyIdentity,
  type Logger,
  type ModelRoute,
  type NativeResponse,
  type Next,
  type ProviderCall,
  type ProviderCapabilities,
  type ProviderEnv,
  type ProviderInstance,
  type ProviderPlugin,
  type RequestContext,
  type RetryPolicy,
  type RouteTarget,
  type RuntimeView,
  type StageEnv,
  type StageInstance,
  type StagePlugin,
  type StreamTranslator,
} from './plugin-api.ts';
export { defineHttpProvider, decodeSseJson, type Endpoint, type HttpProviderSpec, type HttpRequestSpec, type OutgoingRequest, type SseJsonEvent } from './providers/http-provider.ts';
export { UpstreamError, parseRetryAfter, type UpstreamFailure } from './providers/upstream-error.ts';
export { unsupportedParam, checkUnsupported } from './providers/params.ts';
export { GatewayError, ERROR_CATALOGUE, type ErrorCode } from './errors.ts';
export { openAiStyleFailure } from './protocol/openai-errors.ts';
export { readSse, sseData, type SseMessage } from './protocol/sse.ts';
export { Gateway, type GatewayOptions } from './gateway.ts';
export { ConfigError, formatIssue, type ConfigIssue } from './config/issues.ts';
export type * from './openai-types.ts';
