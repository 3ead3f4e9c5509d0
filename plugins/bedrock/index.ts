/**
 * AWS Bedrock Runtime, Converse and ConverseStream (`POST /model/{modelId}/converse`,
 * `/converse-stream`): one request shape for every Bedrock chat model, SigV4-signed, streams in
 * the binary AWS event-stream framing. The translations (Converse request, answer, event stream,
 * errors) are the kit's (src/translate/bedrock); this folder adds the options, the credentials
 * and SigV4 (sign.ts), and embeddings.ts (InvokeModel for Titan and Cohere embeddings).
 */
import type { SignatureV4 } from '@smithy/signature-v4';
import { defineHttpProvider, type ProviderUnavailable } from 'switchyard-gateway';
import {
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
import { createSigner, resolveCredentials, signatureHeaders } from './sign.ts';
import { buildEmbeddingBodies, EMBEDDING_CONCURRENCY, invokePath, toEmbeddings, type CohereRequest, type TitanRequest } from './embeddings.ts';

export interface BedrockOptions {
  /** e.g. us-east-1: names the endpoint and the signing scope. */
  region: string;
  /** Default: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN from the environment. */
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

/** The options once prepared: credentials resolved (options, else the environment), the signer made. */
interface SigningOptions extends BedrockOptions {
  signer: SignatureV4;
}

/**
 * Resolves the credentials once per config generation. Without them the provider is reported
 * unavailable with the reason (startup banner, /readyz, a config warning), not failed per request.
 */
export function prepareSigning(options: BedrockOptions, processEnv: NodeJS.ProcessEnv = process.env): SigningOptions | ProviderUnavailable {
  const credentials = resolveCredentials(options, processEnv);
  if ('missing' in credentials) return { unavailable: credentials.missing };
  return { ...options, signer: createSigner(options.region, credentials) };
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
  secretOptions: ['accessKeyId', 'secretAccessKey', 'sessionToken'],
  capabilities: { ...CONVERSE_CAPABILITIES, extraParams: ['thinking', 'web_search'] },
  prepare: (options) => prepareSigning(options),
  endpoint: (options) => ({ baseUrl: options.endpoint ?? `https://bedrock-runtime.${options.region}.amazonaws.com`, headers: { ...options.headers } }),
  buildRequest: (call, options) => buildConverseRequest(call, { maxTokens: options.maxTokens, guardrail: options.guardrail }),
  signRequest: (request, options) => signatureHeaders(options.signer, request),
  toCompletion: (body, call) => converseToCompletion(body, call),
  createStreamTranslator: (call) => createConverseStreamTranslator(call),
  decodeStream: decodeAwsEventStream,
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
