/**
 * One request, from arrival to its last after-response hook: the core's own object, never
 * exported from the package. It holds what stages may not touch (the protocol session, the
 * attempt, the limit hold, the answer's usage and cost, the response's status and error) and
 * hands stages a slim view of itself (`ctx`, the public RequestContext). `end()` is the only way
 * a request ends, in one order: release the target and the generation → settle limits and spend
 * → the stages' onResponse hooks → the observers (metrics, traces, console).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { joinDrops } from './drops.ts';
import { StageContext } from './stage-context.ts';

export { exchangeOf } from './stage-context.ts';
import type { GatewayError } from '../errors.ts';
import type { Lease, TokenEstimate, TokenUsage } from '../governance/index.ts';
import type { ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest, Usage } from '../openai-types.ts';
import type {
  AnswerTransform,
  AttemptRecord,
  AttemptView,
  Drop,
  GatewayResponse,
  Ingress,
  KeyIdentity,
  ModelRoute,
  NativeRequest,
  Operation,
  RequestContext,
  RequestOutcome,
  RouteTarget,
} from '../plugin-api.ts';

/** Where a request's time went, in ms since `startedAt`'s clock. */
export interface RequestTiming {
  /** Time spent waiting for upstreams (until their headers, and between stream events), all attempts. */
  upstreamMs: number;
  /** Streams: from arrival until the first chunk was written to the client. */
  firstChunkMs?: number;
}

/** The core's attempt, as the exchange and the core's stages drive it (src/pipeline/attempt.ts implements it). */
export interface ExchangeAttempt extends AttemptView {
  /** Whether a provider was called (a token count the gateway estimated calls none). */
  readonly sent: boolean;
  /** Builds the provider call and sends it. */
  send(): Promise<void>;
  /** The native answer → the gateway's (transform-response). */
  translate(): void;
  /** The answer once it exists (a stream: primed to its first chunk); a failure is the upstream failure it was. */
  complete(): Promise<GatewayResponse>;
  /** A passed-through stream's native events consumed since the last call, in order. */
  takeNativeEvents(): unknown[];
  /** The upstream's own JSON text for the stream's current chunk, when nothing changed it (Attempt.verbatimJson). */
  verbatimJson?(chunk: ChatCompletionChunk): string | undefined;
  /** Ends the attempt from the gateway's side (shutdown): its stream fails with `reason`. */
  interrupt(reason: GatewayError): void;
  /** What the attempt left out for its target (untranslatable parts, its provider's drops); undefined when nothing. */
  readonly drops: readonly Drop[] | undefined;
  /** Releases the attempt's hold on its target. Idempotent. */
  close(): void;
}

/** What the governor holds for a request between admission and settlement. */
export interface LimitHold {
  lease: Lease;
  /** The target whose scope the lease holds now (none after a skip). */
  target: RouteTarget | undefined;
  /** The reservation's estimate (none when nothing was counted). */
  estimate: TokenEstimate | undefined;
}

/** A target the request cannot use now, and what the client gets if no other serves. */
export interface TargetSkip {
  reason: string;
  error: GatewayError;
}

/** Limits, budgets and spend (src/pipeline/governor.ts). */
export interface Limits {
  /** Admits the request on `target`: undefined, a skip when the target cannot take it; throws the answer when the key or team is over a limit. */
  admit(exchange: Exchange, target: RouteTarget): Promise<TargetSkip | undefined>;
  /** Admits a request answered without a provider (a cache hit): it counts as a request for the key and its team, with no tokens and no cost; throws the answer when over a limit. */
  admitFree?(exchange: Exchange): Promise<void>;
  /** Settles the reservation to the real usage and cost, or releases it. */
  finish(exchange: Exchange): Promise<void>;
}

