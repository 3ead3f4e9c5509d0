/**
 * Azure OpenAI: the OpenAI wire format behind Azure's URLs and auth. Two URL forms:
 * `deployments` (`/openai/deployments/{deployment}/chat/completions?api-version=...`, the
 * target's model names the deployment) and `v1` (`/openai/v1/chat/completions`, model in the
 * body). The translation is the openai plugin's; only Azure's quirks are handled here:
 *
 * - streams open with a chunk that has an empty id, model and object and no choices, only the
 *   `prompt_filter_results`: it is folded into the next chunk, so every chunk a client sees is a
 *   complete chat.completion.chunk and the filter results are kept;
 * - with asynchronous content filtering, chunks carry choices with `content_filter_results` (and
 *   offsets) but no `delta`: an empty delta is added, so they stay valid chunks;
 * - `content_filter_results` on choices and `finish_reason: "content_filter"` pass through;
 * - errors: `code` "429" as a string with the wait only in the message, and content-filter 400s
 *   whose `innererror` says which categories were filtered (kept in the message).
 */
import { defineHttpProvider, type ChatCompletionChunk, type StreamTranslator, type UpstreamFailure } from 'switchyard-gateway';
import { openAiStyleFailure } from 'switchyard-gateway/kit';
import { buildChatBody, createStreamTranslator as openAiStream, toCompletion } from '../openai/index.ts';
import { azureEmbeddingsPath } from './embeddings.ts';
import { buildEmbeddingsBody, toEmbeddings } from '../openai/embeddings.ts';

export interface AzureOptions {
  /** https://{resource}.openai.azure.com */
  endpoint: string;
  apiKey: string;
  /** The `api-version` of the deployments URLs (default a current GA version). */
  apiVersion?: string;
  mode?: 'deployments' | 'v1';
  headers?: Record<string, string>;
}

export const DEFAULT_API_VERSION = '2024-10-21';

/** The path for one attempt. */
export function azurePath(options: Pick<AzureOptions, 'mode' | 'apiVersion'>, model: string): string {
  if (options.mode === 'v1') return '/openai/v1/chat/completions';
  return `/openai/deployments/${encodeURIComponent(model)}/chat/completions?api-version=${encodeURIComponent(options.apiVersion ?? DEFAULT_API_VERSION)}`;
}

/** Azure's stream on top of OpenAI's translator. */
export function createAzureStreamTranslator(provider: string): StreamTranslator {
  const inner = openAiStream(provider);
  let pendingFilter: unknown;
  return {
    push(event) {
      const chunk = inner.push(event) as ChatCompletionChunk | undefined;
      if (!chunk || typeof chunk !== 'object') return chunk;
      if (isPreamble(chunk)) {
        if (chunk.prompt_filter_results !== undefined) pendingFilter = chunk.prompt_filter_results;
        return undefined;
      }
      if (pendingFilter !== undefined) {
        chunk.prompt_filter_results = pendingFilter;
        pendingFilter = undefined;
      }
      if (Array.isArray(chunk.choices)) {
        for (const choice of chunk.choices) {
          if (choice && typeof choice === 'object' && (choice.delta === undefined || choice.delta === null)) choice.delta = {};
        }
      }
      return chunk;
    },
    end: () => inner.end?.(),
  };
}

/** The filter-results-only opening chunk: no id, no choices, no usage. */
function isPreamble(chunk: ChatCompletionChunk): boolean {
  return !chunk.id && Array.isArray(chunk.choices) && chunk.choices.length === 0 && !chunk.usage;
}

/** Azure's envelope is OpenAI's, with its own ways of saying "wait" and "filtered". */
export function readAzureError(status: number, body: unknown): UpstreamFailure {
  const failure = openAiStyleFailure(status, body);
  const wait = /try again in (\d+) seconds?/i.exec(failure.message);
  if (wait) failure.retryAfterMs = Number(wait[1]) * 1000;
  const error = (body as { error?: { code?: unknown; innererror?: { code?: unknown; content_filter_result?: unknown } } } | undefined)?.error;
  const inner = error?.innererror;
  if (error?.code === 'content_filter' || inner?.code === 'ResponsibleAIPolicyViolation' || inner?.content_filter_result) {
    failure.category = 'content_policy';
    const filtered = filteredCategories(inner?.content_filter_result);
    failure.message = `${failure.message.trim()} (content filter${filtered.length ? `: ${filtered.join(', ')}` : ''})`;
    // Azure blames "prompt"; in a chat request that is the messages.
    if (failure.param === 'prompt') failure.param = 'messages';
  }
  return failure;
}

/** `{violence: {filtered: true, severity: "medium"}, jailbreak: {filtered: true, detected: true}}` → ["violence (medium)", "jailbreak"]. */
function filteredCategories(result: unknown): string[] {
  if (!result || typeof result !== 'object') return [];
  const out: string[] = [];
  for (const [name, value] of Object.entries(result as Record<string, unknown>)) {
    const v = value as { filtered?: unknown; severity?: unknown } | null;
    if (!v || typeof v !== 'object' || v.filtered !== true) continue;
    out.push(typeof v.severity === 'string' && v.severity !== 'safe' ? `${name} (${v.severity})` : name);
  }
  return out;
}

export default defineHttpProvider<AzureOptions>({
  id: 'azure-openai',
  description: 'Azure OpenAI (deployment and v1 URLs)',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['endpoint', 'apiKey'],
    properties: {
      endpoint: { type: 'string', pattern: '^https?://' },
      apiKey: { type: 'string', minLength: 1 },
      apiVersion: { type: 'string', default: DEFAULT_API_VERSION },
      mode: { enum: ['deployments', 'v1'], default: 'deployments' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['apiKey'],
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, extraParams: 'all' },
  endpoint: (options) => ({ baseUrl: options.endpoint.replace(/\/+$/, ''), headers: { ...options.headers, 'api-key': options.apiKey } }),
  buildRequest: (call, options) => ({ path: azurePath(options, call.model), body: buildChatBody(call) }),
  toCompletion,
  createStreamTranslator: (call) => createAzureStreamTranslator(call.provider),
  readError: readAzureError,
  embeddings: {
    buildRequests: (call, options) => [{ path: azureEmbeddingsPath({ mode: options.mode, apiVersion: options.apiVersion ?? DEFAULT_API_VERSION }, call.model), body: buildEmbeddingsBody(call) }],
    toEmbeddings: (body, call) => toEmbeddings(body, call),
  },
});
