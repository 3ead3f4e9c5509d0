/** The request pipeline: attempts, the request context, stages and the runtime view they read. Part of the plugin contract (a leaf: wire types and the error catalogue only). */
import type { PLUGIN_API_VERSION, JsonSchema, Logger } from './common.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest, EmbeddingResponse, Usage } from '../openai-types.ts';
import type { GatewayError } from '../errors.ts';
import type { Drop } from './dropped.ts';
import type { Clock, Timeouts } from './policies.ts';
import type { NativeResponse, ProviderCall } from './providers.ts';
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
export type GatewayResponse =
  | { kind: 'completion'; body: ChatCompletion }
  | { kind: 'stream'; chunks: AsyncIterable<ChatCompletionChunk> }
  | { kind: 'embeddings'; body: EmbeddingResponse }
  /** `count_tokens`: counted by the target (`AttemptView.passthrough`) or estimated by the gateway. */
  | { kind: 'count'; body: { input_tokens: number } };

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

/** What a request asks the pipeline to do. `count_tokens` counts a chat request's input (exactly where the target can, else an estimate). */
export type Operation = 'chat' | 'embeddings' | 'count_tokens';

/**
 * The protocol the client spoke: a built-in way in, or one a gateway embedding Switchyard added.
 * The pipeline always runs the OpenAI model (chat or embeddings): other protocols arrive
 * translated to chat.
 */
export type Ingress = 'chat' | 'responses' | 'messages' | 'embeddings' | 'gemini' | (string & {});

/**
 * One request as stages see it. The core keeps its own bookkeeping (attempts, limits, the
 * answer's usage and cost, the response writer) elsewhere: a stage reads it in `onResponse`'s
 * outcome and cannot change it.
 */
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
  /** Set by `auth` (or a stage that identifies callers its own way). */
  key?: KeyIdentity;
  /** Set by `route`. */
  route?: ModelRoute;
  /** The current (or last) attempt, once `retry` or the dispatcher started one. */
  readonly attempt: AttemptView | undefined;
  /** Every target tried or skipped so far, in order. */
  readonly attempts: readonly AttemptRecord[];
  /** Extra headers for the client's response. */
  readonly responseHeaders: Record<string, string>;
  /**
   * Changes the answer on its way out (a guardrail redacting or restoring text, ending a stream
   * that breaks a rule): called before `next()`, the transform applies to whichever attempt
   * answers, innermost stage first (as on the way back through the pipeline: a stage later in
   * `pipeline:` sees the answer before one earlier). An answer with a transform is always
   * translated (never passed through natively), so the transform sees chat completions and chunks.
   */
  transformAnswer(transform: AnswerTransform): void;
  /** Adds a field to the request's log line (a stage's verdicts); the value must hold no secret. */
  annotate(field: string, value: unknown): void;
}

/** A change to the answer as it goes out (see `RequestContext.transformAnswer`). */
export interface AnswerTransform {
  /** A whole answer, before it is written. Throw a GatewayError to answer that error instead. */
  completion?(body: ChatCompletion): ChatCompletion | Promise<ChatCompletion>;
  /**
   * A streamed answer's chunks as they flow: yield as you read, holding no more than you must.
   * Throwing a GatewayError ends the stream with the protocol's in-stream error.
   */
  stream?(chunks: AsyncIterable<ChatCompletionChunk>): AsyncIterable<ChatCompletionChunk>;
}

