/**
 * Clients that hold connections open (slowloris: headers or a body trickled a byte at a time) and
 * clients that send what the HTTP parser refuses (bad request lines and headers, smuggling,
 * broken chunked bodies, oversized headers), over raw TCP. The gateway closes the slow ones with
 * its own 408 within server.requestTimeoutMs / headersTimeoutMs, answers every malformed request
 * with the OpenAI error envelope and an x-request-id, closes the connection, reflects nothing,
 * and keeps serving ordinary requests meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';
import { CLIENT_KEY, envelopeProblem, mapLimit, postChat, type RawExchange, rawExchange, trickle, tryJson } from './helpers.ts';
import { MALFORMED, MARKER } from './malformed.ts';

const REQUEST_TIMEOUT_MS = 1500;
const HEADERS_TIMEOUT_MS = 1000;
/** How late a close may come: Node checks its timers periodically, and 30 sockets share 2 cores in CI. */
const MARGIN_MS = 2500;

let t: TestGateway;
let port: number;
beforeAll(async () => {
  t = await startTestGateway({
    server: { requestTimeoutMs: REQUEST_TIMEOUT_MS, headersTimeoutMs: HEADERS_TIMEOUT_MS },
    keys: [{ name: 'client', key: CLIENT_KEY, models: ['*'] }],
    providers: { mock: { plugin: 'mock' } },
    models: { demo: { targets: [{ provider: 'mock', model: 'mock-1' }] } },
  });
  port = Number(new URL(t.url).port);
});
afterAll(() => t?.close());

/** What is wrong with a raw exchange that should end in the gateway's own error and a close. */
function problemOf(x: RawExchange, status: number, code: string): string | undefined {
  if (!x.response) return `no HTTP response (got ${JSON.stringify(x.raw.toString('latin1').slice(0, 120))}, ${x.closed ? 'closed' : 'still open'})`;
  if (x.response.status !== status) return `status ${x.response.status}, expected ${status}: ${x.response.statusLine} ${x.response.body.slice(0, 200)}`;
  const body = tryJson(x.response.body) as { error?: { code?: string } } | undefined;
  const envelope = envelopeProblem(body);
  if (envelope) return `${envelope}: ${JSON.stringify(x.response.body.slice(0, 200))}`;
  if (body?.error?.code !== code) return `error.code ${body?.error?.code}, expected ${code}`;
  if (!x.response.headers['x-request-id']?.[0]) return 'no x-request-id';
  if (!x.response.headers.connection?.some((v) => /close/i.test(v))) return 'no "connection: close"';
  if (!x.closed) return 'the connection stayed open';
  if (x.responses !== 1) return `${x.responses} responses on one connection`;
  return undefined;
}

/** Ordinary requests, one after another, while `until` is pending; all their statuses. */
async function ordinaryTraffic(until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const statuses: number[] = [];
  while (!done || statuses.length < 3) {
    const a = await postChat(t.url, { model: 'demo' });
    statuses.push(a.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return statuses;
}

describe('slowloris', () => {
  it('20 connections trickling their body are answered 408 and closed within requestTimeoutMs; others are served meanwhile', async () => {
    const body = JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x'.repeat(200) }] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${CLIENT_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const slow = Promise.all(
      Array.from({ length: 20 }, () =>
        rawExchange(
          port,
          async (socket, closed) => {
            socket.write(head);
            await trickle(body, 200)(socket, closed);
          },
          REQUEST_TIMEOUT_MS + MARGIN_MS + 3000,
        ),
      ),
    );
    const [exchanges, statuses] = await Promise.all([slow, ordinaryTraffic(slow)]);
    for (const [i, x] of exchanges.entries()) {
      expect(problemOf(x, 408, 'request_timeout'), `connection ${i}`).toBeUndefined();
      expect(x.elapsedMs, `connection ${i} closed after ${Math.round(x.elapsedMs)} ms`).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
    }
    expect(
      statuses.every((s) => s === 200),
      `ordinary requests: ${statuses.join(',')}`,
    ).toBe(true);
  }, 20_000);

  it('10 connections trickling their headers are answered 408 and closed within headersTimeoutMs; others are served meanwhile', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${CLIENT_KEY}\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`;
    const slow = Promise.all(Array.from({ length: 10 }, () => rawExchange(port, trickle(head, 200), HEADERS_TIMEOUT_MS + MARGIN_MS + 3000)));
    const [exchanges, statuses] = await Promise.all([slow, ordinaryTraffic(slow)]);
    for (const [i, x] of exchanges.entries()) {
      expect(problemOf(x, 408, 'request_timeout'), `connection ${i}`).toBeUndefined();
      expect(x.elapsedMs, `connection ${i} closed after ${Math.round(x.elapsedMs)} ms`).toBeLessThan(HEADERS_TIMEOUT_MS + MARGIN_MS);
    }
    expect(
      statuses.every((s) => s === 200),
      `ordinary requests: ${statuses.join(',')}`,
    ).toBe(true);
  }, 20_000);

  it('a connection that sends nothing at all is closed too', async () => {
    const x = await rawExchange(port, async () => {}, REQUEST_TIMEOUT_MS + MARGIN_MS + 3000);
    expect(x.closed, `still open after ${Math.round(x.elapsedMs)} ms`).toBe(true);
    expect(x.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
  }, 20_000);
});

describe(`malformed requests (${MALFORMED.length} cases)`, () => {
  it('each gets the OpenAI error envelope with x-request-id and connection: close, and the connection is closed', async () => {
    const results = await mapLimit(MALFORMED, 8, async (c) => ({ c, x: await rawExchange(port, c.bytes, 4000) }));
    const problems = results.flatMap(({ c, x }) => {
      const p = problemOf(x, c.status, c.code);
      return p ? [`${c.name}: ${p}`] : [];
    });
    expect(problems).toEqual([]);
  }, 20_000);

  it('nothing injected comes back, and a smuggled request is never answered', async () => {
    const results = await mapLimit(MALFORMED, 8, async (c) => ({ c, x: await rawExchange(port, c.bytes, 4000) }));
    for (const { c, x } of results) {
      expect(x.raw.toString('latin1').toLowerCase(), c.name).not.toContain(MARKER);
      expect(x.responses, c.name).toBeLessThanOrEqual(1);
    }
  }, 20_000);

  it('the gateway still serves ordinary requests afterwards', async () => {
    const a = await postChat(t.url, { model: 'demo' });
    expect(a.status).toBe(200);
    expect(t.logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
  });
});
