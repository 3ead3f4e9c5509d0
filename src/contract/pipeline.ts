/** The request pipeline: attempts, the request context, stages and the runtime view they read. Part of the plugin contract (a leaf: wire types and the error catalogue only). */
import { PLUGIN_API_VERSION, type JsonSchema, type Logger } from './common.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest, EmbeddingResponse, Usage } from '../openai-types.ts';
import type { GatewayError } from '../errors.ts';
import type { Clock, Timeouts } from './policies.ts';
import type { NativeRequest, NativeResponse, ProviderCall } from './providers.ts';
import type { KeyIdentity, ModelRoute, RouteTarget } from './routing.ts';

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
export type GatewayResponse = { kind: 'completion'; body: ChatCompletion } | { kind: 'stream'; chunks: AsyncIterable<ChatCompletionChunk> } | { kind: 'embeddings'; body: EmbeddingResponse };

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
