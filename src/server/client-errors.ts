/**
 * Errors Node's HTTP parser raises before any route runs (malformed request lines and headers,
 * smuggling attempts, oversized headers, slow clients) get the same OpenAI envelope and
 * x-request-id as every other answer, and the connection is closed, as HTTP requires after a
 * framing error.
 */
import type { Socket } from 'node:net';
import { GatewayError } from '../errors.ts';
import { freshRequestId } from './request-id.ts';

export function clientErrorResponse(err: Error & { code?: string }): GatewayError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return new GatewayError('request_timeout', 'The request was not received in time; the connection is closed.');
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', 'The request headers are too large.');
    default:
      // The parser's reason (e.g. HPE_INVALID_HEADER_TOKEN) helps the client's developer; it
      // never contains request bytes.
      return new GatewayError('bad_request', `Malformed HTTP request${err.code?.startsWith('HPE_') ? ` (${err.code})` : ''}.`);
  }
}

const REASON: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** For fastify's `clientErrorHandler`: answers on the raw socket when it is still writable. */
export function handleClientError(err: Error & { code?: string }, socket: Socket): void {
  // A reset by the client, or a socket already answered: nothing to say.
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const error = clientErrorResponse(err);
  const body = JSON.stringify(error.toJSON());
  const head = [
    `HTTP/1.1 ${error.status} ${REASON[error.status] ?? 'Bad Request'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${freshRequestId()}`,
    'connection: close',
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
}
