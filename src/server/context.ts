import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Ingress, Operation, RequestContext } from '../plugin-api.ts';
import type { ChatCompletionRequest } from '../openai-types.ts';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@\-]{1,128}$/;

/**
 * The client's x-request-id when it is sane (so its traces line up) and holds no configured
 * secret (it is echoed and logged), else a fresh one.
 */
export function requestIdFor(req: IncomingMessage, redact?: (text: string) => string): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SANE_REQUEST_ID.test(given) && (!redact || redact(given) === given)) return given;
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** A context whose signal aborts when the client disconnects before the response is complete. */
export function createContext(id: string, req: IncomingMessage, res: ServerResponse, body: unknown, log: Logger, operation: Operation = 'chat', ingress: Ingress = 'chat'): RequestContext {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return {
    id,
    operation,
    ingress,
    startedAt: performance.now(),
    headers: req.headers,
    body: (body ?? {}) as ChatCompletionRequest,
    signal: controller.signal,
    log,
    attempts: [],
    responseHeaders: {},
    timing: { upstreamMs: 0 },
  };
}
