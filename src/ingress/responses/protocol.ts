/**
 * POST /v1/responses (OpenAI Responses API): a stateless translation to chat and back, so every
 * provider serves it through the same pipeline; a target that speaks Responses itself (openai,
 * azure-openai: `openai-responses` in its native protocols) gets the client's body as sent, unless
 * a stage changed the request, and its answer or events come back untranslated, with the
 * upstream's own `resp_…` ids (src/ingress/responses/native.ts). What the translation leaves out
 * (`untranslatable`) is dropped and reported only when the attempt translates. Errors are
 * OpenAI's envelope, as on chat.
 */
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { SseEvents } from '../../pipeline/exchange.ts';
import type { NativeRequest } from '../../plugin-api.ts';
import type { GatewayError } from '../../errors.ts';
import { defineProtocol, openAiError } from '../protocol.ts';
import { chatRequestOf, readResponsesRequest } from './request.ts';
import { chatToResponse } from './response.ts';
import { ResponsesStreamWriter, toSse } from './stream.ts';
import { responseIds } from './ids.ts';
import { ResponsesNativeEvents } from './native.ts';
import type { ResponsesEvent, ResponsesRequest } from './types.ts';

/** The native protocol a Responses-speaking provider declares (`capabilities.nativeProtocols`). */
const RESPONSES = 'openai-responses';

/** A Responses request: the client's body and what the translation read of it. */
interface ResponsesCall {
  request: ResponsesRequest;
  body: NativeRequest['body'];
}

export const responsesProtocol = defineProtocol<ResponsesCall>({
  name: 'responses',
  operation: 'chat',
  paths: ['/v1/responses', '/responses'],
  // readResponsesRequest refuses anything but an object, so the body is one from here on.
  parse: (body) => ({ request: readResponsesRequest(body), body: body as NativeRequest['body'] }),
  begin({ request, body }, { id }) {
    const ids = responseIds(id);
    return {
      body: chatRequestOf(request),
      native: { protocol: RESPONSES, body, untranslatable: request.untranslatable },
      answer(response, attempt) {
        if (attempt.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
        return response.kind === 'completion' ? chatToResponse(response.body, request, ids) : response.body;
      },
      events: (attempt) => (attempt.passthrough ? new ResponsesNativeEvents(attempt) : new ResponsesEvents(new ResponsesStreamWriter(request, ids))),
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
