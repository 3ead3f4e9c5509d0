/**
 * A fake provider on 127.0.0.1: it records what the gateway sent and answers with scripted
 * responses (or recorded ones: see `replay`), so a provider is tested offline against the bytes
 * its real API sends.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: what a client sent, read by tests as they find it
  body: any;
  raw: string;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** A streamed body sent piece by piece, with `gapMs` between pieces (content-type text/event-stream unless given). */
  chunks?: Array<string | Buffer>;
  gapMs?: number;
  /** Wait before sending headers. */
  delayMs?: number;
  /** Destroy the socket after sending this many chunks (a cut stream). */
  destroyAfterChunks?: number;
  /** Reset the connection without answering. */
  reset?: boolean;
}

/** Answers the `index`-th request (0-based, counted since the last `reset`). */
export type Handler = (req: RecordedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>;

export interface FakeUpstream {
  /** http://127.0.0.1:port, once started. */
  readonly url: string;
  requests: RecordedRequest[];
  /** Requests whose connection the client closed before the answer ended. */
  readonly aborted: number;
  /** TCP connections open right now (the gateway's keep-alive pool). */
  readonly openConnections: number;
  setHandler(handler: Handler): void;
  /** Forget recorded requests and aborts. */
  reset(): void;
  /** Back to the handler it was created with, requests and aborts forgotten (between tests). */
  restore(): void;
  /** Listen on a free loopback port; calling it again is harmless. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A scripted stream answer: status 200, text/event-stream unless `extra.headers` says otherwise. */
export function streamAnswer(chunks: Array<string | Buffer>, extra: Partial<ScriptedResponse> = {}): ScriptedResponse {
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks, ...extra };
}

/**
 * A fake upstream that listens once `start()` is called, so it can be declared at the top of a
 * test file and started by `useTestGateway`.
 */
export function fakeUpstream(handler: Handler): FakeUpstream {
  let current = handler;
  const requests: RecordedRequest[] = [];
  let aborted = 0;
  let open = 0;
  let url = '';
  let listening: Promise<void> | undefined;

  const server: Server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      // A handler that throws (a fixture that does not exist, say) must fail the test at once,
      // not leave the gateway waiting for an answer until the test times out: answer 500 with
      // the reason, and rethrow so vitest reports it as an unhandled error naming the cause.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream: ${(err as Error).message}`, type: 'fake_upstream_error', param: null, code: null } }));
      throw err;
    });
  });
  server.on('connection', (socket) => {
    open++;
    socket.once('close', () => open--);
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw };
    requests.push(recorded);
    let finished = false;
    res.on('close', () => {
      if (!finished) aborted++;
    });
    const script = await current(recorded, requests.length - 1);
    if (script.reset) {
      req.socket.destroy();
      return;
    }
    if (script.delayMs) await sleep(script.delayMs);
    const headers = { ...script.headers };
    if (script.chunks) {
      res.writeHead(script.status ?? 200, { 'content-type': 'text/event-stream', ...headers });
      for (let i = 0; i < script.chunks.length; i++) {
        if (script.destroyAfterChunks !== undefined && i >= script.destroyAfterChunks) {
          res.socket?.destroy();
          return;
        }
        if (res.destroyed) return;
        res.write(script.chunks[i]);
        if (script.gapMs) await sleep(script.gapMs);
      }
      finished = true;
      res.end();
      return;
    }
    const payload = typeof script.body === 'string' || Buffer.isBuffer(script.body) ? script.body : JSON.stringify(script.body ?? {});
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    finished = true;
    res.writeHead(script.status ?? 200, headers);
    res.end(payload);
  }

  const reset = () => {
    requests.length = 0;
    aborted = 0;
  };
  return {
    get url() {
      if (!url) throw new Error('the fake upstream is not started yet: await start() first (useTestGateway starts it in beforeAll)');
      return url;
    },
    requests,
    get aborted() {
      return aborted;
    },
    get openConnections() {
      return open;
    },
    setHandler(h) {
      current = h;
    },
    reset,
    restore() {
      current = handler;
      reset();
    },
    start() {
      listening ??= new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)).then(() => {
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });
      return listening;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fake upstream, listening. */
export async function startFakeUpstream(handler: Handler): Promise<FakeUpstream> {
  const upstream = fakeUpstream(handler);
  await upstream.start();
  return upstream;
}
