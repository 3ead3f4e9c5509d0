/**
 * A fake provider on 127.0.0.1 that records what the gateway sent and answers with scripted or
 * recorded responses (shared/fixtures: status, headers and body bytes exactly as recorded).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FIXTURES } from './paths.ts';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
  raw: string;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** SSE/stream body sent piece by piece, with `gapMs` between pieces. */
  chunks?: Array<string | Buffer>;
  gapMs?: number;
  /** Wait before sending headers. */
  delayMs?: number;
  /** Destroy the socket after sending this many chunks (a cut stream). */
  destroyAfterChunks?: number;
  /** Reset the connection without answering. */
  reset?: boolean;
}

export type Handler = (req: RecordedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>;

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Requests whose connection the client closed before the answer ended. */
  aborted: number;
  /** TCP connections open right now (the gateway's keep-alive pool). */
  readonly openConnections: number;
  setHandler(handler: Handler): void;
  /** Forget recorded requests and aborts. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(handler: Handler): Promise<FakeUpstream> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const state = { aborted: 0 };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      /* keep raw */
    }
    const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw };
    requests.push(recorded);
    let finished = false;
    res.on('close', () => {
      if (!finished) state.aborted++;
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
  });
  let open = 0;
  server.on('connection', (socket) => {
    open++;
    socket.once('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get aborted() {
      return state.aborted;
    },
    get openConnections() {
      return open;
    },
    setHandler(h) {
      current = h;
    },
    reset() {
      requests.length = 0;
      state.aborted = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Fixture {
  status: number;
  headers: Record<string, string>;
  /** Raw body bytes exactly as recorded. */
  body: Buffer;
  /** Parsed JSON body when the fixture is JSON. */
  json?: any;
  request?: any;
  kind: 'json' | 'sse' | 'bin';
}

/** Loads shared/fixtures/<provider>/<name>.* */
export function loadFixture(provider: string, name: string): Fixture {
  const base = path.join(FIXTURES, provider, name);
  const meta = JSON.parse(readFileSync(`${base}.meta.json`, 'utf8')) as { status: number; headers?: Record<string, string> };
  const request = existsSync(`${base}.request.json`) ? JSON.parse(readFileSync(`${base}.request.json`, 'utf8')) : undefined;
  for (const kind of ['json', 'sse', 'bin'] as const) {
    if (existsSync(`${base}.${kind}`)) {
      const body = readFileSync(`${base}.${kind}`);
      return { status: meta.status, headers: meta.headers ?? {}, body, json: kind === 'json' ? JSON.parse(body.toString('utf8')) : undefined, request, kind };
    }
  }
  throw new Error(`fixture ${provider}/${name} has no body file`);
}

/** The fixture as a scripted response: status, headers and the body bytes unchanged. */
export function replay(fixture: Fixture, extra: Partial<ScriptedResponse> = {}): ScriptedResponse {
  if (fixture.kind === 'json') return { status: fixture.status, headers: fixture.headers, body: fixture.body, ...extra };
  return { status: fixture.status, headers: fixture.headers, chunks: splitStream(fixture), ...extra };
}

/** Splits a recorded stream into its events (SSE) so the fake sends them one write at a time. */
export function splitStream(fixture: Fixture): Buffer[] {
  if (fixture.kind === 'bin') return [fixture.body];
  const text = fixture.body.toString('utf8');
  const separator = text.includes('\r\n\r\n') ? '\r\n\r\n' : '\n\n';
  return text
    .split(separator)
    .filter((e) => e.length > 0)
    .map((e) => Buffer.from(e + separator));
}
