/**
 * Anthropic Messages API (`POST /v1/messages`, `x-api-key`, `anthropic-version`): requests,
 * answers, named-event streams, tool use, images, prompt-cache usage and errors, translated to
 * and from the OpenAI wire format by the kit's Anthropic translations (src/translate/anthropic);
 * this folder adds the API's URL, key, version and betas, and the Messages pass-through.
 */
import { defineHttpProvider } from 'switchyard-gateway';
import { ANTHROPIC_CAPABILITIES, anthropicToCompletion, buildAnthropicRequest, createAnthropicStreamTranslator, readAnthropicError } from 'switchyard-gateway/kit';

export interface AnthropicOptions {
  /** Default https://api.anthropic.com */
  baseUrl?: string;
  apiKey: string;
  /** The `anthropic-version` header (default 2023-06-01). */
  version?: string;
  /** `max_tokens` when the request sets none (the Messages API requires one). */
  maxTokens?: number;
  /** Comma-separated `anthropic-beta` features. */
  beta?: string;
  /**
   * Anthropic caches prompts only when asked: `5m` or `1h` adds a top-level `cache_control`
   * (automatic caching) to every request. Cache writes cost more than plain input; default off.
   */
  promptCaching?: false | '5m' | '1h';
  headers?: Record<string, string>;
}

export default defineHttpProvider<AnthropicOptions>({
  id: 'anthropic',
  description: 'Anthropic Messages API',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['apiKey'],
    properties: {
      baseUrl: { type: 'string', pattern: '^https?://', default: 'https://api.anthropic.com' },
      apiKey: { type: 'string', minLength: 1 },
      version: { type: 'string', default: '2023-06-01' },
      maxTokens: { type: 'integer', minimum: 1, default: 4096 },
      beta: { type: 'string' },
      promptCaching: { enum: [false, '5m', '1h'], default: false },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['apiKey'],
  capabilities: { ...ANTHROPIC_CAPABILITIES, nativeProtocols: ['anthropic-messages', 'anthropic-count-tokens'], extraParams: ['top_k', 'thinking', 'web_search'] },
  // Its key comes from gateway.yaml (often `${ANTHROPIC_API_KEY}`): for /readyz, metrics and validate --strict.
  identity: () => ({ source: 'api-key', refreshes: 0, failures: 0 }),
  endpoint(options) {
    const headers: Record<string, string> = { ...options.headers, 'x-api-key': options.apiKey, 'anthropic-version': options.version ?? '2023-06-01' };
    if (options.beta) headers['anthropic-beta'] = options.beta;
    return { baseUrl: options.baseUrl ?? 'https://api.anthropic.com', headers };
  },
  buildRequest(call, options) {
    // A client that spoke the Messages API is passed through: every field (cache_control,
    // thinking signatures, server tools, betas) survives; only the model is the target's.
    if (call.native?.protocol === 'anthropic-messages') return { path: '/v1/messages', body: { ...call.native.body, model: call.model }, headers: call.native.headers };
    // Anthropic counts tokens itself (POST /v1/messages/count_tokens): exact, and free.
    if (call.native?.protocol === 'anthropic-count-tokens') return { path: '/v1/messages/count_tokens', body: { ...call.native.body, model: call.model }, headers: call.native.headers };
    return { path: '/v1/messages', body: buildAnthropicRequest(call, { maxTokens: options.maxTokens ?? 4096, promptCaching: options.promptCaching }) };
  },
  toCompletion: (body, call) => anthropicToCompletion(body, call),
  createStreamTranslator: (call) => createAnthropicStreamTranslator(call),
  readError: readAnthropicError,
});
