/**
 * The bytes of HTTP exchanges with providers: the request body serialised, a streamed answer
 * decoded as SSE with JSON data, and an error body read as the provider's words (or described,
 * when it is not words).
 */
import type { Dispatcher } from 'undici';
import { GatewayError } from '../errors.ts';
import { SseDecoder } from '../protocol/sse.ts';

/** Response headers as undici gives them. */
export type Headers = Record<string, string | string[] | undefined>;

/** An event of a text/event-stream response with its JSON data parsed. */
export interface SseJsonEvent {
  event?: string;
  data: unknown;
  /** The data as it arrived (the string `data` was parsed from): a pass-through writes it again unchanged. */
  raw?: string;
}

/** Bytes of answer an attempt may still read: one cap over all the requests of an attempt. */
export interface ByteBudget {
  left: number;
}

/** Largest error body read from an upstream; the rest is discarded. */
export const MAX_ERROR_BODY = 64 * 1024;

/** The request body as JSON; client data that cannot be serialised is the client's mistake, not a 500. */
export function serialise(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (err) {
    throw new GatewayError('invalid_request', `The request cannot be forwarded: ${(err as Error).message}.`);
  }
}

/**
 * Default stream decoding: SSE events with JSON data; `data: [DONE]` ends the stream. The body is
 * still read to its end after [DONE] (nothing but the close follows it): returning early would
 * abort the response and throw an AbortError, with its stack, at the end of every stream.
 * `fault` turns a failure (a transport error, or a SyntaxError for bytes that are not SSE with
 * JSON data) into what the reader should see; one generator decodes and maps, since every layer
 * of async generators costs each event a few promises.
 */
export async function* decodeSseJson(body: AsyncIterable<Uint8Array>, fault?: (err: unknown) => unknown): AsyncGenerator<SseJsonEvent> {
  const decoder = new SseDecoder();
  let done = false;
  try {
    for await (const bytes of body) {
      const messages = decoder.push(bytes);
      for (let i = 0; i < messages.length; i++) {
        if (done) break;
        const message = messages[i];
        if (message.data === '[DONE]') done = true;
        else yield { event: message.event, data: parseEventData(message.data), raw: message.data };
      }
    }
    if (done) return;
    for (const message of decoder.end()) {
      if (message.data === '[DONE]') return;
      yield { event: message.event, data: parseEventData(message.data), raw: message.data };
    }
  } catch (err) {
    throw fault ? fault(err) : err;
  }
}

/** One event's data as JSON; a SyntaxError naming the start of it otherwise. */
export function parseEventData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new SyntaxError(`stream event is not JSON: ${data.slice(0, 120)}`);
  }
}

/**
 * The error body in the provider's words, when they are words: a compressed body nobody asked
 * for, or bytes that are not UTF-8, are described rather than passed on as garbage.
 */
export async function readErrorBody(body: Dispatcher.ResponseData['body'], headers: Headers): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < MAX_ERROR_BODY) parts.push(chunk);
      size += chunk.length;
    }
  } catch {
    // A reset mid-error-body still leaves us the status; the message is best effort.
  }
  return errorBodyOf(Buffer.concat(parts), size, headers);
}

/** The error body read so far (`bytes`, of `size` sent) in the provider's words, as readErrorBody says. */
export function errorBodyOf(bytes: Buffer, size: number, headers: Headers): unknown {
  const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== '') return `an error body in an encoding the gateway did not ask for (content-encoding: ${encoding.slice(0, 32)})`;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, MAX_ERROR_BODY));
  } catch {
    return `an error body that is not text (${size} bytes)`;
  }
  text = withoutControlCharacters(text);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Control characters other than tab and newlines are not part of a message. */
function withoutControlCharacters(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code >= 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) out += code === 0x7f ? '' : ch;
  }
  return out;
}
