/**
 * The contract between the core and its plugins: every type a provider plugin or a pipeline
 * stage touches, and the define* helpers. A leaf: it imports only the wire types and the error
 * catalogue; the core's implementations import it, never the reverse. Plugin authors import it
 * through the package entry (`switchyard-gateway`); the loader checks `apiVersion`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest, EmbeddingResponse, Usage } from './openai-types.ts';
import type { GatewayError } from './errors.ts';

export const PLUGIN_API_VERSION = 1;

export type { Logger };
export type JsonSchema = Record<string, unknown>;

// ---------------------------------------------------------------- time and policies

/** Time and randomness, injectable so that retry and routing tests are deterministic. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/** What may be retried: `connect`, `timeout`, `5xx`, or an HTTP status. */
export type RetryOn = 'connect' | 'timeout' | '5xx' | number;

export interface RetryPolicy {
  /** Tries per target, the first included. */
  attempts: number;
  backoff: { initialMs: number; maxMs: number; multiplier: number };
  retryOn: readonly RetryOn[];
  /** A Retry-After longer than this is not waited for: the next target is tried instead. */
  maxRetryAfterMs: number;
  /** Time from the request's arrival after which no new attempt or wait starts; attempts are cut to fit. */
  budgetMs?: number;
}

export interface Timeouts {
  /** TCP (and TLS) connect. */
  connectMs: number;
  /** From sending the request to the response headers. */
  firstByteMs: number;
  /** Longest gap between two body chunks (stream events, or a slow JSON body). */
  idleMs: number;
  /** One attempt, until its answer is complete (streams: until the first chunk). */
  totalMs: number;
}

export type Strategy = 'fallback' | 'weighted' | 'least-latency' | 'least-busy';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Prompt tokens read from the provider's cache (default: input). */
  cachedInput?: number;
  /** Prompt tokens written to the provider's cache (default: input). */
  cacheWrite?: number;
  /** Rates for the whole request once its prompt exceeds `aboveTokens`. */
  longContext?: { aboveTokens: number; input: number; output: number; cachedInput?: number; cacheWrite?: number };
}

// ---------------------------------------------------------------- upstream failures

/** Refusals another model may not have, for `fallbacks:`. */
export type FailureCategory = 'context_window' | 'content_policy';

/** What a provider's native error body says, in its own words. */
export interface UpstreamFailure {
  message: string;
  /** The provider's own error code or type, if it has one (kept in the client message). */
  code?: string | null;
  /** The request field the provider blames, when it says. */
  param?: string | null;
  /** Override the status-based retry decision (e.g. a 400 that is really "overloaded"). */
  retryable?: boolean;
  /** Client-visible status override for odd providers (e.g. auth failure reported as 400). */
  status?: number;
  /** What kind of refusal this is, for `fallbacks:` (guessed from the message when unset). */
  category?: FailureCategory;
  /** A wait the provider asked for in its body (used when no Retry-After header came). */
  retryAfterMs?: number;
}

// ---------------------------------------------------------------- providers

/**
 * What the provider can honour. The core reads it: before an attempt's request is built it
 * refuses (400 `unsupported_parameter`) or, with `dropUnsupportedParams`, drops what is not
 * supported; the conformance battery runs the scenarios the declaration allows.
 */
export interface ProviderCapabilities {
  /** `stream: true` (default true). */
  streaming?: boolean;
  /** Streams end with token usage (default true; the battery checks the usage chunk). */
  streamUsage?: boolean;
  /** `tools` / `tool_choice` (default true). */
  tools?: boolean;
  /** Image content parts (default true). */
  images?: boolean;
  /** `response_format` json_object / json_schema (default true). */
  responseFormat?: boolean;
  /**
   * `n` above 1, `logprobs`/`top_logprobs`, non-zero penalties, a non-empty `logit_bias`,
   * non-text `modalities` (default true). When false their no-op values still pass.
   */
  samplingExtras?: boolean;
  /** Parameters the provider cannot honour at any value. */
  unsupportedParams?: readonly string[];
  /** Serves POST /v1/embeddings through `ProviderInstance.embed` (default false). */
  embeddings?: boolean;
  /**
   * Client protocols this provider speaks natively (e.g. `anthropic-messages`): a request that
   * came in that way is handed over as the client sent it (`ProviderCall.native`), so every
   * field survives, and its answer goes back to the client untranslated.
   */
  nativeProtocols?: readonly string[];
}

/** A request as the client sent it in a provider's own protocol (see `nativeProtocols`). */
export interface NativeRequest {
  protocol: string;
  /** The client's body; send it with `model` set to the call's model. */
  body: Readonly<Record<string, unknown>>;
  /** The client's protocol headers worth passing on (e.g. anthropic-version, anthropic-beta). */
  headers: Readonly<Record<string, string>>;
  /** Why the translated request cannot serve this one (parts only the native protocol has). */
  untranslatable?: readonly GatewayError[];
}

