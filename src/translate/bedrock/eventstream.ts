/**
 * The binary AWS event stream (`application/vnd.amazon.eventstream`) of ConverseStream → native
 * event objects. Framing (prelude, headers, CRC32 checks) is the AWS SDK's own codec from
 * `@smithy/core/event-streams`; this file only names what each frame is:
 *
 *   :message-type event      → { kind: 'event', type: <:event-type>, payload }
 *   :message-type exception  → { kind: 'exception', type: <:exception-type>, payload }
 *   :message-type error      → { kind: 'error', type: <:error-code>, payload: { message: <:error-message> } }
 *
 * JSON payloads are parsed (their random `p` padding field is left for the translator to
 * ignore). A frame that fails its checksum or does not parse is a malformed answer (SyntaxError,
 * which the core reports as the provider's fault); a body that ends inside a frame likewise.
 * Besides the codec, only each frame's leading 4-byte total length is looked at here: to refuse
 * an absurd one before the codec allocates it (an HTML page from a proxy announces ~1 GB) and
 * to notice a body that ends inside a frame's first bytes, which the chunker lets pass.
 */
import type { Message } from '@smithy/core/event-streams';

/** One frame of an AWS event stream, named; a service's own event types narrow `type` and `payload` (ConverseStreamEvent). */
export interface AwsStreamEvent {
  kind: 'event' | 'exception' | 'error';
  /** The event or exception name (`contentBlockDelta`, `throttlingException`, ...). */
  type: string;
  payload: Record<string, unknown>;
}

/** Largest frame accepted (AWS event-stream messages are at most 16 MiB). */
const MAX_FRAME = 16 * 1024 * 1024;

type Codec = [typeof import('@smithy/core/event-streams'), typeof import('@smithy/core/serde')];
let codecModules: Promise<Codec> | undefined;

/**
 * The AWS SDK's codec, imported with the first stream: the kit exports this decoder to every
 * plugin, and only a gateway that streams from an AWS service should pay for loading it.
 */
function loadCodec(): Promise<Codec> {
  return (codecModules ??= Promise.all([import('@smithy/core/event-streams'), import('@smithy/core/serde')]));
}

export async function* decodeAwsEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<AwsStreamEvent> {
  const [{ EventStreamCodec, getChunkedStream }, { fromUtf8, toUtf8 }] = await loadCodec();
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const source = new SourceGuard(body);
  try {
    for await (const frame of getChunkedStream(source)) yield eventOf(codec.decode(frame), toUtf8);
  } catch (err) {
    // Transport failures (a reset socket, a timeout) pass through as they are.
    if (source.failed || err instanceof SyntaxError) throw err;
    throw new SyntaxError(`malformed event stream: ${(err as Error)?.message ?? err}`);
  } finally {
    // The chunker does not close its source when it is left early (an exception frame, a
    // failed translation): close the body here so its connection is not left hanging.
    await source.close();
  }
}

/** One decoded frame → a native event. */
function eventOf(message: Message, toUtf8: (bytes: Uint8Array) => string): AwsStreamEvent {
  const header = (name: string): string | undefined => {
    const h = message.headers[name];
    return h && h.type === 'string' ? h.value : undefined;
  };
  const messageType = header(':message-type') ?? 'event';
  if (messageType === 'error') {
    return { kind: 'error', type: header(':error-code') ?? 'UnknownError', payload: { message: header(':error-message') ?? 'unknown error' } };
  }
  const kind = messageType === 'exception' ? 'exception' : 'event';
  const type = (kind === 'exception' ? header(':exception-type') : header(':event-type')) ?? 'unknown';
  const text = toUtf8(message.body);
  let payload: unknown = {};
  if (text.trim()) {
    try {
      payload = JSON.parse(text);
    } catch {
      if (kind === 'exception') payload = { message: text.slice(0, 500) };
      else throw new SyntaxError(`event-stream frame ${type} is not JSON: ${text.slice(0, 120)}`);
    }
  }
  return { kind, type, payload: payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : { value: payload } };
}

/**
 * Passes the body through, remembering whether the body itself failed (so its errors are not
 * mistaken for framing errors) and refusing a frame whose announced length is absurd before the
 * codec allocates it.
 */
class SourceGuard implements AsyncIterable<Uint8Array> {
  failed = false;
  readonly #body: AsyncIterable<Uint8Array>;
  #iterator?: AsyncIterator<Uint8Array>;
  #done = false;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.#body = body;
  }

  /** Ends the body early (no-op once it has ended or failed). */
  async close(): Promise<void> {
    if (this.#done || this.failed || !this.#iterator) return;
    this.#done = true;
    try {
      await this.#iterator.return?.();
    } catch {
      // Closing is best effort.
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    const lengths = new FrameLengths();
    const iterator = this.#body[Symbol.asyncIterator]();
    this.#iterator = iterator;
    while (true) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (err) {
        this.failed = true;
        throw err;
      }
      if (next.done) {
        this.#done = true;
        if (lengths.partial) throw new SyntaxError('the event stream ended inside a frame');
        return;
      }
      lengths.check(next.value);
      yield next.value;
    }
  }
}

/** Follows the frame boundaries to check each frame's announced total length. */
class FrameLengths {
  /** Bytes left in the current frame, or -1 while reading a frame's 4-byte length. */
  #left = 0;
  #header: number[] = [];

  get partial(): boolean {
    return this.#left > 0 || this.#header.length > 0;
  }

  check(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#left > 0) {
        const take = Math.min(this.#left, chunk.length - i);
        this.#left -= take;
        i += take;
        continue;
      }
      this.#header.push(chunk[i++]);
      if (this.#header.length < 4) continue;
      const [a, b, c, d] = this.#header;
      const length = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
      this.#header = [];
      if (length < 16 || length > MAX_FRAME) throw new SyntaxError(`malformed event stream: a frame announces ${length} bytes`);
      this.#left = length - 4;
    }
  }
}