/** What the gateway's instruments see of each attempt (src/pipeline/observer.ts extends it). */
export interface AttemptObserver {
  /** An attempt is about to be sent; the headers returned go upstream with it (trace context). */
  attemptStarted?(exchange: ExchangeView, attempt: AttemptView): Record<string, string> | undefined;
  attemptEnded?(exchange: ExchangeView, attempt: AttemptView, record: AttemptRecord): void;
}

/** What a request's config generation gives its attempts. */
export interface GenerationServices {
  /** Scrubs configured secrets from what the attempt log records. */
  redact(text: string): string;
  /** Largest non-streamed upstream answer, in bytes. */
  readonly upstreamBodyLimit: number;
  readonly observer?: AttemptObserver;
  /** Limits and budgets; absent when the gateway runs without a state backend (validate). */
  readonly limits?: Limits;
}

/** A chunk stream in a protocol's own SSE text (src/server/writer.ts writes it). */
export interface SseEvents {
  /** Framed text for one chunk (possibly empty). */
  push(chunk: ChatCompletionChunk): string;
  /**
   * The UTF-8 length of `text` when push just returned it and the protocol knows the length
   * without measuring (measuring a concatenated string copies it); undefined otherwise.
   */
  byteLengthOf?(text: string): number | undefined;
  /** Framed text that closes a complete answer (a promise when the protocol keeps the answer first: stored Responses). */
  end(): string | Promise<string>;
  /** Framed text that reports a failure after the stream started. */
  fail(error: GatewayError): string;
  /** The body's content type when it is not an event stream (Gemini's JSON array stream). */
  readonly contentType?: string;
  /**
   * Whether what was pushed so far says something about the answer. Until then the writer holds
   * the text (the response has not started, so a failure can still be a plain HTTP error).
   */
  readonly started: boolean;
}

/** A protocol-shaped error answer. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  /** Headers of the protocol's own (Anthropic's request-id). */
  headers?: Record<string, string>;
}

/** What a non-streamed answer can be. */
export type JsonAnswer = Exclude<GatewayResponse, { kind: 'stream' }>;

/**
 * One request in one protocol (src/ingress/protocol.ts makes it): what the pipeline runs, and how
 * its answers and errors go back in the client's protocol.
 */