/** One attempt against one provider. */
export interface ProviderCall {
  /** The provider's name in gateway.yaml, for error messages. */
  readonly provider: string;
  /** The client's request as validated (minus dropped parameters). Read-only: a retry re-uses it. */
  readonly request: ChatCompletionRequest;
  /** The upstream model this attempt targets (from the alias target, never the alias). */
  readonly model: string;
  readonly stream: boolean;
  /** Aborted when the client goes away or the attempt is abandoned. */
  readonly signal: AbortSignal;
  readonly requestId: string;
  readonly log: Logger;
  /** From the alias or provider config: drop parameters the provider cannot honour instead of answering 400. */
  readonly dropUnsupportedParams: boolean;
  /** Connect, first-byte and idle-gap limits for this attempt (HTTP providers apply them). */
  readonly timeouts: Timeouts;
  /** Headers the gateway adds to the upstream request (W3C trace context); HTTP providers send them. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
  /** Largest non-streamed answer accepted, in bytes (`server.upstreamBodyLimit`); past it the attempt fails. */
  readonly maxResponseBytes: number;
  /**
   * Set when the client spoke a protocol this provider declared in `nativeProtocols`: build the
   * upstream request from it instead of `request` (which is still its chat translation). The
   * answer is translated as usual (usage, cost) and passed to the client untranslated.
   */
  readonly native?: NativeRequest;
}

/** A provider's answer before translation: its own JSON body, or its own stream of events. */
export type NativeResponse =
  | { kind: 'json'; body: unknown; headers: Record<string, string | string[] | undefined> }
  | { kind: 'stream'; events: AsyncIterable<unknown>; headers: Record<string, string | string[] | undefined> };

/** Turns one native stream into OpenAI chunks. A new one is made per attempt: it may keep state. */
export interface StreamTranslator {
  /** One native event → zero or more chunks. Throw an UpstreamError for an in-stream error event. */
  push(event: unknown): ChatCompletionChunk | ChatCompletionChunk[] | undefined;
  /** The upstream stream ended; return trailing chunks or throw if it ended too early. */
  end?(): ChatCompletionChunk | ChatCompletionChunk[] | undefined;
}

/** A live provider, made once per config generation from the provider's options. */
export interface ProviderInstance {
  /** Performs the attempt. Non-2xx answers and transport failures throw UpstreamError. */
  send(call: ProviderCall): Promise<NativeResponse>;
  /** Native JSON body → OpenAI chat completion (pure). */
  toCompletion(body: unknown, call: ProviderCall): ChatCompletion;
  /** A fresh translator for one streamed attempt. */
  createStreamTranslator(call: ProviderCall): StreamTranslator;
  /**
   * Embeddings for `call.embedding` (providers declaring `capabilities.embeddings`). Answers the
   * OpenAI shape with float vectors; the core converts to base64 when the client asked for it.
   * Non-2xx answers and transport failures throw UpstreamError, as `send` does.
   */
  embed?(call: EmbeddingCall): Promise<EmbeddingResponse>;
  /** Release pools and timers when the config generation that made it retires. */
  close?(): Promise<void>;
}

/** One embeddings attempt: the same call, with the embeddings request instead of a chat one. */
export interface EmbeddingCall extends Omit<ProviderCall, 'request' | 'stream'> {
  /** The client's request, `model` still the alias; `encoding_format` is the core's business. */
  readonly embedding: EmbeddingRequest;
}

export interface ProviderEnv {
  /** The provider's name in gateway.yaml (`providers.<name>`). */
  name: string;
  log: Logger;
  /** Directory of gateway.yaml, for options that name files. */
  configDir: string;
}

export interface ProviderPlugin<Options = Record<string, unknown>> {
  apiVersion: typeof PLUGIN_API_VERSION;
  kind: 'provider';
  /** Stable id, e.g. `openai`; built-ins are referenced by it. */
  id: string;
  description?: string;
  /** JSON Schema for `providers.<name>` minus `plugin`, checked at load with file:line:col errors. */
  optionsSchema: JsonSchema;
  /** Option names holding secrets: scrubbed from every message a client or log sees. */
  secretOptions?: string[];
  capabilities?: ProviderCapabilities;
  create(options: Options, env: ProviderEnv): ProviderInstance | Promise<ProviderInstance>;
}

/**
 * Declares a provider plugin (identity at run time; it types the object).
 *
 * @example
 * export default defineProvider({ apiVersion: 1, kind: 'provider', id: 'acme', optionsSchema: {}, create: () => instance });
 */
