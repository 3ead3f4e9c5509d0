/**
 * AWS Bedrock Runtime, Converse and ConverseStream (`POST /model/{modelId}/converse`,
 * `/converse-stream`): one request shape for every Bedrock chat model, SigV4-signed, streams in
 * the binary AWS event-stream framing. The translations (Converse request, answer, event stream,
 * errors) are the kit's (src/translate/bedrock); this folder adds the options, who the gateway
 * is to AWS (identity.ts: the AWS credential chain, assumed roles, API keys), SigV4 (sign.ts),
 * Claude's own Messages body over InvokeModel (messages.ts) and embeddings.ts (InvokeModel for
 * Titan and Cohere embeddings).
 */
import type { SignatureV4 } from '@smithy/signature-v4';
import { defineHttpProvider, isProviderUnavailable, type ProviderEnv, type ProviderUnavailable } from 'switchyard-gateway';
import {
  anthropicToCompletion,
  buildConverseCountTokensRequest,
  buildConverseRequest,
  converseTokenCount,
  CONVERSE_CAPABILITIES,
  converseToCompletion,
  createConverseStreamTranslator,
  decodeAwsEventStream,
  readBedrockError,
  type ConverseRequestSettings,
} from 'switchyard-gateway/kit';
import { createSigner, signatureHeaders } from './sign.ts';
import { AUTH_SCHEMA, authorizerFor, type Authorizer, type BedrockAuth } from './identity.ts';
import { buildMessagesCountTokensRequest, buildMessagesRequest, createMessagesStreamTranslator, MESSAGES_CAPABILITIES, unwrapChunk, usesMessages, type BedrockApi } from './messages.ts';
import { buildEmbeddingBodies, EMBEDDING_CONCURRENCY, invokePath, toEmbeddings, type CohereRequest, type TitanRequest } from './embeddings.ts';

export interface BedrockOptions {
  /** e.g. us-east-1: names the endpoint and the signing scope. */
  region: string;
  /**
   * Who the gateway is to AWS (identity.ts): `{ type: aws }` the default credential chain (or a
   * `profile`), `{ type: aws-keys, ... }`, either with `assumeRole`, or `{ type: api-key, key }`.
   * Without it: the keys below, else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN.
   */
  auth?: BedrockAuth;
  /**
   * `converse` (default): every model through Converse. `messages`: InvokeModel with Anthropic's
   * Messages body (Claude only), and the `/v1/messages` pass-through. `auto`: the Messages body
   * for Claude model ids, Converse for the others (no pass-through).
   */
  api?: BedrockApi;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Default https://bedrock-runtime.{region}.amazonaws.com (a VPC endpoint or a proxy otherwise). */
  endpoint?: string;
  /** `inferenceConfig.maxTokens` when the request sets none (default: the model's own). */
  maxTokens?: number;
  /** A Bedrock guardrail applied to every request. */
  guardrail?: ConverseRequestSettings['guardrail'];
  /** Cohere Embed `input_type` when the request names none (default search_document). */
  cohereInputType?: 'search_document' | 'search_query' | 'classification' | 'clustering';
  headers?: Record<string, string>;
}

/** The options once prepared: how requests are authorized, and the signer when they are signed. */
interface SigningOptions extends BedrockOptions {
  authorizer: Authorizer;
  signer?: SignatureV4;
}

/**
 * Sets up the identity once per config generation. Static keys that are missing make the
 * provider unavailable with the reason (startup banner, /readyz, a config warning); credentials
 * from the chain are fetched now, behind startup, and a failure is logged (requests answer 503
 * until a fetch succeeds).
 */
export async function prepareSigning(options: BedrockOptions, env: Pick<ProviderEnv, 'name' | 'log'>, processEnv: NodeJS.ProcessEnv = process.env): Promise<SigningOptions | ProviderUnavailable> {
  const keys = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, sessionToken: options.sessionToken };
  const authorizer = await authorizerFor(options.auth, { provider: env.name, region: options.region, keys }, processEnv);
  if (isProviderUnavailable(authorizer)) return authorizer;
  if (authorizer.kind === 'bearer') return { ...options, authorizer };
  authorizer.credentials().catch(() => env.log.warn({ provider: env.name, identity: authorizer.status() }, 'bedrock: no AWS credentials yet'));
  return { ...options, authorizer, signer: createSigner(options.region, authorizer.credentials) };
}

