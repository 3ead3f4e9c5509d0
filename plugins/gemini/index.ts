/**
 * Google Gemini API (`models/{model}:generateContent` and `:streamGenerateContent?alt=sse`,
 * `x-goog-api-key`): requests, answers, streams, function calling, images, JSON output, safety
 * blocks and errors, translated to and from the OpenAI wire format.
 */
import { defineHttpProvider } from '../../src/providers/http-provider.ts';
import { buildGenerateRequest } from './request.ts';
import { toCompletion } from './response.ts';
import { createStreamTranslator } from './stream.ts';
import { readGoogleError } from './errors.ts';

export interface GeminiOptions {
  /** Default https://generativelanguage.googleapis.com */
  baseUrl?: string;
  apiKey: string;
  /** The API version in the path (default v1beta). */
  apiVersion?: string;
  headers?: Record<string, string>;
}

export default defineHttpProvider<GeminiOptions>({
  id: 'gemini',
  description: 'Google Gemini generateContent API',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['apiKey'],
    properties: {
      baseUrl: { type: 'string', pattern: '^https?://', default: 'https://generativelanguage.googleapis.com' },
      apiKey: { type: 'string', minLength: 1 },
      apiVersion: { type: 'string', default: 'v1beta' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['apiKey'],
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, unsupportedParams: ['logprobs', 'logit_bias'] },
  endpoint: (options) => ({ baseUrl: options.baseUrl ?? 'https://generativelanguage.googleapis.com', headers: { ...options.headers, 'x-goog-api-key': options.apiKey } }),
  buildRequest(call, options) {
    const model = encodeURIComponent(call.model.replace(/^models\//, ''));
    const method = call.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return { path: `/${options.apiVersion ?? 'v1beta'}/models/${model}:${method}`, body: buildGenerateRequest(call) };
  },
  toCompletion: (body, call) => toCompletion(body, call),
  createStreamTranslator: (call) => createStreamTranslator(call),
  readError: readGoogleError,
});
