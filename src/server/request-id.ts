import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Random bytes for 256 ids, drawn at once as randomUUID draws its own: an id is a hex slice of them. */
const POOL = Buffer.alloc(16 * 256);
let offset = POOL.length;

/** A fresh id: `req_` and 128 random bits in hex (was a UUID without its dashes: the same length, no string built and stripped). */
export function freshRequestId(): string {
  if (offset === POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const id = POOL.toString('hex', offset, offset + 16);
  offset += 16;
  return `req_${id}`;
}

/**
 * The client's x-request-id when it is sane (so its traces line up) and holds no configured
 * secret (it is echoed and logged), else a fresh one.
 */
export function requestIdFor(req: IncomingMessage, redact?: (text: string) => string): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SANE_REQUEST_ID.test(given) && (!redact || redact(given) === given)) return given;
  return freshRequestId();
}
