import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * The client's x-request-id when it is sane (so its traces line up) and holds no configured
 * secret (it is echoed and logged), else a fresh one.
 */
export function requestIdFor(req: IncomingMessage, redact?: (text: string) => string): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SANE_REQUEST_ID.test(given) && (!redact || redact(given) === given)) return given;
  return `req_${randomUUID().replaceAll('-', '')}`;
}
