/**
 * What a provider over HTTPS writes (defineHttpProvider in http-provider.ts turns it into a
 * ProviderPlugin): the spec of pure functions and the requests they build. Types only.
 */
import type { ChatCompletion, EmbeddingResponse } from '../openai-types.ts';
import type { EmbeddingCall, IdentityStatus, ProviderCall, ProviderCapabilities, ProviderEnv, ProviderPlugin, ProviderUnavailable, StreamTranslator, UpstreamFailure } from '../plugin-api.ts';
import type { Headers } from './http-body.ts';

/** The native HTTP request for one attempt. `path` is appended to the endpoint's base path. */
export interface HttpRequestSpec {
  path: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  /** JSON-serialised by the core. */
  body?: unknown;
}

export interface Endpoint {
  /** e.g. https://api.openai.com/v1 — origin plus base path. */
  baseUrl: string;
  /** Sent with every request (auth, versions). */
  headers?: Record<string, string>;
}

/** A request about to go out, for providers that sign requests (AWS SigV4). */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/**
 * A provider over HTTPS. `Options` are what gateway.yaml gives (checked by `optionsSchema`);
 * `Prepared` is what `prepare` makes of them once per config generation (credentials resolved, a
 * signer made) and what every other part receives. Without `prepare`, the options themselves.
 */
export interface HttpProviderSpec<Options, Prepared = Options> extends Omit<ProviderPlugin<Options>, 'apiVersion' | 'kind' | 'create'> {
  /**
   * Runs once per config generation, before the pool exists: resolve what the options leave to
   * the environment. Answer `{ unavailable: reason }` when the provider cannot serve (the
   * gateway starts, reports the reason and answers 503 for its targets) instead of failing each
   * request; throw for options that are wrong (a config error).
   */
  prepare?(options: Options, env: ProviderEnv): Prepared | ProviderUnavailable | Promise<Prepared | ProviderUnavailable>;
  endpoint(options: Prepared, env: ProviderEnv): Endpoint;
  buildRequest(call: ProviderCall, options: Prepared): HttpRequestSpec;
  /**
   * The native protocols this configuration serves, when options decide (an OpenAI-compatible
   * server may lack /v1/responses). Default: `capabilities.nativeProtocols`.
   */
  nativeProtocols?(options: Prepared): readonly string[];
  /** What one model's requests can carry, when options decide it (see `ProviderInstance.capabilitiesFor`). */
  capabilitiesFor?(options: Prepared, model: string): ProviderCapabilities | undefined;
  /** Adds signature headers once the body is final. */
  signRequest?(request: OutgoingRequest, options: Prepared): Promise<Record<string, string>>;
  /** The identity the requests are made with, for /readyz and metrics (see `refreshingCredential`). */
  identity?(options: Prepared): IdentityStatus | undefined;
  /** Fetches the credential once and answers its status (see `ProviderInstance.checkIdentity`); rejects, without a secret, when none can be had. */
  checkIdentity?(options: Prepared): Promise<IdentityStatus>;
  toCompletion(body: unknown, call: ProviderCall, options: Prepared): ChatCompletion;
  /**
   * A passed-through request's JSON answer in the client protocol's shape, where the provider's
   * own differs (Bedrock's CountTokens answers `{inputTokens}` to a Messages `count_tokens`,
   * whose client reads `{input_tokens}`); throw (a SyntaxError) when it cannot be read. Default:
   * the answer as it came.
   */
  readNativeAnswer?(body: unknown, call: ProviderCall, options: Prepared): unknown;
  createStreamTranslator(call: ProviderCall, options: Prepared): StreamTranslator;
  /** Decodes a 2xx streamed body into native events. Default: SSE with JSON data, ending at `[DONE]`. */
  decodeStream?(body: AsyncIterable<Uint8Array>): AsyncIterable<unknown>;
  /** The provider's error body (parsed JSON, else text) in its own words. */
  readError(status: number, body: unknown, headers: Headers): UpstreamFailure;
  /** POST /v1/embeddings: with it the provider declares `capabilities.embeddings` and its instance has `embed`. */
  embeddings?: HttpEmbeddingsSpec<Prepared>;
  /** Exact token counts: with it the provider declares `capabilities.countTokens` and its instance has `countTokens`. */
  countTokens?: HttpCountTokensSpec<Prepared>;
}

/**
 * A provider's own token counter (Gemini `models/{m}:countTokens`, Bedrock `CountTokens`), over
 * the same pool, signing, timeouts and error mapping as chat attempts.
 */
export interface HttpCountTokensSpec<Options> {
  /** The counting request for the call's chat request (its translation, as a chat attempt would send it). */
  buildRequest(call: ProviderCall, options: Options): HttpRequestSpec;
  /** The 2xx answer → the input tokens; throw (a SyntaxError) when the answer has no count. */
  toCount(body: unknown, call: ProviderCall, options: Options): number;
}

/**
 * Embeddings over the same pool, signing, timeouts and error mapping as chat attempts. Most APIs
 * take the whole input in one request; some take one text per request (Bedrock Titan) or cap the
 * batch (Gemini 100, Cohere 96): such a provider returns several requests, which are sent at most
 * `concurrency` at a time, and their answers joined in request order.
 */
export interface HttpEmbeddingsSpec<Options> {
  /** The native requests for one call, in input order (at least one). */
  buildRequests(call: EmbeddingCall, options: Options): HttpRequestSpec[];
  /**
   * One request's 2xx answer → the OpenAI list for that request's inputs, `index` counted from 0
   * within it (the core renumbers across requests and sums the usage). `answered` says which
   * request it answers (to estimate tokens the provider does not report) and its headers (some
   * providers report tokens only there: Bedrock's `x-amzn-bedrock-input-token-count`).
   */
  toEmbeddings(body: unknown, call: EmbeddingCall, options: Options, answered: EmbeddingAnswerContext): EmbeddingResponse;
  /** Requests of one call in flight at once (default 4). */
  concurrency?: number;
}

/** What an embeddings answer answers: the request as built, and the response headers. */
export interface EmbeddingAnswerContext {
  request: HttpRequestSpec;
  headers: Headers;
}
