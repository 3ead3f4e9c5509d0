/**
 * A streamed attempt's native events → normalised chunks. `timeout.idleMs` is measured between
 * parsed events (an upstream that only sends keep-alive comments is stalled), failures caused by
 * the attempt's own timers or an interruption are reported as such, and translation failures are
 * the provider's (502).
 *
 * An iterator written out rather than an async generator: a generator costs every chunk a request
 * object, a second promise and an await of its own for the yield, and in a slow stream every
 * event is its own turn of the event loop. As a generator would, it starts on the first next(),
 * stops reading the upstream on its first failure or return(), and then answers done. Unlike a
 * generator it does not queue calls: one next() at a time, as `for await` and primeStream ask.
 */
import type { ChatCompletionChunk } from '../openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../plugin-api.ts';
import { normalizeChunk } from '../protocol/normalize.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { providerFault } from './answer-faults.ts';
import type { VerbatimChunk } from './verbatim.ts';

/** What the stream asks of the attempt it belongs to. */
export interface StreamOwner {
  /** `timeout.idleMs`. */
  readonly idleMs: number;
  /** The exchange's timing: the waits for the upstream add to `upstreamMs`. */
  readonly timing: { upstreamMs: number };
  /** The provider's translator for this stream, made on the first next(). */
  createTranslator(): StreamTranslator;
  /** Where unchanged chunks are kept with their upstream text, when the translator offers it and the owner allows it. */
  verbatimFor(translator: StreamTranslator): VerbatimChunk | undefined;
  /** Each native event, as the translation consumes it (a passed-through stream keeps them). */
  consumed(event: unknown): void;
  /** The upstream went idleMs without an event while the reader waited: the owner aborts its call. */
  stalled(): void;
  /** Why the owner ended the attempt itself (shutdown), if it did: thrown in place of the abort's error. */
  interruption(): unknown;
  /** Each chunk on its way out (usage priced, the answering model noted). */
  observe(chunk: ChatCompletionChunk): ChatCompletionChunk;
}

type Result = IteratorResult<ChatCompletionChunk>;

export class TranslatedStream implements AsyncIterableIterator<ChatCompletionChunk> {
  readonly #owner: StreamOwner;
  readonly #events: AsyncIterable<unknown>;
  readonly #call: ProviderCall;
  #idle: NodeJS.Timeout | undefined;
  #translator: StreamTranslator | undefined;
  #verbatim: VerbatimChunk | undefined;
  #it: AsyncIterator<unknown> | undefined;
  /** The chunks a translator made of one event (or of the end), handed out from #at on, normalised as they go. */
  #queued: readonly ChatCompletionChunk[] = [];
  #at = 0;
  /** Still reading the upstream. */
  #reading = true;
  #ended = false;
  /** The reader is waiting for the upstream now (the idle limit counts only that). */
  #awaiting = false;
  /** The upstream went longer than idleMs without an event. */
  #idled = false;
  /** When the reader last asked the upstream (performance.now()): a field is updated in place, a number held across an await is boxed anew each event. */
  #askedAt = 0;

  constructor(owner: StreamOwner, events: AsyncIterable<unknown>, call: ProviderCall) {
    this.#owner = owner;
    this.#events = events;
    this.#call = call;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<Result> {
    if (this.#ended) return { value: undefined, done: true };
    const owner = this.#owner;
    const call = this.#call;
    // One async function per chunk: reading the upstream is not a call of its own (a promise more).
    try {
      if (!this.#it) {
        this.#idle = setTimeout(TranslatedStream.#onIdle, owner.idleMs, this);
        this.#translator = owner.createTranslator();
        this.#verbatim = owner.verbatimFor(this.#translator);
        this.#it = this.#events[Symbol.asyncIterator]();
      }
      const translator = this.#translator as StreamTranslator;
      while (this.#at === this.#queued.length && this.#reading) {
        this.#askedAt = performance.now();
        let step: IteratorResult<unknown>;
        try {
          // idleMs counts the wait for the upstream only, from the moment the reader asks.
          this.#awaiting = true;
          this.#idle?.refresh();
          step = await this.#it.next();
        } catch (err) {
          const interruption = owner.interruption();
          if (interruption) throw interruption;
          if (this.#idled) throw UpstreamError.timeout(call.provider, `the answer stalled for ${owner.idleMs} ms (timeout.idleMs)`, err);
          throw err;
        }
        this.#awaiting = false;
        owner.timing.upstreamMs += performance.now() - this.#askedAt;
        if (step.done) {
          await this.#stopReading();
          let tail;
          try {
            tail = translator.end?.();
          } catch (err) {
            throw providerFault(call, err);
          }
          this.#verbatim?.forget();
          if (tail === undefined) break;
          if (!Array.isArray(tail)) return this.#out(tail);
          this.#queued = tail;
          this.#at = 0;
          break;
        }
        owner.consumed(step.value);
        let out;
        try {
          out = translator.push(step.value);
        } catch (err) {
          throw providerFault(call, err);
        }
        if (out === undefined) continue;
        // Taken verbatim: handed out as it came, not normalised.
        if (this.#verbatim?.take(out, step.value)) return { value: owner.observe(out), done: false };
        if (!Array.isArray(out)) return this.#out(out);
        this.#queued = out;
        this.#at = 0;
      }
    } catch (err) {
      this.#ended = true;
      await this.#stopReading();
      throw err;
    }
    if (this.#at < this.#queued.length) return this.#out(this.#queued[this.#at++]);
    this.#ended = true;
    return { value: undefined, done: true };
  }

  async return(): Promise<Result> {
    this.#ended = true;
    await this.#stopReading();
    return { value: undefined, done: true };
  }

  #out(chunk: ChatCompletionChunk): Result {
    return { value: this.#owner.observe(normalizeChunk(chunk, this.#call)), done: false };
  }

  /** Stops reading the upstream, once: the idle timer and the upstream's body go. */
  async #stopReading(): Promise<void> {
    if (!this.#reading) return;
    this.#reading = false;
    clearTimeout(this.#idle);
    await this.#it?.return?.();
  }

  // Shared by every stream (the stream is the timer's argument): no closure per stream.
  static #onIdle(stream: TranslatedStream): void {
    // The time a slow reader takes between chunks is not the upstream's: the next wait re-arms the timer.
    if (!stream.#awaiting) return;
    stream.#idled = true;
    stream.#owner.stalled();
  }
}
