/**
 * A `/v1/responses` stream passed through from a target that speaks Responses itself (openai,
 * azure-openai): the upstream's own events, in order, as the attempt's translation (which still
 * runs, for usage and cost) consumed them; the chunks only pace the writing. Ids (`resp_…`,
 * `msg_…`), `sequence_number`s, hosted tool calls and encrypted reasoning are the upstream's,
 * unchanged: each event's data goes out as the text it arrived as (the decoder keeps it), named by
 * its `event:` line or its type.
 *
 * The opening events (response.created / in_progress / queued) say nothing about the answer: the
 * writer holds them until the first output, so an upstream that fails right after them can still
 * be failed over. A failure after the start is told the Responses way: the upstream's own `error`
 * / `response.failed` events when it sent them, else an `error` event and `response.failed` for
 * the response it had opened.
 */
import type { GatewayError } from '../../errors.ts';
import type { ExchangeAttempt, SseEvents } from '../../pipeline/exchange.ts';
import { responseErrorOf } from './errors.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Events that open a response without saying anything about it. */
const OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);
/** Events in which the upstream itself reports a failure. */
const FAILURE = new Set(['error', 'response.failed']);

/** Events whose `response` is the finished one (kept by the stored Responses). */
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export class ResponsesNativeEvents implements SseEvents {
  readonly #attempt: ExchangeAttempt;
  readonly #keep: (response: unknown) => Promise<void>;
  /** The upstream's finished response, once its final event went by. */
  #final: unknown;
  started = false;
  /** The response as the opening events described it, for a failure the upstream did not report. */
  #opened: Json | undefined;
  #sequence = -1;

  constructor(attempt: ExchangeAttempt, keep: (response: unknown) => Promise<void> = async () => {}) {
    this.#attempt = attempt;
    this.#keep = keep;
  }

  push(): string {
    return this.#take().text;
  }

  /** The finished response is kept before the closing text goes out (a next turn may chain on it at once). */
  async end(): Promise<string> {
    const { text } = this.#take();
    await this.#keep(this.#final);
    return text;
  }

  fail(error: GatewayError): string {
    const { text, reported } = this.#take();
    void this.#keep(this.#final);
    if (reported.has('response.failed')) return text;
    const next = () => ++this.#sequence;
    let out = text;
    // The upstream's `error` event stands; the translation stops reading there, before its response.failed.
    if (!reported.has('error')) {
      const failure = { type: 'error', code: error.code, message: error.message, param: error.param, error: { type: error.type, code: error.code, message: error.message, param: error.param } };
      out += sse('error', { ...failure, sequence_number: next() });
    }
    if (this.#opened) {
      const response = { ...this.#opened, status: 'failed', error: responseErrorOf(error) };
      out += sse('response.failed', { type: 'response.failed', response, sequence_number: next() });
    }
    return out;
  }

  /** The upstream events consumed since the last call, framed; `reported`: the failure events among them. */
  #take(): { text: string; reported: Set<string> } {
    let text = '';
    const reported = new Set<string>();
    for (const e of this.#attempt.takeNativeEvents()) {
      const event = isObject(e) ? e : { data: e };
      const data = event.data;
      const name = typeof event.event === 'string' ? event.event : isObject(data) && typeof data.type === 'string' ? data.type : 'message';
      if (isObject(data)) {
        if (typeof data.sequence_number === 'number') this.#sequence = Math.max(this.#sequence, data.sequence_number);
        if (OPENING.has(name) && isObject(data.response)) this.#opened = data.response;
        if (FINAL.has(name) && isObject(data.response)) this.#final = data.response;
      }
      if (!OPENING.has(name)) this.started = true;
      if (FAILURE.has(name)) reported.add(name);
      text += typeof event.raw === 'string' ? frame(name, event.raw) : sse(name, data);
    }
    return { text, reported };
  }
}

function sse(name: string, data: unknown): string {
  return frame(name, JSON.stringify(data));
}

/** One SSE event; data of several lines (SSE joins them with \n) goes out as several `data:` lines again. */
function frame(name: string, data: string): string {
  return `event: ${name}\ndata: ${data.includes('\n') ? data.replaceAll('\n', '\ndata: ') : data}\n\n`;
}