export function defineProvider<Options>(plugin: ProviderPlugin<Options>): ProviderPlugin<Options> {
  return plugin;
}

// ---------------------------------------------------------------- routing

export interface KeyIdentity {
  name: string;
  /** The key's team in gateway.yaml, if any. */
  team?: string;
  /** Epoch ms after which the key is refused (`expiresAt`). */
  expiresAt?: number;
  /** May this key use the model alias? */
  allows(model: string): boolean;
}

/** Whether a target may take a request now: `probe` is the single trial after a cooldown. */
export type Admission = 'yes' | 'probe' | 'no';

/** Live state of one alias target, shared by the requests of a config generation. */
export interface TargetHealth {
  /** Requests in flight on the target (least-busy). */
  inFlight: number;
  /** Moving average of time to first token, in ms (least-latency); undefined until measured. */
  readonly latencyMs: number | undefined;
  admit(now: number): Admission;
  /** Milliseconds until the target may take traffic again (0 when it may now). */
  coolingFor(now: number): number;
  recordSuccess(latencyMs?: number): void;
  /** A failure that says the target is unhealthy (not a client mistake). */
  recordFailure(now: number, retryAfterMs?: number): void;
  /** The probe was abandoned without a verdict: let another request probe. */
  releaseProbe(): void;
}

export interface RouteTarget {
  /** Provider name in gateway.yaml. */
  provider: string;
  model: string;
  /** Set when the provider cannot serve (e.g. its API key is not configured); for the log and /readyz. */
  unavailable?: string;
  /** Alias setting, else the provider's: drop unsupported parameters rather than reject them. */
  dropUnsupportedParams: boolean;
  readonly instance: ProviderInstance;
  /** The provider plugin's declaration (empty when it declares nothing). */
  readonly capabilities: ProviderCapabilities;
  /** Relative share of traffic under the `weighted` strategy. */
  weight: number;
  /** USD per million tokens, when configured: the log line then carries the cost. */
  price?: Price;
  retry: RetryPolicy;
  timeouts: Timeouts;
  /** Shared live state: in-flight count, latency average, cooldown breaker. */
  readonly state: TargetHealth;
}

export interface ModelRoute {
  name: string;
  strategy: Strategy;
  /** The alias-level retry policy (targets may override it). */
  retry: RetryPolicy;
  targets: readonly RouteTarget[];
  /** Other aliases tried when the upstream refuses for a reason another model may not have. */
  fallbacks: Partial<Record<FailureCategory, readonly string[]>>;
}

// ---------------------------------------------------------------- pipeline

export interface AttemptRecord {
  provider: string;
  model: string;
  /** Upstream HTTP status, 0 when none arrived. */
  status: number;
  outcome: 'ok' | 'error' | 'skipped';
  durationMs: number;
  error?: string;
}

/** What the client gets, once translated. */
export type GatewayResponse =
  | { kind: 'completion'; body: ChatCompletion }
  | { kind: 'stream'; chunks: AsyncIterable<ChatCompletionChunk> }
  | { kind: 'embeddings'; body: EmbeddingResponse };

/**
 * One try against one target, as stages see it. The core's Attempt owns the whole of it:
 * build the call → send → translate → normalise → prime the stream.
 */
export interface AttemptView {
  /** 1 for the request's first attempt, counting every target. */
  readonly number: number;
  readonly target: RouteTarget;
  /** Aborted when the client leaves or the attempt times out. */
  readonly signal: AbortSignal;
  readonly timeouts: Timeouts;
  /** The call as the provider received it (set once sent). */
  readonly call: ProviderCall | undefined;
  /** The provider's raw answer (set once sent). */
  readonly native: NativeResponse | undefined;
  /** The translated answer (set by `transform-response`). */
  readonly response: GatewayResponse | undefined;
  /** The client's own protocol was handed to the provider (`ProviderCall.native`): its answer goes back untranslated. */
  readonly passthrough: boolean;
}

/** What a request asks the pipeline to do. */
export type Operation = 'chat' | 'embeddings';

/**
 * The protocol the client spoke. The pipeline always runs the OpenAI model (chat or embeddings);
 * `responses` and `messages` requests arrive translated to chat.
 */
export type Ingress = 'chat' | 'responses' | 'messages' | 'embeddings';

