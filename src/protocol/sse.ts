import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Longest event accepted (a streamed image or a huge tool call fits; an endless line does not). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** One server-sent event as it came off the wire. */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

/**
 * Reads a text/event-stream body incrementally. The parser follows the WHATWG rules, so CRLF
 * separators (Gemini), comments, multi-line data and a BOM are all handled once, here.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxEventBytes = MAX_EVENT_BYTES): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message) });
  // Bytes fed since the last complete event: an upstream that never ends a line must not make
  // the gateway buffer without bound.
  let unfinished = 0;
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (pending.length === 0) {
      unfinished += bytes.length;
      if (unfinished > maxEventBytes) throw new SyntaxError(`a stream event is longer than ${maxEventBytes} bytes without ending`);
      continue;
    }
    unfinished = 0;
    for (let i = 0; i < pending.length; i++) yield pending[i];
    pending.length = 0;
  }
  parser.feed(decoder.decode());
  // The WHATWG parser keeps an unterminated last event; a well-formed stream never ends in one,
  // so a truncated tail is dropped here and noticed by the translator (no finish, no [DONE]).
  for (const message of pending) yield message;
}

export const SSE_DONE = 'data: [DONE]\n\n';

export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Tells nginx-style proxies in front of us not to buffer the stream.
  'x-accel-buffering': 'no',
} as const;
