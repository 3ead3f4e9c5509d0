/**
 * What the gateway lets clients send it at once (issue 21, B7 and the 413).
 *
 * `server.bodyLimit` bounds one body; nothing bounded all of them: 100 concurrent 10 MB bodies
 * took a gateway to 1.7 GB and stalled every other request. `BodyBudget` bounds the bytes of
 * bodies received and held at once (`server.inFlightBodyLimit`): a request takes its
 * Content-Length (a chunked one, the whole `bodyLimit`: its size is unknown) when its headers
 * arrive and gives it back when its answer ends, since the parsed body lives that long. Beyond the
 * budget it is refused with 503 `server_busy` and Retry-After before a byte of its body is read.
 * Per request this is a compare, an add and a subtract.
 *
 * A refused body may still be arriving. Closing the connection then resets it (the unread bytes
 * make the kernel send RST), and the client sees EPIPE/ECONNRESET instead of the answer.
 * `discardUnreadBody` reads and drops the rest instead, as nginx's lingering close does, for at
 * most LINGER_MS and LINGER_BYTES; the connection then stays usable.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and how many bytes, a refused body is read and dropped before the connection is cut. */
const LINGER_MS = 5_000;
const LINGER_BYTES = 64 * 1024 * 1024;

export class BodyBudget {
  readonly capacity: number;
  #held = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Bytes of bodies taken now. */
  get held(): number {
    return this.#held;
  }

  /** Takes `bytes` when they fit; false when they do not. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.capacity) return false;
    this.#held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#held -= bytes;
  }
}

/**
 * The bytes a request's body will take: its Content-Length, the whole `bodyLimit` when chunked,
 * 0 without a body, and undefined when it is over `bodyLimit` (refused with 413 unread anyway).
 */
export function bodyBytesOf(req: IncomingMessage, bodyLimit: number): number | undefined {
  const length = req.headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    return n > bodyLimit ? undefined : n;
  }
  return req.headers['transfer-encoding'] === undefined ? 0 : bodyLimit;
}

/**
 * Reads and drops what is left of a refused body (bounded), so the client reads the answer, not
 * a reset. Node ends a connection whose answer says `Connection: close` (the client asked, or
 * HTTP/1.0) with destroySoon() once the answer is written, which resets it while the body still
 * arrives: on this socket it becomes a half-close (FIN after the answer), and the reads below
 * drain the rest until the client closes or the bound is reached.
 */
export function discardUnreadBody(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  const socket = req.socket as Socket & { destroySoon?: () => void };
  socket.destroySoon = function lingeringClose() {
    socket.end();
  };
  let left = LINGER_BYTES;
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  cut.unref();
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) socket.destroy();
  });
  req.once('end', () => clearTimeout(cut));
  req.once('close', () => clearTimeout(cut));
  req.resume();
}
