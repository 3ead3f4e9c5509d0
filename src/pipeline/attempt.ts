/**
 * One try against one target, owned by one object from start to end: its abort signal and time
 * limit, the provider call (capabilities applied), the native answer, its translation and
 * normalisation, priming a stream (so a failure before the first chunk can still fail over),
 * the attempt log entry and the target's in-flight count. `retry` makes one per try; without
 * `retry` in the pipeline the dispatcher makes the only one.
 */
import { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk, EmbeddingRequest, EmbeddingResponse } from '../openai-types.ts';
import { normalizeEmbeddings } from '../protocol/embeddings.ts';
import {
  isChat,
  isEmbedding,
  type AttemptRecord,
  type Drop,
  type GatewayResponse,
  type NativeRequest,
  type NativeResponse,
  type ProviderCall,
  type RouteTarget,
  type Timeouts,
} from '../plugin-api.ts';
import { applyCapabilities } from '../providers/capabilities.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { normalizeCompletion } from '../protocol/normalize.ts';
import { primeStream } from '../protocol/prime.ts';
import { inputTokensOf, providerFault } from './answer-faults.ts';
import { refusalOf } from './drops.ts';
import { priceEmbeddings, priceUsage } from './pricing.ts';
import type { Exchange, ExchangeAttempt } from './exchange.ts';
import { type StreamOwner, TranslatedStream } from './translated-stream.ts';
import { VerbatimChunk } from './verbatim.ts';

/** Raised by an attempt's own timers: past `timeout.totalMs`, or a stream idle past `timeout.idleMs`. */
class AttemptTimeout extends Error {}

type Phase = 'running' | 'succeeded' | 'failed';

export class Attempt implements ExchangeAttempt {
  readonly number: number;
  readonly target: RouteTarget;
  readonly timeouts: Timeouts;
  call: ProviderCall | undefined;
  native: NativeResponse | undefined;
  response: GatewayResponse | undefined;
  readonly #x: Exchange;
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #startedAt = performance.now();
  #timedOut = false;
  /** A provider was called (not so for a token count the gateway estimated). */
  #sent = false;
  /** Why the gateway ended the attempt itself (shutdown), if it did. */
  #interruption: unknown;
  #phase: Phase = 'running';
  #closed = false;
  #ready: Promise<GatewayResponse> | undefined;
  readonly #traceHeaders: Record<string, string> | undefined;
  #passthrough = false;
  /** A passed-through stream's native events, in order, as the translation consumed them, not yet taken. */
  readonly #nativeEvents: unknown[] = [];
  /** What this attempt left out for its target (see `ProviderCall.drop`); undefined while nothing is. */
  drops: Drop[] | undefined;
  /** A verbatim stream's current chunk and its upstream text (see verbatimJson). */
  #verbatim: VerbatimChunk | undefined;

