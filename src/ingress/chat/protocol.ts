/** POST /v1/chat/completions: the gateway's own model, through the pipeline as it is. */
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../openai-types.ts';
import type { ExchangeAttempt, SseEvents } from '../../pipeline/exchange.ts';
import { SSE_DONE, sseData } from '../../protocol/sse.ts';
import { defineProtocol, isRequestObject, openAiError } from '../protocol.ts';

export const chatProtocol = defineProtocol<ChatCompletionRequest>({
  name: 'chat',
  operation: 'chat',
  paths: ['/v1/chat/completions', '/chat/completions'],
  parse(body) {
    if (!isRequestObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
    return body;
  },
  begin(request) {
    return {
      body: request,
      answer: (response) => response.body,
      events: (attempt) => new ChatEvents(request.stream_options?.include_usage === true, attempt),
    };
  },
  error: openAiError,
});

/** The bytes `data: ` and the blank line add to an event's JSON. */
const FRAME_BYTES = 8;

/**
 * Chunks as `data:` lines and a final `[DONE]`. Without `stream_options.include_usage` the usage
 * the gateway asked the upstream for (to log and charge tokens) is kept from the client. A chunk
 * written as it came is the upstream's own text (the attempt's verbatimJson), not serialised again.
 */
class ChatEvents implements SseEvents {
  readonly #wantsUsage: boolean;
  readonly #attempt: ExchangeAttempt;
  /** A primed stream's first chunk is its answer starting. */
  readonly started = true;
  /** The last event push made of an upstream's own text, and its UTF-8 length. */
  #verbatimText: string | undefined;
  #verbatimBytes = 0;

  constructor(wantsUsage: boolean, attempt: ExchangeAttempt) {
    this.#wantsUsage = wantsUsage;
    this.#attempt = attempt;
  }

  push(chunk: ChatCompletionChunk): string {
    if (!this.#wantsUsage && 'usage' in chunk) {
      if (chunk.usage && chunk.choices.length === 0) return '';
      delete chunk.usage;
      return sseData(chunk);
    }
    const json = this.#attempt.verbatimJson?.(chunk);
    if (json === undefined) return sseData(chunk);
    const text = `data: ${json}\n\n`;
    // The upstream's text is one flat string: its length costs no copy, the framed event's would.
    this.#verbatimText = text;
    this.#verbatimBytes = Buffer.byteLength(json) + FRAME_BYTES;
    return text;
  }

  byteLengthOf(text: string): number | undefined {
    return text === this.#verbatimText ? this.#verbatimBytes : undefined;
  }

  end(): string {
    return SSE_DONE;
  }

  fail(error: GatewayError): string {
    return sseData(error.toJSON()) + SSE_DONE;
  }
}
