/**
 * POST /v1/responses (OpenAI Responses API): a translation to chat and back, so every provider
 * serves it through the same pipeline; a target that speaks Responses itself (openai,
 * azure-openai: `openai-responses` in its native protocols) gets the client's body as sent, unless
 * a stage changed the request, and its answer or events come back untranslated, with the
 * upstream's own `resp_…` ids (native.ts). What the translation leaves out (`untranslatable`)
 * is dropped and reported only when the attempt translates. Stored responses (stored.ts) are
 * expanded before the pipeline runs (the native body too: self-contained, `store: false`), and
 * the finished response, translated or passed through, is kept before its last byte goes out.
 * Errors are OpenAI's envelope, as on chat.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
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
import { expandStored, recorder, selfContainedBody, type StoredCall } from './stored.ts';
import { withoutGatewayReasoning } from './reasoning.ts';
import type { ResponsesEvent, ResponsesRequest } from './types.ts';

/** The native protocol a Responses-speaking provider declares (`capabilities.nativeProtocols`). */
const RESPONSES = 'openai-responses';

/** A Responses request: the client's body and what the translation read of it, and what to keep of its answer (once prepared). */
interface ResponsesCall {
  request: ResponsesRequest;
  /** The client's body (self-contained once prepared), for a target that speaks Responses. */
  body: NativeRequest['body'];
  stored?: StoredCall;
  /** What the response's ids derive from (see idBase). */
  idBase?: string;
}

/**
 * The request id, which ids derive from (a response id then points at its log line), unless the
 * client chose it (x-request-id): a client that sends the same one twice must not get a stored
 * response overwritten, so its ids get a random suffix.
 */
function idBase(id: string, headers: IncomingHttpHeaders): string {
  return headers['x-request-id'] === id ? `${id}-${randomBytes(4).toString('hex')}` : id;
}

export const responsesProtocol = defineProtocol<ResponsesCall>({
  name: 'responses',
  operation: 'chat',
  paths: ['/v1/responses', '/responses'],
  // readResponsesRequest refuses anything but an object, so the body is one from here on.
  parse: (body) => ({ request: readResponsesRequest(body), body: body as NativeRequest['body'] }),
  async prepare({ request, body }, context) {
    const base = idBase(context.id, context.headers);
    const expanded = await expandStored(request, { store: context.responses, key: context.key, responseId: responseIds(base).responseId });
    return { ...expanded, body: selfContainedBody(body, expanded.request), idBase: base };
  },
  begin({ request, body, stored, idBase }, { id }) {
    const ids = responseIds(idBase ?? id);
    const keep = recorder(stored);
    return {
      body: chatRequestOf(request),
      native: { protocol: RESPONSES, body: withoutGatewayReasoning(body), untranslatable: request.untranslatable },
      async answer(response, attempt) {
        const native = attempt.passthrough ? attempt.native : undefined;
        const out = native?.kind === 'json' ? native.body : response.kind === 'completion' ? chatToResponse(response.body, request, ids) : response.body;
        await keep(out);
        return out;
      },
      events: (attempt) => (attempt.passthrough ? new ResponsesNativeEvents(attempt, keep) : new ResponsesEvents(new ResponsesStreamWriter(request, ids), keep)),
    };
  },
  error: openAiError,
});

const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * The Responses event stream; response.created / in_progress say nothing about the answer: held
 * until the first output. The final response (completed, incomplete or failed) is kept: a complete
 * one before its closing event goes out, a failed one without holding the failure back.
 */
class ResponsesEvents implements SseEvents {
  readonly #writer: ResponsesStreamWriter;
  readonly #keep: (response: unknown) => Promise<void>;
  #final: unknown;
  #opening: string;
  started = false;

  constructor(writer: ResponsesStreamWriter, keep: (response: unknown) => Promise<void>) {
    this.#writer = writer;
    this.#keep = keep;
    this.#opening = this.#frame(writer.start());
  }

  push(chunk: ChatCompletionChunk): string {
    return this.#take(this.#frame(this.#writer.push(chunk)));
  }

  async end(): Promise<string> {
    const text = this.#take(this.#frame(this.#writer.end()));
    await this.#keep(this.#final);
    return text;
  }

  fail(error: GatewayError): string {
    const text = this.#frame(this.#writer.fail(error));
    void this.#keep(this.#final);
    return text;
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
      if (FINAL.has(e.type) && 'response' in e) this.#final = e.response;
      text += toSse(e);
    }
    return text;
  }
}
