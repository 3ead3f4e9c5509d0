/**
 * POST /v1/messages (Anthropic Messages API) and /v1/messages/count_tokens: translated to chat and
 * back, so any provider serves Anthropic clients (Claude Code, the Anthropic SDKs) through the same
 * pipeline; an `anthropic` target gets the client's body as sent (the native pass-through) unless
 * a stage changed the request. Every answer carries Anthropic's `request-id`; errors are
 * Anthropic's envelope, so the SDK raises its own classes. Keys come as `x-api-key` or a bearer
 * token (the auth stage reads both).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk } from '../../openai-types.ts';
import type { ErrorAnswer, ExchangeAttempt, SseEvents } from '../../pipeline/exchange.ts';
import type { NativeRequest } from '../../plugin-api.ts';
import { defineProtocol } from '../protocol.ts';
import { estimateInputTokens } from './count-tokens.ts';
import { anthropicErrorOf } from './errors.ts';
import { type Json, isObject } from './fields.ts';
import { translateMessagesRequest, type MessagesTranslation } from './request.ts';
import { chatToMessage } from './response.ts';
import { MessagesStreamWriter, toSse } from './stream.ts';

/** A Messages request: the client's body and its chat translation. */
interface MessagesCall extends MessagesTranslation {
  body: Json;
}

/** The native protocols an Anthropic-speaking provider declares (`capabilities.nativeProtocols`). */
const MESSAGES = 'anthropic-messages';
const COUNT_TOKENS = 'anthropic-count-tokens';

function readBody(body: unknown, fill?: { max_tokens: number }): MessagesCall {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  // count_tokens takes no max_tokens; any value lets the shared checks run.
  const translation = translateMessagesRequest(fill && body.max_tokens === undefined ? { ...body, ...fill } : body);
  return { body, ...translation };
}

function anthropicError(error: GatewayError, requestId: string): ErrorAnswer {
  return { ...anthropicErrorOf(error, { requestId }), headers: { 'request-id': requestId } };
}

export const messagesProtocol = defineProtocol<MessagesCall>({
  name: 'messages',
  operation: 'chat',
  paths: ['/v1/messages', '/messages'],
  parse: (body) => readBody(body),
  begin({ body, chat, unservable, untranslatable }, { id, headers }) {
    return {
      body: chat,
      // What only Anthropic serves: dropped and reported, or refused (request.ts's table), by any other target.
      native: { protocol: MESSAGES, body, headers: anthropicHeaders(headers), unservable, untranslatable },
      headers: { 'request-id': id },
      answer(response, attempt) {
        if (attempt.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
        return response.kind === 'completion' ? chatToMessage(response.body, body) : response.body;
      },
      events: (attempt) => (attempt.passthrough ? new NativeEvents(attempt) : new MessagesEvents(new MessagesStreamWriter(body))),
    };
  },
  error: anthropicError,
});

/**
 * count_tokens (https://docs.anthropic.com/en/api/messages-count-tokens): counted by a target that
 * speaks it (`x-switchyard-token-count: exact`), else the gateway's estimate of the translated
 * request (`estimate`). Through the pipeline like any request: keys, limits (a request, no
 * tokens), failover, metrics and the log line.
 */
export const countTokensProtocol = defineProtocol<MessagesCall>({
  name: 'messages',
  operation: 'count_tokens',
  paths: ['/v1/messages/count_tokens', '/messages/count_tokens'],
  parse: (body) => readBody(body, { max_tokens: 1 }),
  begin({ body, chat, unservable, untranslatable }, { id, headers }) {
    return {
      body: chat,
      native: { protocol: COUNT_TOKENS, body, headers: anthropicHeaders(headers), unservable, untranslatable },
      estimate: estimateInputTokens(chat),
      headers: { 'request-id': id },
      answer(response, attempt, responseHeaders) {
        responseHeaders['x-switchyard-token-count'] = attempt.passthrough ? 'exact' : 'estimate';
        if (attempt.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
        return response.body;
      },
    };
  },
  error: anthropicError,
});

/** The client's Anthropic protocol headers worth passing to an Anthropic upstream. */
function anthropicHeaders(headers: IncomingHttpHeaders): NativeRequest['headers'] {
  const out: Record<string, string> = {};
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const v = headers[name];
    if (typeof v === 'string' && v) out[name] = v;
  }
  return out;
}

/** The translated event stream; message_start and ping are held until the first content block, so failover stays possible. */
class MessagesEvents implements SseEvents {
  readonly #writer: MessagesStreamWriter;
  started = false;

  constructor(writer: MessagesStreamWriter) {
    this.#writer = writer;
  }

  push(chunk: ChatCompletionChunk): string {
    return this.#frame(this.#writer.push(chunk));
  }

  end(): string {
    return this.#frame(this.#writer.end());
  }

  fail(error: GatewayError): string {
    return this.#frame(this.#writer.fail(error));
  }

  #frame(events: ReturnType<MessagesStreamWriter['push']>): string {
    let text = '';
    for (const e of events) {
      if (e.type !== 'message_start' && e.type !== 'ping') this.started = true;
      text += toSse(e);
    }
    return text;
  }
}

/**
 * A passed-through stream: the upstream's own events, in order, as the translation (which still
 * runs, for usage and cost) consumed them; the chunks only pace the writing.
 */
class NativeEvents implements SseEvents {
  readonly #attempt: ExchangeAttempt;
  started = false;

  constructor(attempt: ExchangeAttempt) {
    this.#attempt = attempt;
  }

  push(): string {
    return this.#take();
  }

  end(): string {
    return this.#take();
  }

  fail(error: GatewayError): string {
    return sse('error', { type: 'error', error: anthropicErrorOf(error).body.error });
  }

  #take(): string {
    let text = '';
    for (const e of this.#attempt.takeNativeEvents()) {
      const event = nativeEvent(e);
      if (event.name !== 'message_start' && event.name !== 'ping') this.started = true;
      text += sse(event.name, event.data);
    }
    return text;
  }
}

/** A decoded upstream SSE event (`{ event?, data }`, see the kit's decodeSseJson): its name and payload. */
function nativeEvent(e: unknown): { name: string; data: unknown } {
  const event = isObject(e) ? e : { data: e };
  const data = event.data;
  const name = typeof event.event === 'string' ? event.event : isObject(data) && typeof data.type === 'string' ? data.type : 'message';
  return { name, data };
}

function sse(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
