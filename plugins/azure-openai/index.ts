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
 *   whose `innererror` says which categories were filtered (kept in the message);
 * - like OpenAI's own API it refuses other servers' sampling parameters (`top_k`...): they are
 *   dropped and reported (../openai/server.ts).
 *
 * `/v1/responses` requests are passed through natively (`nativeResponses`, default on): Azure's
 * Responses API takes the deployment in the body's `model` in both URL forms, at
 * `/openai/v1/responses` (v1) or `/openai/responses?api-version=...` (deployments, with
 * `responsesApiVersion`, a preview version: the GA chat versions have no Responses API).
 *
 * Auth: an API key (`apiKey`, or `auth: { type: api-key, key }`) in the `api-key` header, or an
 * Entra ID token (`auth: { type: entra, ... }`, ./entra.ts) as `Authorization: Bearer`.
 */
import { defineHttpProvider, type ChatCompletionChunk, type IdentityStatus, type ProviderEnv, type StreamTranslator, type UpstreamFailure } from 'switchyard-gateway';
import { createResponsesStreamTranslator, openAiStyleFailure, responsesToCompletion, type RefreshingCredential } from 'switchyard-gateway/kit';
import { DEFAULT_SCOPE, entraSourceOf, entraToken, type EntraAuth } from './entra.ts';
import { buildChatBody, buildResponsesBody, createStreamTranslator as openAiStream, RESPONSES, toCompletion } from '../openai/index.ts';
import { azureEmbeddingsPath } from './embeddings.ts';
import { buildEmbeddingsBody, toEmbeddings } from '../openai/embeddings.ts';

export interface AzureOptions {
  /** https://{resource}.openai.azure.com */
  endpoint: string;
  /** Sent in the `api-key` header; or give `auth`. */
  apiKey?: string;
  auth?: EntraAuth | ApiKeyAuth;
  /** The `api-version` of the deployments URLs (default a current GA version). */
  apiVersion?: string;
  mode?: 'deployments' | 'v1';
  headers?: Record<string, string>;
  /** Pass `/v1/responses` through to Azure's Responses API (default true). */
  nativeResponses?: boolean;
  /** The `api-version` of the Responses URL in `deployments` mode (default a preview that has it). */
  responsesApiVersion?: string;
}

export interface ApiKeyAuth {
  type: 'api-key';
  key: string;
}

/** The options once prepared: the key to send, or the Entra token kept fresh. */
export interface PreparedAzure extends AzureOptions {
  key?: string;
  token?: RefreshingCredential<string>;
}

const API_KEY_IDENTITY: IdentityStatus = Object.freeze({ source: 'api-key', refreshes: 0, failures: 0 });

/** Resolves the auth once per config generation; throws (a config error) for auth that is wrong. */
export async function prepareAzure(options: AzureOptions, env: Pick<ProviderEnv, 'name' | 'configDir'>): Promise<PreparedAzure> {
  const { apiKey, auth } = options;
  if (apiKey !== undefined && auth !== undefined) throw new Error('give apiKey or auth, not both');
  if (auth?.type === 'entra') {
    entraSourceOf(auth);
    return { ...options, token: await entraToken(env.name, auth, env.configDir) };
  }
  const key = auth?.type === 'api-key' ? auth.key : apiKey;
  if (!key) throw new Error('no credentials: set apiKey, or auth (type entra or api-key)');
  return { ...options, key };
}

const NON_EMPTY = { type: 'string', minLength: 1 } as const;
const AUTH_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: {
        type: { const: 'entra' },
        tenantId: NON_EMPTY,
        clientId: NON_EMPTY,
        clientSecret: NON_EMPTY,
        certificateFile: NON_EMPTY,
        managedIdentityClientId: NON_EMPTY,
        federatedTokenFile: NON_EMPTY,
        authorityHost: { type: 'string', pattern: '^https://' },
        scope: { ...NON_EMPTY, default: DEFAULT_SCOPE },
      },
    },
    { type: 'object', additionalProperties: false, required: ['type', 'key'], properties: { type: { const: 'api-key' }, key: NON_EMPTY } },
  ],
} as const;

export const DEFAULT_API_VERSION = '2024-10-21';
export const DEFAULT_RESPONSES_API_VERSION = '2025-04-01-preview';

/** The Responses path: Azure names the deployment in the body's `model` in both URL forms. */
export function azureResponsesPath(options: Pick<AzureOptions, 'mode' | 'responsesApiVersion'>): string {
  if (options.mode === 'v1') return '/openai/v1/responses';
  return `/openai/responses?api-version=${encodeURIComponent(options.responsesApiVersion ?? DEFAULT_RESPONSES_API_VERSION)}`;
}

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

export default defineHttpProvider<AzureOptions, PreparedAzure>({
  id: 'azure-openai',
  description: 'Azure OpenAI (deployment and v1 URLs)',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['endpoint'],
    properties: {
      endpoint: { type: 'string', pattern: '^https?://' },
      apiKey: { type: 'string', minLength: 1 },
      auth: AUTH_SCHEMA,
      apiVersion: { type: 'string', default: DEFAULT_API_VERSION },
      mode: { enum: ['deployments', 'v1'], default: 'deployments' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      nativeResponses: { type: 'boolean', default: true },
      responsesApiVersion: { type: 'string', default: DEFAULT_RESPONSES_API_VERSION },
    },
  },
  secretOptions: ['apiKey', 'auth.key', 'auth.clientSecret'],
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, nativeProtocols: [RESPONSES], extraParams: 'all' },
  prepare: prepareAzure,
  nativeProtocols: (options) => (options.nativeResponses === false ? [] : [RESPONSES]),
  endpoint: (options) => ({ baseUrl: options.endpoint.replace(/\/+$/, ''), headers: options.key ? { ...options.headers, 'api-key': options.key } : { ...options.headers } }),
  async signRequest(_request, options): Promise<Record<string, string>> {
    return options.token ? { authorization: `Bearer ${await options.token.get()}` } : {};
  },
  identity: (options) => options.token?.status() ?? API_KEY_IDENTITY,
  async checkIdentity(options) {
    if (!options.token) return API_KEY_IDENTITY;
    await options.token.get();
    return options.token.status();
  },
  buildRequest: (call, options) =>
    call.native?.protocol === RESPONSES
      ? { path: azureResponsesPath(options), body: buildResponsesBody(call) }
      : { path: azurePath(options, call.model), body: buildChatBody(call, { server: 'openai' }) },
  toCompletion: (body, call) => (call.native?.protocol === RESPONSES ? responsesToCompletion(body, call) : toCompletion(body)),
  createStreamTranslator: (call) => (call.native?.protocol === RESPONSES ? createResponsesStreamTranslator(call) : createAzureStreamTranslator(call.provider)),
  readError: readAzureError,
  embeddings: {
    buildRequests: (call, options) => [{ path: azureEmbeddingsPath({ mode: options.mode, apiVersion: options.apiVersion ?? DEFAULT_API_VERSION }, call.model), body: buildEmbeddingsBody(call) }],
    toEmbeddings: (body, call) => toEmbeddings(body, call),
  },
});
