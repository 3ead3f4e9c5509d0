/**
 * Any OpenAI-compatible Chat Completions server: OpenAI itself, vLLM, Ollama, Groq, Mistral,
 * Together, OpenRouter, LM Studio... The wire format is already ours, so translation is the
 * identity; the work is auth headers, asking for stream usage, and reading error envelopes.
 */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionRequest, type ChatMessage, type ProviderCall, type StreamTranslator } from 'switchyard-gateway';
import { openAiStyleFailure, reportDrop, UpstreamError, type SseJsonEvent } from 'switchyard-gateway/kit';
import { buildEmbeddingsBody, toEmbeddings } from './embeddings.ts';

export interface OpenAiOptions {
  /** Base URL ending in /v1 (or wherever the server mounts /chat/completions). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; omit for servers without auth (local vLLM, Ollama). */
  apiKey?: string;
  /** Extra headers for every request (OpenAI-Organization, OpenRouter's HTTP-Referer, ...). */
  headers?: Record<string, string>;
  /**
   * false: the server has no `developer` role (many self-hosted chat templates know only
   * system, user, assistant and tool), so developer messages go as `system`, reported.
   * Default true: OpenAI introduced the role and passes it on.
   */
  developerRole?: boolean;
}

export const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['baseUrl'],
  properties: {
    baseUrl: { type: 'string', pattern: '^https?://', description: 'Base URL ending in /v1' },
    apiKey: { type: 'string', minLength: 1 },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    developerRole: { type: 'boolean', description: 'false: developer messages are sent as system (reported)' },
  },
} as const;

/** The upstream body for one attempt: the client's request with the target's model (and `developer` as `system` for a server without it). */
export function buildChatBody(call: ProviderCall, options: { developerRole?: boolean } = {}): ChatCompletionRequest {
  const body: ChatCompletionRequest = { ...call.request, model: call.model };
  if (options.developerRole === false) {
    const messages = withoutDeveloperRole(call);
    if (messages) body.messages = messages;
  }
  // Always ask for the usage chunk so the gateway can log tokens; the core strips it again
  // for clients that did not ask for it.
  if (call.stream) body.stream_options = { ...call.request.stream_options, include_usage: true };
  return body;
}

/** The messages with each `developer` one as `system`, each reported (refused when strict); undefined when there is none. */
function withoutDeveloperRole(call: ProviderCall): ChatMessage[] | undefined {
  const messages = call.request.messages;
  let out: ChatMessage[] | undefined;
  messages.forEach((m, i) => {
    if (m.role !== 'developer') return;
    reportDrop(call, { field: `messages[${i}].role`, what: 'developer', reason: `sent as system: ${call.provider} has no developer role (developerRole: false)` });
    out ??= [...messages];
    out[i] = { ...m, role: 'system' };
  });
  return out;
}

export function toCompletion(body: unknown): ChatCompletion {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { choices?: unknown }).choices)) {
    throw new SyntaxError('the response has no choices array');
  }
  return body as ChatCompletion;
}

/**
 * OpenAI chunks pass through as they are. An `error` event inside a 200 stream is a failure, and
 * so is a stream that ends before any choice finished (a cut connection can look like an end).
 */
export function createStreamTranslator(provider: string): StreamTranslator {
  let finished = false;
  return {
    push(event) {
      const data = (event as SseJsonEvent).data as ChatCompletionChunk & { error?: unknown };
      if (data && typeof data === 'object' && 'error' in data && data.error) {
        throw UpstreamError.http(provider, 500, openAiStyleFailure(500, data));
      }
      if (!finished && Array.isArray(data?.choices)) finished = data.choices.some((c) => c.finish_reason);
      return data;
    },
    end() {
      if (!finished) throw UpstreamError.protocol(provider, 'the stream ended before the model finished (no finish_reason)');
      return undefined;
    },
  };
}

export default defineHttpProvider<OpenAiOptions>({
  id: 'openai',
  description: 'OpenAI and every OpenAI-compatible Chat Completions server',
  optionsSchema,
  secretOptions: ['apiKey'],
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, extraParams: 'all' },
  endpoint(options) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    return { baseUrl: options.baseUrl, headers };
  },
  buildRequest(call, options) {
    return { path: '/chat/completions', body: buildChatBody(call, options) };
  },
  toCompletion,
  createStreamTranslator(call) {
    return createStreamTranslator(call.provider);
  },
  readError: openAiStyleFailure,
  embeddings: {
    buildRequests: (call) => [{ path: '/embeddings', body: buildEmbeddingsBody(call) }],
    toEmbeddings: (body, call) => toEmbeddings(body, call),
  },
});