export default defineHttpProvider<BedrockOptions, SigningOptions>({
  id: 'bedrock',
  description: 'AWS Bedrock Runtime (Converse and ConverseStream, SigV4)',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['region'],
    properties: {
      region: { type: 'string', pattern: '^[a-z0-9-]+$' },
      auth: AUTH_SCHEMA,
      api: { enum: ['converse', 'messages', 'auto'] },
      accessKeyId: { type: 'string', minLength: 1 },
      secretAccessKey: { type: 'string', minLength: 1 },
      sessionToken: { type: 'string', minLength: 1 },
      endpoint: { type: 'string', pattern: '^https?://' },
      maxTokens: { type: 'integer', minimum: 1 },
      guardrail: {
        type: 'object',
        additionalProperties: false,
        required: ['identifier', 'version'],
        properties: {
          identifier: { type: 'string', minLength: 1 },
          version: { type: 'string', minLength: 1 },
          trace: { enum: ['enabled', 'disabled', 'enabled_full'] },
        },
      },
      cohereInputType: { enum: ['search_document', 'search_query', 'classification', 'clustering'] },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  secretOptions: ['accessKeyId', 'secretAccessKey', 'sessionToken', 'auth.secretAccessKey', 'auth.sessionToken', 'auth.key'],
  capabilities: { ...CONVERSE_CAPABILITIES, extraParams: ['thinking', 'web_search'] },
  prepare: (options, env) => prepareSigning(options, env),
  endpoint: (options) => ({ baseUrl: options.endpoint ?? `https://bedrock-runtime.${options.region}.amazonaws.com`, headers: { ...options.headers } }),
  // Only a provider that sends every request as Messages can pass a Messages request (and its token count) through.
  nativeProtocols: (options) => (options.api === 'messages' ? ['anthropic-messages', 'anthropic-count-tokens'] : []),
  // The parameter checks follow the body a target is sent: Claude's Messages body carries what Converse cannot.
  capabilitiesFor: (options, model) => (usesMessages(options.api, model) ? MESSAGES_CAPABILITIES : undefined),
  buildRequest(call, options) {
    if (call.native?.protocol === 'anthropic-count-tokens') return buildMessagesCountTokensRequest(call, { maxTokens: options.maxTokens });
    return usesMessages(options.api, call.model)
      ? buildMessagesRequest(call, { maxTokens: options.maxTokens })
      : buildConverseRequest(call, { maxTokens: options.maxTokens, guardrail: options.guardrail });
  },
  // A passed-through count_tokens is answered in Anthropic's shape.
  readNativeAnswer: (body, call) => (call.native?.protocol === 'anthropic-count-tokens' ? { input_tokens: converseTokenCount(body) } : body),
  signRequest: async (request, options) => (options.signer ? signatureHeaders(options.signer, request) : bearer(options.authorizer)),
  identity: (options) => options.authorizer.status(),
  // `validate --strict`: the credentials fetched once (a bearer key has nothing to fetch).
  async checkIdentity(options) {
    if (options.authorizer.kind === 'sigv4') await options.authorizer.credentials();
    return options.authorizer.status();
  },
  toCompletion: (body, call, options) => (usesMessages(options.api, call.model) ? anthropicToCompletion(body, call) : converseToCompletion(body, call)),
  createStreamTranslator: (call, options) => (usesMessages(options.api, call.model) ? createMessagesStreamTranslator(call) : createConverseStreamTranslator(call)),
  decodeStream: (body) => mapEvents(decodeAwsEventStream(body), unwrapChunk),
  readError: readBedrockError,
  // Token counts are Bedrock's own (CountTokens), of the Converse request as it would be sent.
  countTokens: {
    buildRequest: (call, options) => buildConverseCountTokensRequest(call, { maxTokens: options.maxTokens, guardrail: options.guardrail }),
    toCount: (body) => converseTokenCount(body),
  },
  embeddings: {
    buildRequests: (call, options) => buildEmbeddingBodies(call, { cohereInputType: options.cohereInputType }).map((body) => ({ path: invokePath(call.model), body })),
    toEmbeddings: (body, call, _options, answered) => toEmbeddings(body, call, answered.request.body as TitanRequest | CohereRequest, answered.headers),
    concurrency: EMBEDDING_CONCURRENCY,
  },
});

/** A Bedrock API key: `Authorization: Bearer`, in place of a signature. */
function bearer(authorizer: Authorizer): Record<string, string> {
  return authorizer.kind === 'bearer' ? { authorization: `Bearer ${authorizer.key}` } : {};
}

async function* mapEvents<T>(events: AsyncIterable<T>, map: (event: T) => unknown): AsyncGenerator<unknown> {
  for await (const event of events) yield map(event);
}
