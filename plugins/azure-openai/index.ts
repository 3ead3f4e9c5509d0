/**
 * Azure OpenAI: the OpenAI wire format behind Azure's URLs and auth. Two URL forms:
 * `deployments` (`/openai/deployments/{deployment}/chat/completions?api-version=...`, the
 * target's model names the deployment) and `v1` (`/openai/v1/chat/completions`, model in the
 * body). The translation is the openai plugin's; only Azure's quirks are handled here.
 */
import { defineHttpProvider, type SseJsonEvent } from '../../src/providers/http-provider.ts';
import { openAiStyleFailure } from '../../src/protocol/openai-errors.ts';
import type { ChatCompletionChunk } from '../../src/openai-types.ts';
import type { StreamTranslator } from '../../src/plugin-api.ts';
import type { UpstreamFailure } from '../../src/providers/upstream-error.ts';
import { buildChatBody, createStreamTranslator as openAiStream, toCompletion } from '../openai/index.ts';

export interface AzureOptions {
  /** https://{resource}.openai.azure.com */
  endpoint: string;
  apiKey: string;
  apiVersion?: string;
  mode?: 'deployments' | 'v1';
  headers?: Record<string, string>;
}

/**
 * Azure opens streams with a chunk that has no id, model or choices, only
 * `prompt_filter_results`. It is folded into the next chunk, so every chunk a client sees is a
 * complete chat.completion.chunk and the filter results are kept.
 */
export function createAzureStreamTranslator(provider: string): StreamTranslator {
  const inner = openAiStream(provider);
  let pendingFilter: unknown;
  return {
    push(event) {
      const chunk = inner.push(event) as ChatCompletionChunk;
      if (chunk && chunk.id === '' && chunk.choices?.length === 0 && !chunk.usage) {
        pendingFilter = chunk.prompt_filter_results;
        return undefined;
      }
      if (pendingFilter !== undefined && chunk) {
        chunk.prompt_filter_results = pendingFilter;
        pendingFilter = undefined;
      }
      return chunk;
    },
    end: () => inner.end?.(),
  };
}

/** Azure's envelope is OpenAI's, with `code` "429" as a string and the wait only in the message. */
export function readAzureError(status: number, body: unknown): UpstreamFailure {
  const failure = openAiStyleFailure(status, body);
  const wait = /try again in (\d+) seconds?/i.exec(failure.message);
  if (wait) failure.retryAfterMs = Number(wait[1]) * 1000;
  return failure;
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
      apiVersion: { type: 'string', default: '2024-10-21' },
      mode: { enum: ['deployments', 'v1'], default: 'deployments' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['apiKey'],
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true },
  endpoint: (options) => ({ baseUrl: options.endpoint.replace(/\/+$/, ''), headers: { ...options.headers, 'api-key': options.apiKey } }),
  buildRequest(call, options) {
    const body = buildChatBody(call);
    if (options.mode === 'v1') return { path: '/openai/v1/chat/completions', body };
    return { path: `/openai/deployments/${encodeURIComponent(call.model)}/chat/completions?api-version=${encodeURIComponent(options.apiVersion ?? '2024-10-21')}`, body };
  },
  toCompletion,
  createStreamTranslator: (call) => createAzureStreamTranslator(call.provider),
  readError: readAzureError,
});

export type { SseJsonEvent };
