/**
 * Chat chunks → Gemini's stream of GenerateContentResponse objects, stateful per request. As
 * Gemini streams:
 *
 * - every event is a whole GenerateContentResponse with the next piece of each candidate: a text
 *   delta is one text part, a reasoning delta one `thought: true` part (with `includeThoughts`);
 * - a function call arrives whole, in one part: chat's argument fragments are gathered per call
 *   and sent with the candidate's finish;
 * - `finishReason` is on the candidate's last event, and `usageMetadata` on the stream's last
 *   event: the finishing event is held until chat's usage chunk (or the end) and carries both;
 * - the searches and citations of the target's web search are gathered per candidate and go as
 *   its `groundingMetadata` on that finishing event, offsets over all its text (search.ts).
 *   No partIndex: the text came in many parts, and its offsets count in all of it.
 *
 * `frames` frames the events: SSE (`alt=sse`, what the SDKs ask for) or, without it, the items
 * of one JSON array (Gemini's REST default), written as they come.
 */
import type { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk, UrlCitation, WebSearchCall } from '../../openai-types.ts';
import type { SseEvents } from '../../pipeline/exchange.ts';
import { googleErrorOf } from './errors.ts';
import { finishReasonOf, functionCallPart, usageMetadataOf } from './response.ts';
import { groundingMetadataOf } from './search.ts';
import type { GeminiCandidate, GeminiPart, GeminiResponse } from './types.ts';

/** How the events go on the wire. */
export interface Framing {
  readonly contentType?: string;
  /** One event; `first` says whether it opens the body. */
  event(data: unknown, first: boolean): string;
  /** The end of the body; `empty` when no event was written. */
  close(empty: boolean): string;
}

export const SSE_FRAMING: Framing = {
  // Gemini separates its events with CRLF pairs; every SSE reader takes both.
  event: (data) => `data: ${JSON.stringify(data)}\r\n\r\n`,
  close: () => '',
};

export const JSON_ARRAY_FRAMING: Framing = {
  contentType: 'application/json; charset=utf-8',
  event: (data, first) => `${first ? '[' : ',\r\n'}${JSON.stringify(data)}`,
  close: (empty) => (empty ? '[]' : ']'),
};

export interface StreamOptions {
  includeThoughts: boolean;
  /** The request asked for web search: the text is kept for the grounding's offsets (default: no). */
  webSearch?: boolean;
  /** Named in an error event. */
  requestId: string;
  framing: Framing;
}

/** A tool call being gathered from its fragments. */
interface OpenCall {
  id: string;
  name: string;
  arguments: string;
  extra_content?: unknown;
}

/** What a candidate's grounding is made of: its text so far, the searches and citations. */
interface Searched {
  text: string;
  searches: WebSearchCall[];
  annotations: UrlCitation[];
}

export class GeminiStreamWriter implements SseEvents {
  readonly #includeThoughts: boolean;
  readonly #webSearch: boolean;
  readonly #framing: Framing;
  readonly #requestId: string;
  readonly contentType: string | undefined;
  /** Tool calls per candidate, by chat's tool-call index. */
  readonly #calls = new Map<number, Map<number, OpenCall>>();
  /** Per candidate. */
  readonly #searched = new Map<number, Searched>();
  /** Finished candidates waiting for the usage chunk. */
  #finished: GeminiCandidate[] = [];
  #model = '';
  #id = '';
  #written = false;
  started = false;

  constructor(options: StreamOptions) {
    this.#includeThoughts = options.includeThoughts;
    this.#webSearch = options.webSearch ?? false;
    this.#framing = options.framing;
    this.#requestId = options.requestId;
    this.contentType = options.framing.contentType;
  }

  push(chunk: ChatCompletionChunk): string {
    this.#model = chunk.model || this.#model;
    this.#id ||= chunk.id;
    let text = '';
    const candidates: GeminiCandidate[] = [];
    for (const choice of chunk.choices) {
      const parts: GeminiPart[] = [];
      const d = choice.delta;
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (this.#includeThoughts && typeof reasoning === 'string' && reasoning) parts.push({ text: reasoning, thought: true });
      if (typeof d.content === 'string' && d.content) parts.push({ text: d.content });
      this.#search(choice.index, d);
      for (const delta of d.tool_calls ?? []) this.#gather(choice.index, delta);
      if (parts.length) candidates.push({ content: { role: 'model', parts }, index: choice.index });
      if (choice.finish_reason) this.#finished.push(this.#finish(choice.index, choice.finish_reason));
    }
    if (candidates.length) text += this.#event({ candidates });
    if (chunk.usage) text += this.#last(usageMetadataOf(chunk.usage));
    return text;
  }

  end(): string {
    const text = this.#finished.length ? this.#last(undefined) : '';
    return text + this.#framing.close(!this.#written);
  }

  fail(error: GatewayError): string {
    return this.#framing.event(googleErrorOf(error, this.#requestId).body, !this.#written) + this.#framing.close(false);
  }

  #gather(choice: number, delta: NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number]): void {
    let calls = this.#calls.get(choice);
    if (!calls) this.#calls.set(choice, (calls = new Map()));
    let call = calls.get(delta.index);
    if (!call) calls.set(delta.index, (call = { id: '', name: '', arguments: '' }));
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
    if (delta.extra_content) call.extra_content = delta.extra_content;
  }

  /** Keeps the text (what citation offsets count in) and any searches and citations of the delta. */
  #search(choice: number, d: ChatCompletionChunk['choices'][number]['delta']): void {
    if (!this.#webSearch) return;
    let state = this.#searched.get(choice);
    if (!state) this.#searched.set(choice, (state = { text: '', searches: [], annotations: [] }));
    if (typeof d.content === 'string') state.text += d.content;
    if (Array.isArray(d.web_search_calls)) state.searches.push(...d.web_search_calls);
    if (Array.isArray(d.annotations)) state.annotations.push(...d.annotations);
  }

  /** The candidate's closing piece: its whole function calls, its grounding and its finishReason. */
  #finish(index: number, reason: NonNullable<ChatCompletionChunk['choices'][number]['finish_reason']>): GeminiCandidate {
    const calls = [...(this.#calls.get(index)?.values() ?? [])];
    this.#calls.delete(index);
    const parts = calls.map((c) => functionCallPart({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments }, extra_content: c.extra_content }));
    const candidate: GeminiCandidate = { content: { role: 'model', parts }, finishReason: finishReasonOf(reason), index };
    const searched = this.#searched.get(index);
    this.#searched.delete(index);
    const grounding = searched && groundingMetadataOf(searched.text, searched.searches, searched.annotations);
    if (grounding) candidate.groundingMetadata = grounding;
    return candidate;
  }

  /** The held finishing candidates, with the usage. */
  #last(usageMetadata: GeminiResponse['usageMetadata']): string {
    const response: GeminiResponse = this.#finished.length ? { candidates: this.#finished } : {};
    this.#finished = [];
    if (usageMetadata) response.usageMetadata = usageMetadata;
    return this.#event(response);
  }

  #event(response: GeminiResponse): string {
    response.modelVersion = this.#model;
    response.responseId = this.#id;
    const first = !this.#written;
    this.#written = true;
    this.started = true;
    return this.#framing.event(response, first);
  }
}
