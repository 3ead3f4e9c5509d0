/**
 * Claude on Vertex AI: Anthropic's Messages body over
 * `POST .../publishers/anthropic/models/{model}:rawPredict` and `:streamRawPredict`
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude), with
 * `anthropic_version: vertex-2023-10-16` in the body and the model in the path only; answers and
 * streams are Anthropic's own, so the kit's Anthropic translations read them.
 *
 * A client that spoke the Messages API (`/v1/messages`) is passed through: thinking signatures,
 * `cache_control`, server tools and `anthropic-beta` arrive unchanged. Token counts go to Vertex's
 * `count-tokens` model. Authorisation is a Google access token (../vertex/identity.ts; Express
 * mode keys do not serve partner models). A separate plugin from `vertex` because capabilities are
 * one declaration per plugin (see ../vertex/index.ts).
 */
import { defineHttpProvider } from 'switchyard-gateway';
import { ANTHROPIC_CAPABILITIES, anthropicToCompletion, buildAnthropicRequest, createAnthropicStreamTranslator, readAnthropicError, readGoogleError } from 'switchyard-gateway/kit';
import { publisherModelPath, vertexBaseUrl, type VertexSite } from '../vertex/endpoint.ts';
import { AUTH_SECRETS, authSchema, prepareIdentity, type GoogleAuthOption, type VertexIdentity } from '../vertex/identity.ts';

/** The Messages API version Vertex takes, in the body instead of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface VertexAnthropicOptions {
  project: string;
  /** A region Claude is served in (us-east5, europe-west1...) or `global` (default). */
  location?: string;
  /** Default: https://{location}-aiplatform.googleapis.com (https://aiplatform.googleapis.com for global). */
  baseUrl?: string;
  /** The API version in the path (default v1). */
  apiVersion?: string;
  /** Default `{ type: google }`: Application Default Credentials. */
  auth?: GoogleAuthOption;
  /** `max_tokens` when the request sets none (the Messages API requires one). */
  maxTokens?: number;
  /** Comma-separated `anthropic-beta` features sent with every request (a client's own are sent as they came). */
  beta?: string;
  /** `5m` or `1h`: a top-level `cache_control` on every translated request (automatic caching); default off. */
  promptCaching?: false | '5m' | '1h';
  headers?: Record<string, string>;
}

interface Prepared extends VertexAnthropicOptions {
  site: VertexSite;
  identity: VertexIdentity;
}

/** The Messages body as Vertex takes it: no `model`, the Vertex version unless the client named one. */
export function vertexMessagesBody(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { model: _model, ...rest } = body;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

/** The client's `anthropic-beta`, else the provider's; `anthropic-version` is the body's business on Vertex. */
function betaHeaders(client: Readonly<Record<string, string>> | undefined, beta: string | undefined): Record<string, string> | undefined {
  const value = client?.['anthropic-beta'] ?? beta;
  return value ? { 'anthropic-beta': value } : undefined;
}

/**
 * Claude's own errors come in Anthropic's envelope; Vertex's (authentication, quota, a model not
 * enabled in the project) in google.rpc's, `{error: {code, message, status}}`.
 */
function readVertexAnthropicError(status: number, body: unknown, headers: Parameters<typeof readAnthropicError>[2]) {
  const error = (body as { error?: { status?: unknown } } | null)?.error;
  return error && typeof error === 'object' && typeof error.status === 'string' ? readGoogleError(status, body) : readAnthropicError(status, body, headers);
}

export default defineHttpProvider<VertexAnthropicOptions, Prepared>({
  id: 'vertex-anthropic',
  description: 'Claude on Google Cloud Vertex AI (Anthropic Messages over rawPredict), Google identity',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['project'],
    properties: {
      project: { type: 'string', minLength: 1 },
      location: { type: 'string', pattern: '^[a-z0-9-]+$', default: 'global' },
      baseUrl: { type: 'string', pattern: '^https?://' },
      apiVersion: { type: 'string', pattern: '^[A-Za-z0-9.]+$', default: 'v1' },
      auth: authSchema({ apiKey: false }),
      maxTokens: { type: 'integer', minimum: 1, default: 4096 },
      beta: { type: 'string' },
      promptCaching: { enum: [false, '5m', '1h'], default: false },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: AUTH_SECRETS,
  capabilities: { ...ANTHROPIC_CAPABILITIES, nativeProtocols: ['anthropic-messages', 'anthropic-count-tokens'], extraParams: ['top_k', 'thinking'] },
  async prepare(options, env) {
    const identity = await prepareIdentity(options.auth, env, { project: options.project });
    if ('unavailable' in identity) return identity;
    return { ...options, site: { project: options.project, location: options.location ?? 'global', apiVersion: options.apiVersion ?? 'v1' }, identity };
  },
  endpoint: (options) => ({ baseUrl: options.baseUrl ?? vertexBaseUrl(options.site.location), headers: { ...options.headers } }),
  signRequest: (_request, options) => options.identity.headers(),
  identity: (options) => options.identity.status(),
  // `validate --strict`: a token fetched once (an Express key has nothing to fetch).
  async checkIdentity(options) {
    await options.identity.headers();
    return options.identity.status();
  },
  buildRequest(call, options) {
    const path = publisherModelPath(options.site, 'anthropic', call.model, call.stream ? 'streamRawPredict' : 'rawPredict');
    const native = call.native;
    if (native?.protocol === 'anthropic-messages') return { path, body: vertexMessagesBody(native.body), headers: betaHeaders(native.headers, options.beta) };
    // Vertex counts Claude tokens with its `count-tokens` model, the model named in the body.
    if (native?.protocol === 'anthropic-count-tokens') {
      return {
        path: publisherModelPath(options.site, 'anthropic', 'count-tokens', 'rawPredict'),
        body: { ...vertexMessagesBody(native.body), model: call.model },
        headers: betaHeaders(native.headers, options.beta),
      };
    }
    const body = buildAnthropicRequest(call, { maxTokens: options.maxTokens ?? 4096, promptCaching: options.promptCaching });
    return { path, body: vertexMessagesBody(body), headers: betaHeaders(undefined, options.beta) };
  },
  toCompletion: (body, call) => anthropicToCompletion(body, call),
  createStreamTranslator: (call) => createAnthropicStreamTranslator(call),
  readError: readVertexAnthropicError,
});