  /** Starts the exchange's next attempt on `target` (admitted by admitTarget). */
  constructor(x: Exchange, target: RouteTarget, timeouts: Timeouts) {
    this.#x = x;
    this.target = target;
    this.timeouts = timeouts;
    this.number = x.attempts.length + 1;
    // One controller per attempt, aborted by its timer or by the client leaving (cheaper than
    // AbortSignal.any, which keeps weak references alive per dependent signal).
    this.#timer = setTimeout(Attempt.#onTimeout, timeouts.totalMs, this);
    x.signal.addEventListener('abort', this.#onClientGone, { once: true });
    // A client that left before the attempt existed (during admission, say): nothing is sent live.
    if (x.signal.aborted) this.#controller.abort(x.signal.reason);
    target.state.inFlight++;
    x.attempt = this;
    this.#traceHeaders = x.services.observer?.attemptStarted?.(x, this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the attempt called its provider (a token count the gateway estimated does not). */
  get sent(): boolean {
    return this.#sent;
  }

  get passthrough(): boolean {
    return this.#passthrough;
  }

  /** For a passed-through stream: the native events consumed since the last call, in order. */
  takeNativeEvents(): unknown[] {
    return this.#nativeEvents.splice(0, this.#nativeEvents.length);
  }

  /** The upstream's own JSON text for the stream's current chunk when nothing changed it (verbatim.ts): the writer may send it as it is. */
  verbatimJson(chunk: ChatCompletionChunk): string | undefined {
    return this.#verbatim?.jsonOf(chunk);
  }

  /** Builds the provider call (unsupported parameters refused or dropped) and sends it. */
  async send(): Promise<void> {
    const { target } = this;
    const x = this.#x;
    const ctx = x.ctx;
    const waiting = performance.now();
    const dropped = x.session?.drops;
    // What no target gets: a strict request is refused before any provider is called.
    if (dropped?.length && x.strict) throw refusalOf(dropped[0]);
    try {
      if (isEmbedding(ctx)) {
        this.native = { kind: 'json', body: await this.#embed(ctx.body), headers: {} };
        return;
      }
      if (!isChat(ctx)) return; // (every other operation runs a chat request)
      const body = ctx.body;
      const counting = x.operation === 'count_tokens';
      const call: { -readonly [K in keyof ProviderCall]: ProviderCall[K] } = { ...this.#callBase(), request: body, stream: !counting && body.stream === true };
      // The client's own body stands for the request only while no stage changed it.
      const native = x.session?.native;
      const speaks = native !== undefined && target.capabilities.nativeProtocols?.includes(native.protocol) === true && x.requestUnchanged() && (counting || !x.answerTransforms);
      if (counting && !speaks) {
        // What only the native protocol has is refused or dropped, as it would be when served.
        if (native) this.#translating(native);
        const counter = target.capabilities.countTokens ? target.instance.countTokens : undefined;
        if (counter) {
          // The provider counts the request as it would serve it; what it cannot honour is left out, not refused: it is only a count.
          const counted = { ...call, dropUnsupportedParams: true };
          counted.request = applyCapabilities(counted, target.capabilities);
          this.call = counted;
          this.#sent = true;
          this.native = { kind: 'json', body: { input_tokens: await counter.call(target.instance, counted) }, headers: {} };
          return;
        }
        // A target that cannot count: the gateway's estimate answers, no upstream call.
        this.native = { kind: 'json', body: { input_tokens: x.session?.estimate ?? 0 }, headers: {} };
        return;
      }
      if (speaks) {
        // The provider speaks the client's protocol: the client's body goes as it is.
        call.native = native;
        this.#passthrough = true;
      } else {
        if (native) this.#translating(native);
        call.request = applyCapabilities(call, target.capabilities);
      }
      this.call = call;
      this.#sent = true;
      this.native = await target.instance.send(call);
    } finally {
      x.timing.upstreamMs += performance.now() - waiting;
    }
  }

  /** The client's protocol is translated for this target: what only it serves is refused, what only it keeps is dropped. */
  #translating(native: NativeRequest): void {
    if (native.unservable?.length) throw native.unservable[0];
    if (native.untranslatable) for (const drop of native.untranslatable) this.#onDrop(drop);
  }

  #embed(request: EmbeddingRequest): Promise<EmbeddingResponse> {
    // admitTarget let only targets that embed through.
    return this.target.instance.embed!({ ...this.#callBase(), embedding: request });
  }

  /** What every call of this attempt carries, whatever the operation. */
  #callBase(): Omit<ProviderCall, 'request' | 'stream'> {
    const { target } = this;
    const x = this.#x;
    return {
      provider: target.provider,
      model: target.model,
      signal: this.signal,
      requestId: x.id,
      log: x.log,
      dropUnsupportedParams: target.dropUnsupportedParams,
      timeouts: this.timeouts,
      traceHeaders: this.#traceHeaders,
      maxResponseBytes: x.services.upstreamBodyLimit,
      drop: this.#onDrop,
    };
  }

  /**
   * The native answer → an OpenAI completion or chunk stream, normalised. Translation failures
   * are the provider's fault: a 502, never the client's.
   */
  translate(): void {
    const { native, call } = this;
    const x = this.#x;
    const ctx = x.ctx;
    if (native?.kind === 'json' && isEmbedding(ctx)) {
      const body = normalizeEmbeddings(native.body as EmbeddingResponse, ctx.body, this.target);
      this.response = { kind: 'embeddings', body };
      priceEmbeddings(x, this.target, body);
      return;
    }
    if (native?.kind === 'json' && x.operation === 'count_tokens') {
      const countOf = this.#passthrough ? x.session?.countOf : undefined;
      this.response = { kind: 'count', body: { input_tokens: inputTokensOf(native.body, this.target, countOf) } };
      return;
    }
    if (!native || !call) return;
    const instance = this.target.instance;
    if (native.kind === 'json') {
      let body;
      try {
        body = instance.toCompletion(native.body, call);
      } catch (err) {
        throw providerFault(call, err);
      }
      normalizeCompletion(body, call);
      this.response = { kind: 'completion', body };
      if (body.usage) priceUsage(x, this.target, body.usage);
      x.upstreamModel = body.model;
    } else {
      this.response = { kind: 'stream', chunks: new TranslatedStream(this.#streamOwner(call), native.events, call) };
    }
  }

  /** Ends the attempt from the gateway's side (e.g. shutdown): its stream fails with `reason`. */
  interrupt(reason: GatewayError): void {
    this.#interruption ??= reason;
    this.#controller.abort(reason);
  }

  /**
   * Resolves once the answer exists (a stream: its first chunk), recording the success once;
   * a failure is recorded and rethrown as the upstream failure it was. Idempotent.
   */
  complete(): Promise<GatewayResponse> {
    this.#ready ??= this.#complete();
    return this.#ready;
  }

  async #complete(): Promise<GatewayResponse> {
    try {
      let response = this.response;
      if (!response) throw new GatewayError('internal_error', 'the attempt produced no answer (is "transform-response" in the pipeline?)');
      if (response.kind === 'stream') response = this.response = { kind: 'stream', chunks: await primeStream(response.chunks) };
      this.#succeeded();
      return response;
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** Records a failure (once) and returns the error to act on: the attempt's timeout as a timeout. */
  fail(err: unknown): unknown {
    const failure =
      this.#interruption ??
      (this.#timedOut && !this.#x.signal.aborted && !(err instanceof UpstreamError && err.kind === 'timeout')
        ? UpstreamError.timeout(this.target.provider, `no answer within ${this.timeouts.totalMs} ms`, err)
        : err);
    if (this.#phase === 'running') {
      this.#phase = 'failed';
      const status = failure instanceof UpstreamError ? failure.status : 0;
      const x = this.#x;
      const record = { ...this.#record(status, 'error'), error: x.services.redact(String((failure as Error)?.message ?? failure)) };
      x.attempts.push(record);
      x.services.observer?.attemptEnded?.(x, this, record);
      this.close();
    }
    return failure;
  }

  /** Ends the attempt's hold on its target (a streamed one when the response is complete). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#x.signal.removeEventListener('abort', this.#onClientGone);
    this.target.state.inFlight--;
  }

  #succeeded(): void {
    if (this.#phase !== 'running') return;
    this.#phase = 'succeeded';
    // The total limit covers a stream until its first chunk; the idle limit takes over from there.
    clearTimeout(this.#timer);
    const record = this.#record(200, 'ok');
    // Only an answer from the provider is a verdict on the target (its latency, its breaker).
    if (this.#sent) this.target.state.recordSuccess(record.durationMs);
    this.#x.attempts.push(record);
    this.#x.services.observer?.attemptEnded?.(this.#x, this, record);
    if (this.response?.kind !== 'stream') this.close();
  }

  #record(status: number, outcome: AttemptRecord['outcome']): AttemptRecord {
    return { provider: this.target.provider, model: this.target.model, status, outcome, durationMs: Math.round((performance.now() - this.#startedAt) * 100) / 100 };
  }

  // Timer callbacks shared by every attempt (the attempt is the timer's argument): no closure per attempt.
  static #onTimeout(attempt: Attempt): void {
    attempt.#timedOut = true;
    attempt.#controller.abort(new AttemptTimeout());
  }

  readonly #onDrop = (drop: Drop): void => {
    if (this.#x.strict) throw refusalOf(drop);
    (this.drops ??= []).push(drop);
  };

  readonly #onClientGone = (): void => {
    this.#controller.abort(this.#x.signal.reason);
  };

  /** The stream's view of this attempt (translated-stream.ts), made once per stream. */
  #streamOwner(call: ProviderCall): StreamOwner {
    const x = this.#x;
    return {
      idleMs: this.timeouts.idleMs,
      timing: x.timing,
      createTranslator: () => this.target.instance.createStreamTranslator(call),
      // A stage that transforms the answer may change a chunk in place after it left here.
      verbatimFor: (translator) => (translator.verbatim === true && !x.answerTransforms ? (this.#verbatim = new VerbatimChunk()) : undefined),
      consumed: (event) => {
        if (this.#passthrough) this.#nativeEvents.push(event);
      },
      stalled: () => this.#controller.abort(new AttemptTimeout()),
      interruption: () => this.#interruption,
      observe: (chunk) => this.#observe(chunk),
    };
  }

  #observe(chunk: ChatCompletionChunk): ChatCompletionChunk {
    const x = this.#x;
    if (chunk.usage) priceUsage(x, this.target, chunk.usage);
    if (!x.upstreamModel && chunk.model) x.upstreamModel = chunk.model;
    return chunk;
  }
}