/** One request's state as it moves through the pipeline. */
export interface RequestContext {
  readonly id: string;
  readonly operation: Operation;
  readonly ingress: Ingress;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  readonly headers: IncomingHttpHeaders;
  /**
   * The request the pipeline runs: a chat request (for `responses` and `messages` ingress, the
   * translation of the client's body), or with `operation: 'embeddings'` an embeddings request
   * (narrow with `isEmbedding(ctx)`). Stages may replace fields before `route`.
   */
  body: ChatCompletionRequest | EmbeddingRequest;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Set by `auth`. */
  key?: KeyIdentity;
  /** Set by `route`. */
  route?: ModelRoute;
  /** The current (or last) attempt (started by `retry`, else by the dispatcher). */
  attempt?: AttemptView;
  /** Every target tried or skipped, in order. */
  attempts: AttemptRecord[];
  /** Filled from the completion or from the stream's usage chunk. */
  usage?: Usage;
  /** The upstream model that answered. */
  upstreamModel?: string;
  /** HTTP status sent to the client (set before `onResponse` hooks run). */
  status?: number;
  /** The error the client got, if any. */
  error?: GatewayError;
  /** Set when a stream broke after its first byte (reported in-stream). */
  streamError?: GatewayError;
  /** Extra headers for the client's response. */
  readonly responseHeaders: Record<string, string>;
  /** Where the time went, in ms since `startedAt`'s clock. */
  readonly timing: RequestTiming;
  /** USD for this request's tokens at its target's price; null when the price is unknown. */
  costUsd?: number | null;
  /** The trace this request belongs to (W3C trace id), when tracing is on. */
  traceId?: string;
  /** The limit that refused this request, when one did. */
  refusal?: { scope: string; kind: 'requests' | 'tokens' | 'concurrency' | 'budget' | 'unpriced' };
  /** What a stream delivered to the client (to charge an abandoned stream the upstream never reported). */
  delivered?: { chars: number };
  /** The client's request in its own protocol, for providers that speak it natively. */
  nativeRequest?: NativeRequest;
}

export interface RequestTiming {
  /** Time spent waiting for upstreams (until their headers, and between stream events), all attempts. */
  upstreamMs: number;
  /** Streams: from arrival until the first chunk was written to the client. */
  firstChunkMs?: number;
}

/** Narrows a context to an embeddings request. */
export function isEmbedding(ctx: RequestContext): ctx is RequestContext & { body: EmbeddingRequest } {
  return ctx.operation === 'embeddings';
}

/** Narrows a context to a chat request. */
export function isChat(ctx: RequestContext): ctx is RequestContext & { body: ChatCompletionRequest } {
  return ctx.operation === 'chat';
}

export type Next = () => Promise<void>;

export interface StageInstance {
  name: string;
  /**
   * The request path, in `pipeline:` order (an onion): code before `await next()` runs on the
   * way in, code after it on the way back. `next()` may be called again after it settles
   * (that is how `retry` re-runs the inner stages per attempt). Throw a GatewayError to answer.
   * Per-request data of a stage belongs to the stage (a WeakMap keyed by the context).
   */
  handle?(ctx: RequestContext, next: Next): Promise<void>;
  /**
   * After the response has been fully sent (or failed), for every stage in `pipeline:` order,
   * even when an earlier stage answered. Errors here are logged, never sent.
   */
  onResponse?(ctx: RequestContext): void | Promise<void>;
  /**
   * A stage that identifies callers also guards the routes outside the pipeline (GET /v1/models):
   * the key of these headers, or a thrown GatewayError (401).
   */
  identify?(headers: IncomingHttpHeaders): KeyIdentity;
}

export interface StageEnv {
  log: Logger;
  configDir: string;
  /** Time and randomness; tests inject a fake one. */
  clock: Clock;
  /** The runtime being built: its keys, model routes and providers are ready. */
  runtime: RuntimeView;
}

/** The parts of a config generation that stages may read. */
export interface RuntimeView {
  readonly generation: number;
  readonly models: ReadonlyMap<string, ModelRoute>;
  /** Looks up a presented bearer token; undefined when unknown. */
  findKey(token: string): KeyIdentity | undefined;
  readonly hasKeys: boolean;
  /** Scrubs configured secrets out of a text. */
  redact(text: string): string;
  /** `server.upstreamBodyLimit` in bytes. */
  readonly upstreamBodyLimit: number;
}

export interface StagePlugin<Options = Record<string, unknown>> {
  apiVersion: typeof PLUGIN_API_VERSION;
  kind: 'stage';
  name: string;
  description?: string;
  /** JSON Schema for the `options` given in `pipeline:`. */
  optionsSchema?: JsonSchema;
  create(options: Options, env: StageEnv): StageInstance | Promise<StageInstance>;
}

/**
 * Declares a pipeline stage (identity at run time; it types the object).
 *
 * @example
 * export default defineStage({ apiVersion: 1, kind: 'stage', name: 'tag', create: () => ({ name: 'tag', async handle(ctx, next) { await next(); } }) });
 */
export function defineStage<Options>(plugin: StagePlugin<Options>): StagePlugin<Options> {
  return plugin;
}
