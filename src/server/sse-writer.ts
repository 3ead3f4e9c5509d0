/**
 * The client side of a stream: events written as they come, the events of one turn of the event
 * loop (all those one upstream read produced) gathered into one socket write.
 *
 * Why not res.write per event: Node frames each chunk of a chunked response as four socket
 * writes (size, CRLF, data, CRLF), corks the socket and sends them with writev on the next tick.
 * Framed here, an event or a turn's events are one string and one write. The headers still go
 * out through the response (flushHeaders) and the end through res.end, so Node's own state
 * (keep-alive, the terminating chunk, the next request on the connection) is untouched. Without
 * chunked encoding (an HTTP/1.0 client) or before the response owns its socket (a pipelined
 * request waiting its turn), events go through res.write as before.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class SseWriter {
  readonly #res: ServerResponse;
  /** Set when this writer frames the chunks itself. */
  #socket: Socket | undefined;
  #pending = '';
  /** The UTF-8 length of #pending when every piece came with its length; -1 once one did not (then it is measured). */
  #pendingBytes = 0;
  #scheduled = false;
  /** flush as a callback made once per stream: a turn's process.nextTick then carries no argument array. */
  readonly #flushTurn = (): void => this.flush();
  /** The last write filled the client's buffer: wait for 'drain' before the next one. */
  #full = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** Sends the status line and headers (set with res.writeHead) now, not with the first event. */
  start(): void {
    const res = this.#res;
    res.flushHeaders();
    const socket = res.socket;
    if (socket && res.chunkedEncoding && socket.writableLength === 0) this.#socket = socket;
  }

  /**
   * Queues SSE text for this turn's write; `bytes` is its UTF-8 length when the caller knows it
   * (measuring a concatenated string copies it). False when the client is not reading fast
   * enough: await drained().
   */
  write(text: string, bytes?: number): boolean {
    if (text.length === 0) return !this.#full;
    this.#pending += text;
    this.#pendingBytes = bytes === undefined || this.#pendingBytes < 0 ? -1 : this.#pendingBytes + bytes;
    if (!this.#scheduled) {
      this.#scheduled = true;
      process.nextTick(this.#flushTurn);
    }
    return !this.#full;
  }

  /** Resolves when the client's buffer has room again (or the signal aborts: rejects). */
  async drained(signal: AbortSignal): Promise<void> {
    this.flush();
    if (this.#full) await once(this.#socket ?? this.#res, 'drain', { signal });
    this.#full = false;
  }

  /** Writes what is queued, now. */
  flush(): void {
    this.#scheduled = false;
    const text = this.#pending;
    if (text.length === 0) return;
    const bytes = this.#pendingBytes;
    this.#pending = '';
    this.#pendingBytes = 0;
    const socket = this.#socket;
    let room: boolean;
    if (socket) {
      if (socket.destroyed) return;
      room = socket.write(`${chunkHead(bytes < 0 ? Buffer.byteLength(text) : bytes)}${text}\r\n`);
    } else room = this.#res.write(text);
    if (!room) this.#full = true;
  }

  /** Writes what is queued and `last`, and ends the response. */
  end(last?: string): void {
    if (last) {
      this.#pending += last;
      this.#pendingBytes = -1;
    }
    this.flush();
    this.#res.end();
  }
}

/** Chunk size lines (the size in hex and CRLF) below this size are made once and kept (an array of this many slots). */
const KEPT_HEADS = 4096;
const chunkHeads: Array<string | undefined> = new Array(KEPT_HEADS);

/** A chunk's size line: events are mostly of a few hundred sizes, so most writes build no size string of their own. */
function chunkHead(bytes: number): string {
  if (bytes >= KEPT_HEADS) return `${bytes.toString(16)}\r\n`;
  return (chunkHeads[bytes] ??= `${bytes.toString(16)}\r\n`);
}
