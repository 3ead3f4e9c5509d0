/** fetchWhole and fetchEvents: answers off undici's dispatch handler, from a real HTTP server on loopback. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERROR_BODY } from './http-body.ts';
import { fetchEvents, fetchWhole, type StreamedAnswer, type WholeAnswer } from './answer-handler.ts';

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

const mapped = (err: unknown) => new Error(`mapped: ${(err as Error).message}`);

/** A route that writes SSE events when `send` is called, and ends on `end`; `closed` once its connection goes. */
function eventRoute(path: string) {
  const state = { res: undefined as ServerResponse | undefined, closed: false };
  routes.set(path, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    res.on('close', () => {
      state.closed = true;
    });
    state.res = res;
  });
  return {
    state,
    ready: () => expect.poll(() => state.res !== undefined).toBe(true),
    send: (data: string) => state.res?.write(`data: ${data}\n\n`),
    end: () => state.res?.end(),
  };
}

async function started(pool: Pool, path: string, signal = new AbortController().signal, extra: object = {}) {
  const answer = await fetchEvents(pool, { ...post(path), ...extra }, signal, mapped);
  if (!('events' in answer)) throw new Error(`not a stream: ${answer.statusCode}`);
  return { answer, events: answer.events[Symbol.asyncIterator]() };
}

describe('fetchEvents', () => {
  it('resolves when the answer starts; a waiting reader gets each event as it is written; [DONE] and the end finish it', async () => {
    const route = eventRoute('/events');
    const pool = new Pool(origin);
    const pending = started(pool, '/events');
    await route.ready();
    const { answer, events } = await pending;
    expect(answer).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/event-stream' } });
    for (let i = 0; i < 3; i++) {
      const waiting = events.next();
      route.send(JSON.stringify({ i }));
      expect(await waiting).toEqual({ value: { data: { i }, raw: JSON.stringify({ i }) }, done: false });
    }
    route.send('[DONE]');
    route.end();
    expect(await events.next()).toEqual({ value: undefined, done: true });
    await pool.close();
  });

  it('gives a non-2xx answer whole, as fetchWhole does', async () => {
    routes.set('/events-error', chunked(503, ['{"error":', '{"message":"overloaded"}}']));
    const pool = new Pool(origin);
    const answer = (await fetchEvents(pool, post('/events-error'), new AbortController().signal, mapped)) as WholeAnswer;
    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body.toString())).toEqual({ error: { message: 'overloaded' } });
    expect((answer as unknown as StreamedAnswer).events).toBeUndefined();
    await pool.close();
  });

  it('stops reading while the reader is behind (the upstream’s writes back up), and reads on once it catches up', async () => {
    const route = eventRoute('/flood');
    const pool = new Pool(origin);
    const pending = started(pool, '/flood');
    await route.ready();
    const { events } = await pending;
    // 32 MB, unread: more than the handler's queue and both sockets' kernel buffers can hold.
    const big = JSON.stringify({ text: 'x'.repeat(64 * 1024) });
    const total = 500;
    for (let i = 0; i < total; i++) route.send(big);
    route.send('[DONE]');
    route.end();
    // Paused, the upstream's backlog stops shrinking (and never empties); read on, all of it arrives.
    let last = -1;
    let still = 0;
    while (still < 5) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const backlog = route.state.res?.writableLength ?? 0;
      expect(backlog, 'the whole answer went through while nobody read it').toBeGreaterThan(0);
      still = backlog === last ? still + 1 : 0;
      last = backlog;
    }
    let read = 0;
    for (let r = await events.next(); !r.done; r = await events.next()) read++;
    expect(read).toBe(total);
    expect(route.state.res?.writableLength).toBe(0);
    await pool.close();
  });

  it('a reader that stops early aborts the request (the upstream sees its connection close)', async () => {
    const route = eventRoute('/early');
    const pool = new Pool(origin);
    const pending = started(pool, '/early');
    await route.ready();
    const { events } = await pending;
    route.send('{"a":1}');
    expect((await events.next()).done).toBe(false);
    await events.return?.();
    await expect.poll(() => route.state.closed).toBe(true);
    expect(await events.next()).toEqual({ value: undefined, done: true });
    await pool.close();
  });

  it('the signal’s abort mid-stream fails a waiting reader with its reason, mapped, and closes the request', async () => {
    const route = eventRoute('/abort');
    const pool = new Pool(origin);
    const controller = new AbortController();
    const pending = started(pool, '/abort', controller.signal);
    await route.ready();
    const { events } = await pending;
    const waiting = events.next();
    controller.abort(new Error('client left'));
    await expect(waiting).rejects.toThrow('mapped: client left');
    await expect.poll(() => route.state.closed).toBe(true);
    await pool.close();
  });

  it('a reset or an idle upstream mid-stream fails the reader with undici’s error, mapped', async () => {
    const reset = eventRoute('/reset-stream');
    const pool = new Pool(origin);
    let pending = started(pool, '/reset-stream');
    await reset.ready();
    let { events } = await pending;
    reset.send('{"a":1}');
    await events.next();
    const waiting = events.next();
    reset.state.res?.socket?.destroy();
    await expect(waiting).rejects.toThrow(/^mapped: /);

    const idle = eventRoute('/idle');
    pending = started(pool, '/idle', new AbortController().signal, { bodyTimeout: 100 });
    await idle.ready();
    ({ events } = await pending);
    await expect(events.next()).rejects.toThrow(/^mapped: Body Timeout/);
    await pool.close();
  });
});
