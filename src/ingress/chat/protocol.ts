/** POST /v1/chat/completions: the gateway's own model, through the pipeline as it is. */
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../openai-types.ts';
import type { SseEvents } from '../../pipeline/exchange.ts';
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
      events: () => new ChatEvents(request.stream_options?.include_usage === true),
    };
  },
  error: openAiError,
});

/**
 * Chunks as `data:` lines and a final `[DONE]`. Without `stream_options.include_usage` the usage
 * the gateway asked the upstream for (to log and charge tokens) is kept from the client.
 */
class ChatEvents implements SseEvents {
  readonly #wantsUsage: boolean;
  /** A primed stream's first chunk is its answer starting. */
  readonly started = true;

  constructor(wantsUsage: boolean) {
    this.#wantsUsage = wantsUsage;
  }

  push(chunk: ChatCompletionChunk): string {
    if (!this.#wantsUsage && 'usage' in chunk) {
      if (chunk.usage && chunk.choices.length === 0) return '';
      delete chunk.usage;
    }
    return sseData(chunk);
  }

  end(): string {
    return SSE_DONE;
  }

  fail(error: GatewayError): string {
    return sseData(error.toJSON()) + SSE_DONE;
  }
}