/** How a request ended, as `onResponse` hooks see it once the response is complete (streams included). */
export interface RequestOutcome {
  /** HTTP status sent to the client; 499 when the client left first. */
  readonly status: number;
  /** The answer was streamed. */
  readonly stream: boolean;
  /** Tokens, from the completion or the stream's usage report. */
  readonly usage: Usage | undefined;
  /** USD for this request's tokens at its target's price; null when the price is unknown, undefined when nothing was used. */
  readonly costUsd: number | null | undefined;
  /** The error the client got, if any: as an HTTP answer, or inside a stream that had started (`errorInStream`). */
  readonly error: GatewayError | undefined;
  readonly errorInStream: boolean;
  /** Every target tried or skipped, in order. */
  readonly attempts: readonly AttemptRecord[];
  /** The provider (its gateway.yaml name) of the last attempt, and the upstream model that answered. */
  readonly provider: string | undefined;
  readonly upstreamModel: string | undefined;
  /** The limit that refused this request, when one did. */
  readonly refusal: { readonly scope: string; readonly kind: 'requests' | 'tokens' | 'concurrency' | 'budget' | 'unpriced' } | undefined;
  /** Where the time went, in ms. */
  readonly timing: { readonly durationMs: number; readonly upstreamMs: number; readonly overheadMs: number; readonly firstChunkMs: number | undefined };
  /** The trace this request belongs to (W3C trace id), when tracing is on. */
  readonly traceId: string | undefined;
  /** Fields the gateway read but did not carry to the target that answered (the `x-switchyard-dropped` header); absent when none. */
  readonly dropped?: readonly Drop[];
  /** Fields stages added for the log line (`RequestContext.annotate`); absent when none. */
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** What a request is, for the narrowing helpers (a context, or the core's own view of a request). */
type Operated = { readonly operation: Operation; readonly body: ChatCompletionRequest | EmbeddingRequest };

/** Narrows a context to an embeddings request. */
export function isEmbedding<T extends Operated>(ctx: T): ctx is T & { body: EmbeddingRequest } {
  return ctx.operation === 'embeddings';
}

/** Narrows a context to a chat request (chat and count_tokens both run one). */
export function isChat<T extends Operated>(ctx: T): ctx is T & { body: ChatCompletionRequest } {
  return ctx.operation !== 'embeddings';
}

export type Next = () => Promise<void>;

export interface StageInstance {
  name: string;
  /**
   * The request path, in `pipeline:` order (an onion): code before `await next()` runs on the
   * way in, code after it on the way back. `next()` may be called again after it settles
   * (that is how `retry` re-runs the inner stages per attempt). Throw a GatewayError to answer.
   * Per-request data of a stage belongs to the stage (kept in its own map keyed by the context).
   */
  handle?(ctx: RequestContext, next: Next): Promise<void>;
  /**
   * After the response has been fully sent (or failed), for every stage in `pipeline:` order,
   * even when an earlier stage answered, with how the request ended. Errors here are logged,
   * never sent.
   */
  onResponse?(ctx: RequestContext, outcome: RequestOutcome): void | Promise<void>;
  /**
   * A stage that identifies callers also guards the routes outside the pipeline (GET /v1/models):
   * the key of these headers, or a thrown GatewayError (401).
   */
  identify?(headers: IncomingHttpHeaders): KeyIdentity;
  /** The config generation that created the stage is done (its requests finished): release connections and timers. */
  close?(): void | Promise<void>;
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
  /** Every alias of gateway.yaml by its name, patterns (`claude-*`) included under theirs. */
  readonly models: ReadonlyMap<string, ModelRoute>;
  /**
   * The alias a client's model name asks for: the alias of that exact name, else the first
   * pattern alias (`claude-*`, `*`) in file order that matches it; undefined when none does.
   */
  resolveModel(name: string): ModelRoute | undefined;
  /** Looks up a presented bearer token; undefined when unknown. */
  findKey(token: string): KeyIdentity | undefined;
  readonly hasKeys: boolean;
  /** Scrubs configured secrets out of a text. */
  redact(text: string): string;
  /** `server.upstreamBodyLimit` in bytes. */
  readonly upstreamBodyLimit: number;
  /** The gateway's own URL once it listens (`http://127.0.0.1:8080`): for a stage that calls one of its aliases (a guardrail's judge). */
  readonly selfUrl?: () => string | undefined;
}

export interface StagePlugin<Options = Record<string, unknown>> {
  /**
   * The stage contract's version: 2 (RequestContext slimmed, onResponse given the outcome; see
   * CHANGELOG.md). A JavaScript stage declaring 1 still runs: its onResponse gets a context with
   * version 1's fields (status, usage, costUsd...), and the gateway warns at load.
   */
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
 * export default defineStage({ apiVersion: 2, kind: 'stage', name: 'tag', create: () => ({ name: 'tag', async handle(ctx, next) { await next(); } }) });
 */
export function defineStage<Options>(plugin: StagePlugin<Options>): StagePlugin<Options> {
  return plugin;
}
