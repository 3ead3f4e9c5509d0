import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Random bytes of an id (80 bits, as UUIDv7 keeps after its time). */
const RANDOM_BYTES = 10;
/** Random bytes for 256 ids, drawn at once as randomUUID draws its own: an id's are a hex slice of them. */
const POOL = Buffer.alloc(RANDOM_BYTES * 256);
let offset = POOL.length;

/**
 * A fresh id: `req_` and 32 hex digits, the milliseconds since the epoch (12 digits, as UUIDv7
 * starts) then 80 random bits. Ids made later sort later, so the ledger's index of request ids
 * grows at its end: a random id landed on a random page of that index, and each row cost SQLite
 * a 4 KB page written (and checkpointed) of its own.
 */
export function freshRequestId(now: number = Date.now()): string {
  if (offset === POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const random = POOL.toString('hex', offset, offset + RANDOM_BYTES);
  offset += RANDOM_BYTES;
  return `req_${now.toString(16).padStart(12, '0')}${random}`;
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
