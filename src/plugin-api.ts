/**
 * The contracts between the core and its plugins. Provider plugins and pipeline stages import
 * these types (and the define* helpers) from the package entry; the loader checks `apiVersion`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Usage } from './openai-types.ts';
import type { GatewayError } from './errors.ts';
import type { UpstreamError } from './providers/upstream-error.ts';
import type { Clock } from './runtime/clock.ts';
import type { RetryPolicy, Timeouts } from './routing/policy.ts';
import type { Strategy } from './routing/order.ts';
import type { TargetState } from './routing/target-state.ts';
import type { FailureCategory } from './providers/upstream-error.ts';
import type { Price } from './config/types.ts';

export const PLUGIN_API_VERSION = 1;

export type { Logger };
export type JsonSchema = Record<string, unknown>;

// ---------------------------------------------------------------- providers

/** What the provider can honour; the conformance battery and (later) parameter checks read it. */
export interface ProviderCapabilities {
  streaming?: boolean;
  tools?: boolean;
  images?: boolean;
  responseFormat?: boolean;
  /** Parameters the provider cannot honour at all. */
  unsupportedParams?: string[];
}

/** One attempt against one provider. */
export interface ProviderCall {
  /** The provider's name in gateway.yaml, for error messages. */
  readonly provider: string;
  /** The client's request as validated. Treat it as read-only: a retry re-uses it. */
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
  /** Release pools and timers when the config generation that made it retires. */
  close?(): Promise<void>;
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

export function defineProvider<Options>(plugin: ProviderPlugin<Options>): ProviderPlugin<Options> {
  return plugin;
}

// ---------------------------------------------------------------- pipeline

export interface KeyIdentity {
  name: string;
  /** May this key use the model alias? */
  allows(model: string): boolean;
}

export interface RouteTarget {
  /** Provider name in gateway.yaml. */
  provider: string;
  model: string;
  /** Set when the provider cannot serve (e.g. its API key is not configured). */
  unavailable?: string;
  /** Alias setting, else the provider's: drop unsupported parameters rather than reject them. */
  dropUnsupportedParams: boolean;
  readonly instance: ProviderInstance;
  /** Relative share of traffic under the `weighted` strategy. */
  weight: number;
  /** USD per million tokens, when configured: the log line then carries the cost. */
  price?: Price;
  retry: RetryPolicy;
  timeouts: Timeouts;
  /** Shared live state: in-flight count, latency average, cooldown breaker. */
  readonly state: TargetState;
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
  | { kind: 'stream'; chunks: AsyncIterable<ChatCompletionChunk> };

/** One request's state as it moves through the pipeline. */
export interface RequestContext {
  readonly id: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body. Stages may replace fields before `route`. */
  body: ChatCompletionRequest;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Set by `auth`. */
  key?: KeyIdentity;
  /** Set by `route`. */
  route?: ModelRoute;
  /** The target of the current attempt (set by `retry`, else the route's first). */
  target?: RouteTarget;
  /** Set by `retry` for the current attempt: its abort signal (client gone or timed out) and limits. */
  attempt?: { signal: AbortSignal; timeouts: Timeouts };
  /** The current attempt's call as its provider received it. */
  call?: ProviderCall;
  /** The provider's raw answer to the current attempt (set by the dispatcher at the chain's end). */
  upstream?: NativeResponse;
  /** The translated answer (set by `transform-response`). */
  response?: GatewayResponse;
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
  /** Scratch space for custom stages; namespace your keys. */
  readonly state: Record<string, unknown>;
}

export type Next = () => Promise<void>;

export interface StageInstance {
  name: string;
  /**
   * The request path, in `pipeline:` order (an onion): code before `await next()` runs on the
   * way in, code after it on the way back. `next()` may be called again after it settles
   * (that is how `retry` re-runs the inner stages per attempt). Throw a GatewayError to answer.
   */
  handle?(ctx: RequestContext, next: Next): Promise<void>;
  /**
   * After the response has been fully sent (or failed), for every stage in `pipeline:` order,
   * even when an earlier stage answered. Errors here are logged, never sent.
   */
  onResponse?(ctx: RequestContext): void | Promise<void>;
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

export function defineStage<Options>(plugin: StagePlugin<Options>): StagePlugin<Options> {
  return plugin;
}

export type { UpstreamError, Clock, RetryPolicy, Timeouts, Strategy, TargetState, FailureCategory };