export interface ProtocolSession {
  /** The request the pipeline runs. */
  readonly body: ChatCompletionRequest | EmbeddingRequest;
  /** The client's request in its own protocol, for providers that speak it. */
  readonly native?: NativeRequest;
  /** `count_tokens`: the gateway's own estimate, for targets that cannot count. */
  readonly estimate?: number;
  /**
   * `count_tokens`: the count in a passed-through answer, which is in the protocol's own shape
   * (Gemini's `totalTokens`); undefined when it has none. Absent: Anthropic's `input_tokens`.
   */
  readonly countOf?: (body: unknown) => number | undefined;
  /**
   * Fields the protocol read but does not carry, whatever the target (a Responses
   * `client_metadata`, a hosted tool): reported on every answer, refused when the request is
   * strict. Parts only a native target keeps go in `native.untranslatable` instead.
   */
  readonly drops?: readonly Drop[];
  /** A non-streamed answer → the client's JSON (headers may be added to `responseHeaders`); a promise when it is kept first. */
  answer(response: JsonAnswer, attempt: ExchangeAttempt, responseHeaders: Record<string, string>): unknown;
  /** A stream in the protocol's events; absent: the protocol has no streams. */
  events?(attempt: ExchangeAttempt): SseEvents;
  /** Headers every answer of this session carries (Anthropic's request-id). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What ends a request, given by the server (the exchange does not know the runtime or the gateway). */
export interface ExchangeEnd {
  /** The request no longer holds its config generation (in-flight counts, the gateway's live set). */
  released(exchange: Exchange): void;
  /** Settles limits and spend. */
  settle?(exchange: Exchange): Promise<void>;
  /** The stages' onResponse hooks. */
  hooks(ctx: RequestContext, outcome: RequestOutcome): Promise<void>;
  /** The gateway's instruments (metrics, traces, console). */
  observed?(exchange: ExchangeView): void;
}

/** A request as the gateway's instruments read it (metrics, traces, console, the log line's helpers). */
export interface ExchangeView {
  readonly id: string;
  readonly operation: Operation;
  readonly ingress: Ingress;
  readonly startedAt: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: ChatCompletionRequest | EmbeddingRequest;
  readonly key: KeyIdentity | undefined;
  readonly route: ModelRoute | undefined;
  readonly attempt: AttemptView | undefined;
  readonly attempts: readonly AttemptRecord[];
  readonly timing: RequestTiming;
  readonly usage: Usage | undefined;
  /** What an answer without a usage report was charged as (the governor's estimate). */
  readonly estimatedUsage?: TokenUsage;
  readonly costUsd: number | null | undefined;
  readonly upstreamModel: string | undefined;
  readonly status: number | undefined;
  readonly error: GatewayError | undefined;
  readonly streamError: GatewayError | undefined;
  readonly refusal: RequestOutcome['refusal'];
  /** Fields read but not carried to the target (see `Exchange.dropped`). */
  readonly dropped?: readonly Drop[];
  /** Stages' fields for the log line (`RequestContext.annotate`): the guardrails' verdicts are counted from it. */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Instruments may record the trace id (tracing does). */
  traceId: string | undefined;
}

export interface ExchangeInit {
  id: string;
  /** The generation's services for attempts. */
  services: GenerationServices;
  /** An error in the client's protocol, before or without a session. */
  errorAnswer(error: GatewayError, id: string): ErrorAnswer;
  /** The client's parsed JSON body, as it came. */
  body: unknown;
  operation: Operation;
  ingress: Ingress;
  headers: IncomingHttpHeaders;
  res: ServerResponse;
  log: Logger;
}

export class Exchange implements ExchangeView {
  readonly id: string;
  readonly services: GenerationServices;
  readonly errorAnswer: (error: GatewayError, id: string) => ErrorAnswer;
  readonly operation: Operation;
  readonly ingress: Ingress;
  readonly startedAt = performance.now();
  readonly headers: IncomingHttpHeaders;
  readonly log: Logger;
  readonly res: ServerResponse;
  readonly responseHeaders: Record<string, string> = {};
  readonly timing: RequestTiming = { upstreamMs: 0 };
  /** What stages see. */
  readonly ctx: RequestContext;
  readonly #controller = new AbortController();

  session: ProtocolSession | undefined;
  attempt: ExchangeAttempt | undefined;
  readonly attempts: AttemptRecord[] = [];
  /** The governor's reservation, from admission to settlement. */
  hold: LimitHold | undefined;
  usage: Usage | undefined;
  /** Set by the governor when it charged an answer without a usage report its estimate. */
  estimatedUsage: TokenUsage | undefined;
  /** USD for this request's tokens at its target's price; null when the price is unknown. */
  costUsd: number | null | undefined;
  upstreamModel: string | undefined;
  /** HTTP status sent to the client. */
  status: number | undefined;
  /** The error the client got as an HTTP answer. */
  error: GatewayError | undefined;
  /** Set when a stream broke after its first byte (reported in-stream). */
  streamError: GatewayError | undefined;
  /** The limit that refused this request, when one did. */
  refusal: RequestOutcome['refusal'];
  /** What a stream delivered to the client (to charge an abandoned stream the upstream never reported). */
  delivered: { chars: number } | undefined;
  /** The trace this request belongs to, when tracing is on. */
  traceId: string | undefined;
  /** Stages' changes to the answer (`RequestContext.transformAnswer`); undefined when none, as on most requests. */
  answerTransforms: AnswerTransform[] | undefined;
  /** Stages' fields for the log line (`RequestContext.annotate`). */
  annotations: Record<string, unknown> | undefined;
  #ended = false;
  /** The session's request as its protocol made it (JSON), kept when the client's own body may go upstream instead. */
  #nativeBasis: string | undefined;

