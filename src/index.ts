/**
 * `switchyard-gateway`: the plugin contract (every type a provider plugin or a pipeline stage
 * touches, and the define* helpers), the OpenAI wire types, and the Gateway for embedding.
 * Helpers for provider authors are in `switchyard-gateway/kit`; test helpers in
 * `switchyard-gateway/kit/testing`.
 *
 * @example A provider for an OpenAI-compatible server
 * import { defineHttpProvider } from 'switchyard-gateway';
 * import { openAiStyleFailure } from 'switchyard-gateway/kit';
 */
export * from './plugin-api.ts';
export { defineHttpProvider, type Endpoint, type Headers, type HttpProviderSpec, type HttpRequestSpec, type OutgoingRequest } from './providers/http-provider.ts';
export type * from './openai-types.ts';
export { Gateway, type GatewayOptions, type ReloadOutcome } from './gateway.ts';
export { ConfigError, formatIssue, type ConfigIssue } from './config/issues.ts';
