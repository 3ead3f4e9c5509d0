import { Buffer, isUtf8 } from 'node:buffer';
import { SseParser, type SseSink } from './sse-parser.ts';

/** Longest event accepted (a streamed image or a huge tool call fits; an endless line does not). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** One server-sent event as it came off the wire. */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

const NO_MESSAGES: readonly SseMessage[] = Object.freeze([]);
/** TextDecoder's options for a chunk, made once rather than per chunk. */
const STREAM = { stream: true } as const;

/**
 * Decodes a text/event-stream body chunk by chunk, without a generator of its own (a stream's
 * readers loop over its answers inline). The parser (sse-parser.ts) follows the WHATWG rules, so
 * CRLF separators (Gemini), comments, multi-line data and a BOM are all handled once, here.
 * `push` returns the events as an array; `pushTo` hands them to a sink, one call each, for a
 * reader that would only copy them out of that array again.
 */
export class SseDecoder implements SseSink {
  /** Made when a chunk needs it (see #text): most streams never do. */
  #decoder: TextDecoder | undefined;
  readonly #parser = new SseParser();
  readonly #maxEventBytes: number;
  /** What push or end is to return (made for the first event). */
  #pending: SseMessage[] | undefined;
  /** Bytes fed since the last complete event: an upstream that never ends a line must not make the gateway buffer without bound. */
  #unfinished = 0;
  /** Text has been read: a BOM that starts the stream is behind (TextDecoder drops one there). */
  #begun = false;
  /** The TextDecoder may hold a partial character: the next chunks go through it. */
  #carry = false;

  constructor(maxEventBytes = MAX_EVENT_BYTES) {
    this.#maxEventBytes = maxEventBytes;
  }

  /** The events these bytes completed, in order (often none). Throws a SyntaxError past the event size limit. */
  push(bytes: Uint8Array): readonly SseMessage[] {
    return this.pushTo(bytes, this) === 0 ? NO_MESSAGES : this.#take();
  }

  /** Hands the events these bytes completed to `sink`, in order; returns their number. Throws as push does. */
  pushTo(bytes: Uint8Array, sink: SseSink): number {
    const events = this.#parser.feed(this.#text(bytes), sink);
    if (events === 0) {
      this.#unfinished += bytes.length;
      if (this.#unfinished > this.#maxEventBytes) throw new SyntaxError(`a stream event is longer than ${this.#maxEventBytes} bytes without ending`);
      return 0;
    }
    this.#unfinished = 0;
    return events;
  }

  /**
   * The body ended. The WHATWG parser keeps an unterminated last event; a well-formed stream
   * never ends in one, so a truncated tail is dropped here and noticed by the translator (no
   * finish, no [DONE]).
   */
  end(): readonly SseMessage[] {
    return this.endTo(this) === 0 ? NO_MESSAGES : this.#take();
  }

  /** As end, the events to `sink`. */
  endTo(sink: SseSink): number {
    return this.#decoder ? this.#parser.feed(this.#decoder.decode(), sink) : 0;
  }

  /**
   * The chunk as text. TextDecoder.decode makes a Buffer view of its input on each call (one per
   * event of a slow stream); a Buffer of whole UTF-8 characters (the usual chunk) reads the same
   * through toString when no partial character is held, so only the other chunks go through a
   * TextDecoder, made then. Both drop a BOM that starts the stream, as TextDecoder alone did.
   */
  #text(bytes: Uint8Array): string {
    if (!this.#carry && bytes instanceof Buffer && isUtf8(bytes)) {
      if (this.#begun) return bytes.toString();
      if (bytes.length === 0) return '';
      this.#begun = true;
      const text = bytes.toString();
      return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    }
    this.#decoder ??= new TextDecoder('utf-8', { ignoreBOM: this.#begun });
    const text = this.#decoder.decode(bytes, STREAM);
    if (bytes.length > 0) {
      // A chunk that ends in an ASCII byte (a line end, as a rule) leaves no partial character behind.
      this.#carry = bytes[bytes.length - 1] >= 0x80;
      if (!this.#carry) this.#begun = true;
    }
    return text;
  }

  /** The sink of push and end. */
  sseEvent(data: string, event: string | undefined, id: string | undefined): void {
    (this.#pending ??= []).push({ id, event, data });
  }

  #take(): SseMessage[] {
    const messages = this.#pending ?? [];
    this.#pending = undefined;
    return messages;
  }
}

/** Reads a text/event-stream body incrementally, one event at a time (see SseDecoder). */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxEventBytes = MAX_EVENT_BYTES): AsyncGenerator<SseMessage> {
  const decoder = new SseDecoder(maxEventBytes);
  for await (const bytes of body) yield* decoder.push(bytes);
  yield* decoder.end();
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
