/**
 * Any OpenAI-compatible Chat Completions server: OpenAI itself, vLLM, Ollama, Groq, Mistral,
 * Together, OpenRouter, LM Studio... The wire format is already ours, so translation is the
 * identity; the work is auth headers, asking for stream usage, and reading error envelopes.
 *
 * `/v1/responses` requests are passed through natively to a server that serves the Responses API
 * (`nativeResponses`; on by default for OpenAI's own API only, since many compatible servers do
 * not serve /responses): the client's body goes to `POST /responses` with the target's model, and
 * the answer comes back untranslated, read by the kit's Responses translation for usage and cost.
 *
 * `server` says whether `baseUrl` is OpenAI's own API or another compatible server (server.ts):
 * chat fields outside OpenAI's set go up to a compatible server as sent, while OpenAI's own API
 * gets the sampling parameters it refuses (`top_k`...) dropped and reported.
 */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionRequest, type ChatMessage, type ProviderCall, type StreamTranslator } from 'switchyard-gateway';
import { createResponsesStreamTranslator, openAiStyleFailure, reportDrop, responsesToCompletion, UpstreamError, withoutChatExtensions, type SseJsonEvent } from 'switchyard-gateway/kit';
import { buildEmbeddingsBody, toEmbeddings } from './embeddings.ts';
import { type OpenAiServer, serverOf, withoutForeignSampling } from './server.ts';

export interface OpenAiOptions {
  /** Base URL ending in /v1 (or wherever the server mounts /chat/completions). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; omit for servers without auth (local vLLM, Ollama). */
  apiKey?: string;
  /** Extra headers for every request (OpenAI-Organization, OpenRouter's HTTP-Referer, ...). */
  headers?: Record<string, string>;
  /**
   * `openai`: OpenAI's own API (or a proxy in front of it), which refuses parameters it does not
   * know: the sampling parameters of other servers (`top_k`, `min_p`...) are dropped and
   * reported. `compatible`: vLLM, Ollama and the like, which get every chat field as sent.
   * Default: `openai` when the host of `baseUrl` is api.openai.com, else `compatible`.
   */
  server?: OpenAiServer;
  /**
   * The server serves `POST /responses` (OpenAI's Responses API): `/v1/responses` requests are
   * passed through untranslated. Default: true for OpenAI's own API (`server: openai`), false for
   * other servers (they are translated to chat, which every compatible server serves).
   */
  nativeResponses?: boolean;
  /**
   * false: the server has no `developer` role (many self-hosted chat templates know only
   * system, user, assistant and tool), so developer messages go as `system`, reported.
   * Default true: OpenAI introduced the role and passes it on.
   */
  developerRole?: boolean;
}

/** The native protocol of a Responses client (src/ingress/responses/protocol.ts). */
export const RESPONSES = 'openai-responses';

export const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['baseUrl'],
  properties: {
    baseUrl: { type: 'string', pattern: '^https?://', description: 'Base URL ending in /v1' },
    apiKey: { type: 'string', minLength: 1 },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    server: { enum: ['openai', 'compatible'], description: 'openai: OpenAI’s own API (foreign sampling parameters dropped); compatible: any other server (default from the baseUrl host)' },
    nativeResponses: { type: 'boolean', description: 'Pass /v1/responses through to POST /responses (default: true for OpenAI’s own API only)' },
    developerRole: { type: 'boolean', description: 'false: developer messages are sent as system (reported)' },
  },
} as const;

/** Whether this configuration passes Responses requests through (see `nativeResponses`). */
export function servesResponses(options: Pick<OpenAiOptions, 'baseUrl' | 'nativeResponses' | 'server'>): boolean {
  return options.nativeResponses ?? serverOf(options) === 'openai';
}

/** The client's Responses body as it came (the stored-Responses work may have expanded it), with the target's model. */
export function buildResponsesBody(call: ProviderCall): Record<string, unknown> {
  return { ...call.native!.body, model: call.model };
}

/**
 * The upstream body for one attempt: the client's request with the target's model, less the
 * gateway's own fields (thinking signatures, cache markers: a translated Messages request's cache
 * markers arrive as `prompt_cache_key` instead; past thinking is reported dropped), and
 * `developer` as `system` for a server without that role, and for OpenAI's own API without the
 * sampling parameters it refuses (server.ts).
 */
export function buildChatBody(call: ProviderCall, options: { developerRole?: boolean; server?: OpenAiServer } = {}): ChatCompletionRequest {
  let body: ChatCompletionRequest = { ...withoutChatExtensions(call), model: call.model };
  if (options.server === 'openai') body = withoutForeignSampling(call, body);
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
 * OpenAI chunks pass through as they are (verbatim: never changed here). An `error` event inside a 200 stream is a failure, and
 * so is a stream that ends before any choice finished (a cut connection can look like an end).
 */
export function createStreamTranslator(provider: string): StreamTranslator {
  let finished = false;
  return {
    verbatim: true,
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
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, nativeProtocols: [RESPONSES], extraParams: 'all' },
  nativeProtocols: (options) => (servesResponses(options) ? [RESPONSES] : []),
  // An API key from gateway.yaml, or none (a local server): for /readyz, metrics and validate --strict.
  identity: (options) => ({ source: options.apiKey ? 'api-key' : 'none', refreshes: 0, failures: 0 }),
  endpoint(options) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    return { baseUrl: options.baseUrl, headers };
  },
  buildRequest(call, options) {
    if (call.native?.protocol === RESPONSES) return { path: '/responses', body: buildResponsesBody(call) };
    return { path: '/chat/completions', body: buildChatBody(call, { developerRole: options.developerRole, server: serverOf(options) }) };
  },
  toCompletion: (body, call) => (call.native?.protocol === RESPONSES ? responsesToCompletion(body, call) : toCompletion(body)),
  createStreamTranslator(call) {
    return call.native?.protocol === RESPONSES ? createResponsesStreamTranslator(call) : createStreamTranslator(call.provider);
  },
  readError: openAiStyleFailure,
  embeddings: {
    buildRequests: (call) => [{ path: '/embeddings', body: buildEmbeddingsBody(call) }],
    toEmbeddings: (body, call) => toEmbeddings(body, call),
  },
});
