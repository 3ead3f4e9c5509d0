/**
 * Requests Node's HTTP parser refuses (each checked against a bare node:http server), for the
 * slow-clients suite. A case that injects something carries the marker `zzinjectedzz`, which must
 * never come back in a response.
 */
export const MARKER = 'zzinjectedzz';

export interface MalformedCase {
  name: string;
  bytes: string | Buffer;
  /** The status the gateway answers with (400 bad_request unless the headers are too large). */
  status: number;
  code: string;
}

/*
 * Checked against a bare node:http server (Node 24): every case below raises 'clientError'
 * (HPE_* codes) or Node's own 400 for a missing Host, except HTTP/0.9, which Node serves as a
 * request of version 0.9, and the chunked-body cases, which fail after the handler has started.
 */

const bad = (name: string, bytes: string | Buffer): MalformedCase => ({ name, bytes, status: 400, code: 'bad_request' });
const tooLarge = (name: string, bytes: string): MalformedCase => ({ name, bytes, status: 431, code: 'headers_too_large' });

const POST = 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nContent-Type: application/json\r\n';
const smuggled = `GET /${MARKER} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-${MARKER}: 1\r\n\r\n`;

export const MALFORMED: MalformedCase[] = [
  bad('request line with an extra token', 'GET /healthz HTTP/1.1 extra\r\nHost: x\r\n\r\n'),
  bad('request line that is only garbage', 'GARBAGE\r\n\r\n'),
  bad('HTTP/0.9 style (no version)', 'GET /healthz\r\n\r\n'),
  bad('HTTP/0.9 style with an injected line', `GET /healthz\r\nX-${MARKER}: 1\r\n\r\n`),
  bad('lower-case method', 'get /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
  bad('method with a symbol', 'G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
  bad('space inside the request target', 'GET /heal thz HTTP/1.1\r\nHost: x\r\n\r\n'),
  bad('NUL byte in the request target', 'GET /heal\u0000thz HTTP/1.1\r\nHost: x\r\n\r\n'),
  bad('unknown HTTP version', 'GET /healthz HTTP/4.2\r\nHost: x\r\n\r\n'),
  bad('HTTP/1.1 without Host', 'GET /healthz HTTP/1.1\r\n\r\n'),
  bad('header name with a space', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'),
  bad('space before the colon', 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'),
  bad('header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n'),
  bad('CR inside a header name', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-A\rX-${MARKER}: 1\r\n\r\n`),
  bad('CR inside a header value (response splitting)', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rX-${MARKER}: 1\r\n\r\n`),
  bad('NUL byte in a header value', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000${MARKER}\r\n\r\n`),
  bad('non-ASCII byte in a header name', Buffer.concat([Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nX-'), Buffer.from([0xff]), Buffer.from(': 1\r\n\r\n')])),
  bad('obsolete line folding', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\r\n X-${MARKER}: 1\r\n\r\n`),
  bad('Content-Length and Transfer-Encoding (smuggling)', `${POST}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`),
  bad('two different Content-Length values', `${POST}Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}${smuggled}`),
  bad('Content-Length with two numbers', `${POST}Content-Length: 2, 40\r\n\r\n{}`),
  bad('negative Content-Length', `${POST}Content-Length: -1\r\n\r\n{}`),
  bad('Content-Length that is not a number', `${POST}Content-Length: abc\r\n\r\n{}`),
  bad('Transfer-Encoding that does not end in chunked', `${POST}Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n`),
  bad('chunk size that is not hex', `${POST}Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`),
  bad('chunk size that overflows', `${POST}Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n`),
  bad('chunk data longer than its size', `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX\r\n0\r\n\r\n${smuggled}`),
  tooLarge('one header over 16 KB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`),
  tooLarge('many headers over 16 KB in all', `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 600 }, (_, i) => `X-H${i}: ${'b'.repeat(30)}\r\n`).join('')}\r\n`),
  tooLarge('request target over 16 KB', `GET /healthz?${'q'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`),
];
