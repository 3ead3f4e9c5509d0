/**
 * POST /v1/responses (OpenAI Responses API): a stateless translation to chat and back, so every
 * provider serves it through the same pipeline. Errors are OpenAI's envelope, as on chat. The
 * client's body also goes with the session as `openai-responses`, for a target that speaks the
 * Responses API itself: what the translation leaves out (`untranslatable`) is dropped and reported
 * only when the attempt translates.
 */
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { SseEvents } from '../../pipeline/exchange.ts';
import type { GatewayError } from '../../errors.ts';
import { defineProtocol, openAiError } from '../protocol.ts';
import { chatRequestOf, readResponsesRequest } from './request.ts';
import { chatToResponse } from './response.ts';
import { ResponsesStreamWriter, toSse } from './stream.ts';
import { responseIds } from './ids.ts';
import type { ResponsesEvent, ResponsesRequest } from './types.ts';

/** A Responses request: the client's body and what the translation read of it. */
interface ResponsesCall {
  body: Readonly<Record<string, unknown>>;
  request: ResponsesRequest;
}

/** The native protocol a provider that speaks the Responses API declares (`capabilities.nativeProtocols`). */
const RESPONSES = 'openai-responses';

export const responsesProtocol = defineProtocol<ResponsesCall>({
  name: 'responses',
  operation: 'chat',
  paths: ['/v1/responses', '/responses'],
  parse: (body) => {
    const request = readResponsesRequest(body);
    return { body: body as ResponsesCall['body'], request }; // readResponsesRequest refused anything but an object
  },
  begin({ body, request }, { id }) {
    const ids = responseIds(id);
    return {
      body: chatRequestOf(request),
      native: { protocol: RESPONSES, body, headers: {}, untranslatable: request.untranslatable },
      answer: (response) => (response.kind === 'completion' ? chatToResponse(response.body, request, ids) : response.body),
      events: () => new ResponsesEvents(new ResponsesStreamWriter(request, ids)),
    };
  },
  error: openAiError,
});

/** The Responses event stream; response.created / in_progress say nothing about the answer: held until the first output. */
class ResponsesEvents implements SseEvents {
  readonly #writer: ResponsesStreamWriter;
  #opening: string;
  started = false;

  constructor(writer: ResponsesStreamWriter) {
    this.#writer = writer;
    this.#opening = this.#frame(writer.start());
  }

  push(chunk: ChatCompletionChunk): string {
    return this.#take(this.#frame(this.#writer.push(chunk)));
  }

  end(): string {
    return this.#take(this.#frame(this.#writer.end()));
  }

  fail(error: GatewayError): string {
    return this.#frame(this.#writer.fail(error));
  }

  /** The opening events go out with the first text after them. */
  #take(text: string): string {
    if (!this.#opening) return text;
    const all = this.#opening + text;
    this.#opening = '';
    return all;
  }

  #frame(events: ResponsesEvent[]): string {
    let text = '';
    for (const e of events) {
      if (e.type !== 'response.created' && e.type !== 'response.in_progress') this.started = true;
      text += toSse(e);
    }
    return text;
  }
}
