/**
 * Graceful shutdown in front of a slow streaming upstream: once close() (or SIGTERM to the CLI)
 * starts, new connections are refused; requests and streams that finish within
 * server.shutdownGraceMs finish intact; streams still running at the deadline end with an
 * in-stream `shutting_down` error and `data: [DONE]`, not a bare cut; and close() resolves.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { type FakeUpstream, startFakeUpstream, startTestGateway, streamAnswer, type TestGateway } from '../../src/kit/testing/index.ts';
import { CLIENT_KEY, chunk, completion, envelopeProblem, sleep } from './helpers.ts';

const BIN = fileURLToPath(new URL('../../bin/switchyard.mjs', import.meta.url));
const GAP_MS = 100;

/** `n` chunks of "w" GAP_MS apart, then the finish chunk and [DONE]. */
const words = (n: number) => streamAnswer([...Array.from({ length: n }, () => chunk('w')), chunk('', 'stop'), 'data: [DONE]\n\n'], { gapMs: GAP_MS });

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream((req) => {
    switch (req.body?.model) {
      case 'long':
        return words(50); // ~5 s
      case 'short':
        return words(4); // ~0.4 s
      case 'medium':
        return words(8); // ~0.8 s
      default:
        return { delayMs: 300, body: completion('slow but in time') };
    }
  });
});
afterAll(() => upstream?.close());

function config(shutdownGraceMs: number) {
  return {
    server: { shutdownGraceMs },
    keys: [{ name: 'client', key: CLIENT_KEY, models: ['*'] }],
    providers: { up: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-shutdown-test-key' } },
    models: Object.fromEntries(['long', 'short', 'medium', 'json'].map((m) => [m, { retry: { attempts: 1 }, targets: [{ provider: 'up', model: m }] }])),
  };
}

interface OpenStream {
  /** Resolves once the first chunk has arrived (the stream is in flight). */
  started: Promise<void>;
  /** Every `data:` payload, `[DONE]` included; `cut` when the connection ended without one. */
  done: Promise<{ status: number; events: string[]; cut: boolean }>;
}

function openStream(baseUrl: string, model: string): OpenStream {
  let markStarted!: () => void;
  let failStarted!: (err: unknown) => void;
  const started = new Promise<void>((resolve, reject) => {
    markStarted = resolve;
    failStarted = reject;
  });
  const done = (async () => {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: AbortSignal.timeout(15_000),
    });
    let text = '';
    let cut = false;
    try {
      const decoder = new TextDecoder();
      for await (const part of res.body!) {
        text += decoder.decode(part, { stream: true });
        if (text.includes('\n\n')) markStarted();
      }
    } catch {
      cut = true;
    }
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    if (events.at(-1) !== '[DONE]') cut = true;
    return { status: res.status, events, cut };
  })();
  done.then(markStarted, failStarted);
  return { started, done };
}

/** Resolves with what `p` gave, or rejects when it takes longer than `ms` (a hang is a failure, not a stuck test). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`${what} did not happen within ${ms} ms`)))]);
}

/** Whether a fresh TCP connection to the port is refused (polled: close() stops listening asynchronously). */
async function refusesConnections(port: number, forMs = 1000): Promise<boolean> {
  const deadline = Date.now() + forMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return true;
    await sleep(25);
  }
  return false;
}

const content = (events: string[]) =>
  events
    .filter((e) => e !== '[DONE]')
    .map((e) => JSON.parse(e))
    .filter((e) => e.choices)
    .map((e) => e.choices[0]?.delta?.content ?? '')
    .join('');

describe('gateway.close() with server.shutdownGraceMs: 800', () => {
  const GRACE_MS = 800;
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(config(GRACE_MS));
  });
  afterAll(() => t?.close());

  it('refuses new connections, finishes what fits in the grace, ends the rest with shutting_down and [DONE]', async () => {
    const long = Array.from({ length: 10 }, () => openStream(t.url, 'long'));
    const short = Array.from({ length: 3 }, () => openStream(t.url, 'short'));
    await within(Promise.all([...long, ...short].map((s) => s.started)), 5000, 'the first chunk of every stream');
    const json = fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'json', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await sleep(50); // the JSON request is in flight
    const port = Number(new URL(t.url).port);

    const closing = t.gateway.close();
    expect(await refusesConnections(port), 'a new connection after close() started').toBe(true);

    const answered = await within(json, GRACE_MS + 3000, 'the in-flight JSON answer');
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('slow but in time');

    for (const s of short) {
      const r = await within(s.done, GRACE_MS + 3000, 'a short stream');
      expect(r.cut, 'a short stream ended without [DONE]').toBe(false);
      expect(content(r.events)).toBe('wwww');
      expect(r.events.some((e) => e.includes('shutting_down'))).toBe(false);
    }

    for (const [i, s] of long.entries()) {
      const r = await within(s.done, GRACE_MS + 3000, `long stream ${i} ending`);
      expect(r.status).toBe(200);
      expect(r.cut, `long stream ${i} was cut without [DONE]: ${r.events.slice(-2).join(' | ')}`).toBe(false);
      expect(r.events.at(-1)).toBe('[DONE]');
      const error = JSON.parse(r.events.at(-2)!);
      expect(envelopeProblem(error)).toBeUndefined();
      expect(error.error.code).toBe('shutting_down');
      expect(content(r.events).length, `long stream ${i} got some chunks first`).toBeGreaterThan(0);
    }

    await within(closing, GRACE_MS + 3000, 'close() resolving');
  }, 20_000);
});

describe('gateway.close() with a grace long enough', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(config(10_000));
  });
  afterAll(() => t?.close());

  it('50 short streams in flight all complete intact', async () => {
    const streams = Array.from({ length: 50 }, () => openStream(t.url, 'medium'));
    await within(Promise.all(streams.map((s) => s.started)), 5000, 'the first chunk of every stream');
    const closing = t.gateway.close();
    const results = await within(Promise.all(streams.map((s) => s.done)), 8000, 'every stream ending');
    for (const [i, r] of results.entries()) {
      expect(r.cut, `stream ${i}`).toBe(false);
      expect(content(r.events), `stream ${i}`).toBe('wwwwwwww');
      expect(
        r.events.some((e) => e.includes('shutting_down')),
        `stream ${i}`,
      ).toBe(false);
    }
    await within(closing, 3000, 'close() resolving once the streams are done');
  }, 20_000);
});

describe('SIGTERM to the CLI', () => {
  it('ends a running stream with shutting_down and [DONE], and exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-shutdown-'));
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, YAML.stringify({ ...config(500), log: { level: 'info', format: 'json' } }));
    const child = spawn(process.execPath, [BIN, '--port', '0', '--config', file, '--no-watch'], { cwd: dir, env: { ...process.env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 15_000;
      let m: RegExpExecArray | null = null;
      while (!(m = /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)) && Date.now() < deadline) await sleep(25);
      expect(m, `no listening line in: ${out.slice(0, 500)}`).toBeTruthy();
      const stream = openStream(m![1], 'long');
      await within(stream.started, 5000, 'the first chunk');
      child.kill('SIGTERM');
      const r = await within(stream.done, 4000, 'the stream ending');
      expect(r.cut, r.events.slice(-2).join(' | ')).toBe(false);
      expect(JSON.parse(r.events.at(-2)!).error.code).toBe('shutting_down');
      expect(await within(exited, 4000, 'the process exiting')).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