  constructor(init: ExchangeInit) {
    this.id = init.id;
    this.services = init.services;
    this.errorAnswer = init.errorAnswer;
    this.operation = init.operation;
    this.ingress = init.ingress;
    this.headers = init.headers;
    this.log = init.log;
    this.res = init.res;
    // The signal aborts when the client disconnects before the response is complete.
    init.res.once('close', () => {
      if (!init.res.writableFinished) this.#controller.abort();
    });
    // Until the protocol has read it, the body is the client's as it came (what the log line reads of a request that failed to parse).
    this.ctx = new StageContext(this, (init.body ?? {}) as ChatCompletionRequest);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get body(): ChatCompletionRequest | EmbeddingRequest {
    return this.ctx.body;
  }

  get key(): KeyIdentity | undefined {
    return this.ctx.key;
  }

  get route(): ModelRoute | undefined {
    return this.ctx.route;
  }

  /** The protocol's session: the pipeline's request is its body from now on. */
  begin(session: ProtocolSession): void {
    this.session = session;
    this.ctx.body = session.body;
    if (session.native) this.#nativeBasis = JSON.stringify(session.body);
  }

  /**
   * Whether the request the pipeline runs is still the protocol's, as it made it: only then does
   * the client's own body (the session's `native`) say the same, and may go upstream in its place.
   * A stage that replaced or edited the body (a policy capping max_tokens, say) is honoured by the
   * translation instead.
   */
  requestUnchanged(): boolean {
    const session = this.session;
    return session !== undefined && this.ctx.body === session.body && JSON.stringify(session.body) === this.#nativeBasis;
  }

  /**
   * What the gateway read but did not carry: the session's drops and those of the attempt that
   * answered (or failed last). No copy unless both have some.
   */
  get dropped(): readonly Drop[] | undefined {
    return joinDrops(this.session?.drops, this.attempt?.drops);
  }

  /**
   * Whether a drop is refused instead (400): `x-switchyard-strict: true`, or `strict: true` on
   * the key or the model alias. Read only when there is a drop.
   */
  get strict(): boolean {
    return this.headers['x-switchyard-strict'] === 'true' || this.ctx.key?.strict === true || this.ctx.route?.strict === true;
  }

  /** Attempts that reached a provider (targets skipped while cooling down or unavailable do not count). */
  get triedCount(): number {
    let n = 0;
    for (const a of this.attempts) if (a.outcome !== 'skipped') n++;
    return n;
  }

  /**
   * The request is over for the client. Releases what it held, then settles, runs the hooks and
   * tells the observers, in that order (the log line carries the settled cost). Once only.
   */
  async end(how: ExchangeEnd): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.attempt?.close();
    how.released(this);
    if (how.settle) {
      try {
        await how.settle(this);
      } catch (err) {
        this.log.error({ err, reqId: this.id }, 'settling limits and spend failed');
      }
    }
    await how.hooks(this.ctx, this.outcome());
    how.observed?.(this);
  }

  /** How the request ended, for the stages' hooks. */
  outcome(now: number = performance.now()): RequestOutcome {
    const durationMs = now - this.startedAt;
    return Object.freeze({
      status: this.status ?? 0,
      stream: this.operation === 'chat' && (this.ctx.body as ChatCompletionRequest).stream === true,
      usage: this.usage,
      costUsd: this.costUsd,
      error: this.streamError ?? this.error,
      errorInStream: this.streamError !== undefined,
      // A copy: hooks read the attempt log, they do not edit the observers' copy.
      attempts: Object.freeze(this.attempts.slice()),
      provider: this.attempt?.target.provider,
      upstreamModel: this.upstreamModel,
      refusal: this.refusal,
      timing: Object.freeze({ durationMs, upstreamMs: this.timing.upstreamMs, overheadMs: Math.max(0, durationMs - this.timing.upstreamMs), firstChunkMs: this.timing.firstChunkMs }),
      traceId: this.traceId,
      dropped: this.dropped,
      annotations: this.annotations,
    });
  }
}
