/** fetchWhole: a whole answer off undici's dispatch handler, from a real HTTP server on loopback. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERROR_BODY } from './http-body.ts';
import { fetchWhole } from './whole-answer.ts';

const tooLarge = () => new Error('too large');
const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
let server: Server;
let origin: string;
let received = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    req.resume();
    req.on('end', () => routes.get(req.url ?? '')?.(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

/** Writes `chunks` one by one (chunked encoding, no content-length), then ends. */
function chunked(status: number, chunks: string[]) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    let i = 0;
    const next = () => (i < chunks.length ? res.write(chunks[i++], () => setImmediate(next)) : res.end());
    next();
  };
}

const post = (path: string) => ({ method: 'POST' as const, path, body: '{}', headers: { 'content-type': 'application/json' } });

describe('fetchWhole', () => {
  it('joins the chunks, reports status, headers and size, and takes the bytes from the budget', async () => {
    routes.set('/ok', chunked(200, ['{"a":', '1,"b":"', 'é"}']));
    const pool = new Pool(origin);
    const budget = { left: 100 };
    const answer = await fetchWhole(pool, post('/ok'), new AbortController().signal, budget, tooLarge);
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ a: 1, b: 'é' });
    expect(answer).toMatchObject({ statusCode: 200, size: 16, headers: { 'content-type': 'application/json' } });
    expect(budget.left).toBe(84);
    await pool.close();
  });

  it('refuses an answer whose declared length is past the budget before reading it', async () => {
    routes.set('/declared', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '50' });
      res.end('x'.repeat(50));
    });
    const pool = new Pool(origin);
    const budget = { left: 49 };
    await expect(fetchWhole(pool, post('/declared'), new AbortController().signal, budget, tooLarge)).rejects.toThrow('too large');
    expect(budget.left).toBe(49);
    await pool.close();
  });

  it('refuses a chunked answer once its bytes pass the budget, and aborts it', async () => {
    let closed = false;
    routes.set('/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write('0123456789'), 5);
      res.on('close', () => {
        closed = true;
        clearInterval(timer);
      });
    });
    const pool = new Pool(origin);
    await expect(fetchWhole(pool, post('/endless'), new AbortController().signal, { left: 35 }, tooLarge)).rejects.toThrow('too large');
    await expect.poll(() => closed).toBe(true);
    await pool.close();
  });

  it('keeps an error body’s first MAX_ERROR_BODY bytes, counts them all, and spends no budget on them', async () => {
    routes.set('/error', chunked(429, ['x'.repeat(MAX_ERROR_BODY - 10), 'y'.repeat(20), 'z'.repeat(MAX_ERROR_BODY)]));
    const pool = new Pool(origin);
    const budget = { left: 10 };
    const answer = await fetchWhole(pool, post('/error'), new AbortController().signal, budget, tooLarge);
    expect(answer.statusCode).toBe(429);
    expect(answer.size).toBe(2 * MAX_ERROR_BODY + 10);
    expect(answer.body.length).toBe(MAX_ERROR_BODY + 10);
    expect(answer.body.includes('z')).toBe(false);
    expect(budget.left).toBe(10);
    await pool.close();
  });

  it('a connection reset mid-body fails with undici’s error', async () => {
    routes.set('/reset', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"half":', () => res.socket?.destroy());
    });
    const pool = new Pool(origin);
    await expect(fetchWhole(pool, post('/reset'), new AbortController().signal, { left: 1000 }, tooLarge)).rejects.toMatchObject({ name: 'SocketError' });
    await pool.close();
  });

  it('a headers timeout fails with undici’s timeout error', async () => {
    routes.set('/silent', () => undefined);
    const pool = new Pool(origin);
    await expect(fetchWhole(pool, { ...post('/silent'), headersTimeout: 50 }, new AbortController().signal, { left: 1000 }, tooLarge)).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    await pool.close();
  });

  it('an abort mid-answer fails with the signal’s reason and closes the request', async () => {
    let closed = false;
    routes.set('/slow', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      res.on('close', () => {
        closed = true;
      });
    });
    const pool = new Pool(origin);
    const controller = new AbortController();
    const pending = fetchWhole(pool, post('/slow'), controller.signal, { left: 1000 }, tooLarge);
    setTimeout(() => controller.abort(new Error('client left')), 50);
    await expect(pending).rejects.toThrow('client left');
    await expect.poll(() => closed).toBe(true);
    await pool.close();
  });

  it('an abort while the request waits for a connection fails at once, and the request is never sent', async () => {
    let release: (() => void) | undefined;
    routes.set('/hold', (_req, res) => {
      release = () => res.end('{}');
    });
    routes.set('/queued', (_req, res) => res.end('{}'));
    const pool = new Pool(origin, { connections: 1 });
    const holding = fetchWhole(pool, post('/hold'), new AbortController().signal, { left: 1000 }, tooLarge);
    await expect.poll(() => release !== undefined).toBe(true);
    const before = received;
    const controller = new AbortController();
    const queued = fetchWhole(pool, post('/queued'), controller.signal, { left: 1000 }, tooLarge);
    controller.abort(new Error('client left'));
    await expect(queued).rejects.toThrow('client left');
    release?.();
    await holding;
    const after = await fetchWhole(pool, post('/queued'), new AbortController().signal, { left: 1000 }, tooLarge);
    expect(after.statusCode).toBe(200);
    expect(received).toBe(before + 1);
    await pool.close();
  });

  it('a signal aborted before the call fails it without sending anything', async () => {
    const pool = new Pool(origin);
    const before = received;
    await expect(fetchWhole(pool, post('/ok'), AbortSignal.abort(new Error('gone')), { left: 1000 }, tooLarge)).rejects.toThrow('gone');
    expect(received).toBe(before);
    await pool.close();
  });
});
