/**
 * Gemini on Vertex AI (`POST .../publishers/google/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`), with Vertex embeddings (`:predict`) and token counts
 * (`:countTokens`), authorised by a Google access token (identity.ts) or an Express mode API key.
 *
 * The wire is the Gemini API's, so the translations are the kit's (src/translate/gemini), and a
 * client that spoke the Gemini API way in is passed through as it came. Claude on Vertex is the
 * sibling plugin `vertex-anthropic`: a separate plugin because what a provider can honour
 * (`capabilities`: the core's parameter checks, the conformance battery, the native protocols it
 * takes) is one declaration per plugin, and Gemini's and Anthropic's differ.
 */
import { defineHttpProvider } from 'switchyard-gateway';
import {
  buildGeminiRequest,
  createGeminiStreamTranslator,
  GEMINI_CAPABILITIES,
  GEMINI_COUNT_TOKENS,
  geminiToCompletion,
  geminiTokenCount,
  readGoogleError,
  vertexCountTokensFields,
} from 'switchyard-gateway/kit';
import { buildPredictRequests, TASK_TYPES, toEmbeddings, type PredictRequest } from './embeddings.ts';
import { publisherModelPath, vertexBaseUrl, type VertexSite } from './endpoint.ts';
import { AUTH_SECRETS, authSchema, prepareIdentity, type VertexAuth, type VertexIdentity } from './identity.ts';

export interface VertexOptions {
  /** The Google Cloud project; required unless `auth` is an Express mode API key. */
  project?: string;
  /** A region (us-central1, europe-west4...) or `global` (default). */
  location?: string;
  /** Default: https://{location}-aiplatform.googleapis.com (https://aiplatform.googleapis.com for global and Express mode). */
  baseUrl?: string;
  /** The API version in the path (default v1). */
  apiVersion?: string;
  /** Default `{ type: google }`: Application Default Credentials. */
  auth?: VertexAuth;
  /** Gemini `safetySettings` sent with every request ({category, threshold} objects). */
  safetySettings?: Array<Record<string, unknown>>;
  /** The embeddings `task_type` when the request names none. */
  embeddingTaskType?: (typeof TASK_TYPES)[number];
  headers?: Record<string, string>;
}

interface Prepared extends VertexOptions {
  site: VertexSite;
  identity: VertexIdentity;
}

export default defineHttpProvider<VertexOptions, Prepared>({
  id: 'vertex',
  description: 'Gemini on Google Cloud Vertex AI (generateContent, embeddings), Google identity or Express mode API key',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project: { type: 'string', minLength: 1 },
      location: { type: 'string', pattern: '^[a-z0-9-]+$', default: 'global' },
      baseUrl: { type: 'string', pattern: '^https?://' },
      apiVersion: { type: 'string', pattern: '^[A-Za-z0-9.]+$', default: 'v1' },
      auth: authSchema({ apiKey: true }),
      safetySettings: {
        type: 'array',
        items: { type: 'object', required: ['category', 'threshold'], properties: { category: { type: 'string' }, threshold: { type: 'string' } } },
      },
      embeddingTaskType: { enum: TASK_TYPES },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: AUTH_SECRETS,
  // A client that spoke the Gemini API (src/ingress/gemini) is passed through, its countTokens too: see buildRequest.
  capabilities: { ...GEMINI_CAPABILITIES, nativeProtocols: ['gemini-generate-content', GEMINI_COUNT_TOKENS], extraParams: ['top_k', 'google', 'extra_body'] },
  async prepare(options, env) {
    const express = options.auth?.type === 'api-key';
    // A project names where Google-identity requests go; an Express mode key carries its own.
    if (!express && !options.project) throw new Error('project is required (the Google Cloud project that serves the models), unless auth is an Express mode api-key');
    const identity = await prepareIdentity(options.auth, env, { project: options.project });
    if ('unavailable' in identity) return identity;
    const location = options.location ?? 'global';
    const site: VertexSite = { project: express ? undefined : options.project, location, apiVersion: options.apiVersion ?? 'v1' };
    return { ...options, site, identity };
  },
  endpoint: (options) => ({ baseUrl: options.baseUrl ?? vertexBaseUrl(options.site.project === undefined ? 'global' : options.site.location), headers: { ...options.headers } }),
  signRequest: (_request, options) => options.identity.headers(),
  identity: (options) => options.identity.status(),
  // `validate --strict`: a token fetched once (an Express key has nothing to fetch).
  async checkIdentity(options) {
    await options.identity.headers();
    return options.identity.status();
  },
  buildRequest(call, options) {
    // A client's own countTokens request, counted as it sent it (the fields Vertex counts).
    if (call.native?.protocol === GEMINI_COUNT_TOKENS) return { path: publisherModelPath(options.site, 'google', call.model, 'countTokens'), body: vertexCountTokensFields(call.native.body) };
    const path = publisherModelPath(options.site, 'google', call.model, call.stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
    // The client's own generateContent body goes as it came (the model is in the path): thought
    // signatures, function-call ids, cachedContent all survive.
    if (call.native?.protocol === 'gemini-generate-content') {
      const body = call.native.body.safetySettings === undefined && options.safetySettings?.length ? { ...call.native.body, safetySettings: options.safetySettings } : call.native.body;
      return { path, body };
    }
    return { path, body: buildGeminiRequest(call, { safetySettings: options.safetySettings }) };
  },
  toCompletion: (body, call) => geminiToCompletion(body, call),
  createStreamTranslator: (call) => createGeminiStreamTranslator(call),
  readError: (status, body) => readGoogleError(status, body),
  // Vertex's countTokens takes the generateContent fields it counts at the top level.
  countTokens: {
    buildRequest: (call, options) => {
      const body = vertexCountTokensFields(buildGeminiRequest(call, { safetySettings: options.safetySettings }) as unknown as Record<string, unknown>);
      return { path: publisherModelPath(options.site, 'google', call.model, 'countTokens'), body };
    },
    toCount: (body) => geminiTokenCount(body),
  },
  embeddings: {
    buildRequests: (call, options) =>
      buildPredictRequests(call, { taskType: options.embeddingTaskType }).map((body) => ({ path: publisherModelPath(options.site, 'google', call.model, 'predict'), body })),
    toEmbeddings: (body, call, _options, answered) => toEmbeddings(body, call, answered.request.body as PredictRequest),
  },
});
