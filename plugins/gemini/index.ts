/**
 * Google Gemini API (`POST {baseUrl}/{apiVersion}/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`): requests, answers, streams,
 * function calling (thought signatures kept), images and audio, JSON output, thinking, logprobs,
 * safety blocks and errors, translated to and from the OpenAI wire format.
 *
 * The translations (request, answer, stream, google.rpc errors) are the kit's, shared with any
 * provider that speaks generateContent (src/translate/gemini); this folder adds the Gemini API's
 * URLs and key, embeddings.ts (/v1/embeddings ↔ batchEmbedContents), and the pass-through of
 * requests that came in through the Gemini API way in.
 */
import { defineHttpProvider } from 'switchyard-gateway';
import {
  buildGeminiCountTokensBody,
  buildGeminiRequest,
  createGeminiStreamTranslator,
  GEMINI_CAPABILITIES,
  GEMINI_COUNT_TOKENS,
  geminiCountTokensPassthrough,
  geminiToCompletion,
  geminiTokenCount,
  readGoogleError,
} from 'switchyard-gateway/kit';
import { buildBatchEmbedRequests, TASK_TYPES, toEmbeddings, type BatchEmbedContentsRequest } from './embeddings.ts';

export interface GeminiOptions {
  /** Default https://generativelanguage.googleapis.com */
  baseUrl?: string;
  apiKey: string;
  /** The API version in the path (default v1beta). */
  apiVersion?: string;
  /** Gemini `safetySettings` sent with every request ({category, threshold} objects). */
  safetySettings?: Array<Record<string, unknown>>;
  /** Gemini `taskType` for embeddings when the request names none (`task_type`); default unset. */
  embeddingTaskType?: (typeof TASK_TYPES)[number];
  headers?: Record<string, string>;
}

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

/** `models/x` and `x` both name model x; `tunedModels/x` is kept whole. */
export function modelPath(model: string): string {
  if (model.startsWith('tunedModels/')) return `tunedModels/${encodeURIComponent(model.slice('tunedModels/'.length))}`;
  return `models/${encodeURIComponent(model.replace(/^models\//, ''))}`;
}

export default defineHttpProvider<GeminiOptions>({
  id: 'gemini',
  description: 'Google Gemini generateContent API',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['apiKey'],
    properties: {
      baseUrl: { type: 'string', pattern: '^https?://', default: DEFAULT_BASE_URL },
      apiKey: { type: 'string', minLength: 1 },
      apiVersion: { type: 'string', pattern: '^[A-Za-z0-9.]+$', default: 'v1beta' },
      safetySettings: {
        type: 'array',
        items: { type: 'object', required: ['category', 'threshold'], properties: { category: { type: 'string' }, threshold: { type: 'string' } } },
      },
      embeddingTaskType: { enum: TASK_TYPES },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['apiKey'],
  // A client that spoke the Gemini API (src/ingress/gemini) is passed through, its countTokens too: see buildRequest.
  capabilities: { ...GEMINI_CAPABILITIES, nativeProtocols: ['gemini-generate-content', GEMINI_COUNT_TOKENS], extraParams: ['top_k', 'google', 'extra_body', 'web_search'] },
  // Its key comes from gateway.yaml (often `${GEMINI_API_KEY}`): for /readyz, metrics and validate --strict.
  identity: () => ({ source: 'api-key', refreshes: 0, failures: 0 }),
  endpoint: (options) => ({ baseUrl: options.baseUrl ?? DEFAULT_BASE_URL, headers: { ...options.headers, 'x-goog-api-key': options.apiKey } }),
  buildRequest(call, options) {
    // A client's own countTokens request, counted as it sent it (exact, and free).
    if (call.native?.protocol === GEMINI_COUNT_TOKENS) {
      return { path: `/${options.apiVersion ?? 'v1beta'}/${modelPath(call.model)}:countTokens`, body: geminiCountTokensPassthrough(call.native.body, decodeURIComponent(modelPath(call.model))) };
    }
    const method = call.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const path = `/${options.apiVersion ?? 'v1beta'}/${modelPath(call.model)}:${method}`;
    // The client's own generateContent body goes as it came (the model is in the path): thought
    // signatures, function-call ids, hosted tools, cachedContent all survive. The provider's
    // safetySettings apply when the client sent none.
    if (call.native?.protocol === 'gemini-generate-content') {
      const body = call.native.body.safetySettings === undefined && options.safetySettings?.length ? { ...call.native.body, safetySettings: options.safetySettings } : call.native.body;
      return { path, body };
    }
    return { path, body: buildGeminiRequest(call, { safetySettings: options.safetySettings }) };
  },
  toCompletion: (body, call) => geminiToCompletion(body, call),
  createStreamTranslator: (call) => createGeminiStreamTranslator(call),
  readError: (status, body) => readGoogleError(status, body),
  // Token counts are Gemini's own (models/{m}:countTokens), of the request as it would be sent.
  countTokens: {
    buildRequest: (call, options) => ({
      path: `/${options.apiVersion ?? 'v1beta'}/${modelPath(call.model)}:countTokens`,
      body: buildGeminiCountTokensBody(call, decodeURIComponent(modelPath(call.model)), { safetySettings: options.safetySettings }),
    }),
    toCount: (body) => geminiTokenCount(body),
  },
  embeddings: {
    buildRequests: (call, options) =>
      buildBatchEmbedRequests(call, { taskType: options.embeddingTaskType }).map((body) => ({ path: `/${options.apiVersion ?? 'v1beta'}/${modelPath(call.model)}:batchEmbedContents`, body })),
    toEmbeddings: (body, call, _options, answered) => toEmbeddings(body, call, answered.request.body as BatchEmbedContentsRequest),
  },
});
