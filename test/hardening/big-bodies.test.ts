/**
 * Big request bodies against the real CLI on 127.0.0.1 (issue 21, B7 and the 413):
 * - many concurrent large bodies: the bytes held at once stay under `server.inFlightBodyLimit`
 *   (peak RSS bounded), the rest are refused with 503 `server_busy` and Retry-After before their
 *   body is read, counted as refusals; a small request is still answered meanwhile;
 * - a body over `bodyLimit` still being sent (Content-Length or chunked; node:http, undici
 *   fetch, the openai SDK, a raw socket that asked for Connection: close) gets its 413 and
 *   message, not a reset. Without the lingering read only the Connection: close case fails
 *   reliably (EPIPE); the others show what ordinary clients see.
 */
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, type RunningCli, startCli } from '../cluster/helpers.ts';

const KEY = 'sk-big-bodies-0123456789';
const MB = 1024 * 1024;
const BODIES = 30;
/** A chat request of about 4 MB (under the 10 MB bodyLimit): scaled down from 100 × 10 MB for a busy 2-core machine. */
const BIG = JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'x'.repeat(4 * MB) }] });
const CAP_MB = 20;

/** Peak resident memory of a process (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(m[1]) / 1024;
}

interface Posted {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One POST on a connection of its own with a Buffer (Content-Length) or chunked body. */
function post(port: number, body: Buffer | string, chunked = false): Promise<Posted> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    if (chunked) headers['transfer-encoding'] = 'chunked';
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    if (!chunked) return void req.end(body);
    // Chunked: 1 MB pieces, as a streaming client sends an upload of unknown length.
    const bytes = Buffer.from(body);
    let at = 0;
    const next = () => {
      while (at < bytes.length) {
        const piece = bytes.subarray(at, at + MB);
        at += MB;
        if (!req.write(piece)) return void req.once('drain', next);
      }
      req.end();
    };
    next();
  });
}

describe('big request bodies', () => {
  let cli: RunningCli | undefined;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-big-bodies-'));
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `
server: { bodyLimit: 10mb, inFlightBodyLimit: ${CAP_MB}mb, headersTimeoutMs: 30000, requestTimeoutMs: 60000 }
log: { level: info, format: json }
metrics: { enabled: true }
keys:
  - { name: client, key: ${KEY}, models: ["*"] }
providers:
  slow: { plugin: mock, latencyMs: 3000 }
  mock: { plugin: mock }
models:
  slow: { targets: [{ provider: slow, model: mock-1 }] }
  demo: { targets: [{ provider: mock, model: mock-1 }] }
`,
    );
    cli = await startCli(file, 40_000);
  }, 60_000);
  afterAll(() => {
    if (cli?.child.exitCode === null) cli.child.kill('SIGKILL');
  });

  it(`${BODIES} concurrent 4 MB bodies: at most ${CAP_MB} MB held, the rest refused with 503 and Retry-After, a probe still answered`, async () => {
    const { port, child } = cli!;
    const before = peakRssMb(child.pid!);
    const flood = Promise.all(Array.from({ length: BODIES }, () => post(port, BIG)));
    // A small request while the flood is on: answered (its body fits beside the held ones or waits for none).
    const probe = await request(port, 'POST', '/v1/chat/completions', { key: KEY, body: { model: 'demo', messages: [{ role: 'user', content: 'hi' }] }, timeoutMs: 30_000 });
    expect(probe.status).toBe(200);
    const answers = await flood;

    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(served.length + refused.length, JSON.stringify(answers.map((a) => a.status))).toBe(BODIES);
    // 20 MB holds four 4 MB bodies at once, each for its 3 s answer: 120 MB arriving cannot all fit.
    // All 30 arrive within the first answer's 3 s, so at most those four are served: the budget's
    // own proof, the same on every machine (without it all 30 are).
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(Math.floor(CAP_MB / 4));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.headers['x-request-id']).toBeTruthy();
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'server_busy', type: 'service_unavailable_error' });
    }
    // And memory stays below what the 30 bodies' bytes alone would take (120 MB). A held body costs
    // several copies (bytes, string, parsed, the upstream's body): 55 MB more at the peak on an AMD
    // EPYC, 81-96 MB on an Intel Xeon with the same code, about 100 MB on the AMD without the cap.
    const grown = peakRssMb(child.pid!) - before;
    expect(grown, `peak RSS grew by ${grown.toFixed(0)} MB`).toBeLessThan(BODIES * 4);

    const metrics = await request(port, 'GET', '/metrics');
    const line = metrics.body.split('\n').find((l) => l.startsWith('switchyard_refusals_total{') && l.includes('reason="bodies_in_flight"'));
    expect(line, 'a bodies_in_flight refusal counter').toBeDefined();
    expect(Number(line!.slice(line!.lastIndexOf(' ') + 1))).toBe(refused.length);

    // Everything given back: a big body is served again.
    expect((await post(port, BIG)).status).toBe(200);
  }, 60_000);

  for (const chunked of [false, true]) {
    it(`a 50 MB upload over bodyLimit (${chunked ? 'chunked' : 'Content-Length'}) gets its 413 and message, not a reset`, async () => {
      const huge = JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'y'.repeat(50 * MB) }] });
      const answer = await post(cli!.port, huge, chunked);
      expect(answer.status).toBe(413);
      expect(answer.headers['x-request-id']).toBeTruthy();
      expect(JSON.parse(answer.body).error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error' });
      expect(JSON.parse(answer.body).error.message).toContain('server.bodyLimit');
    }, 30_000);
  }

  it('a client that asked for Connection: close and sends all 50 MB reads the 413, and no reset', async () => {
    const size = 50 * MB;
    const outcome = await new Promise<{ received: string; error?: string }>((resolve) => {
      const socket = net.connect(cli!.port, '127.0.0.1');
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (received += d));
      socket.on('error', (err: Error & { code?: string }) => resolve({ received, error: err.code ?? err.message }));
      socket.on('close', () => resolve({ received }));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`);
      socket.end(Buffer.alloc(size, 0x20));
    });
    expect(outcome.error, `after receiving ${JSON.stringify(outcome.received.slice(0, 40))}`).toBeUndefined();
    expect(outcome.received.startsWith('HTTP/1.1 413')).toBe(true);
    expect(outcome.received).toMatch(/x-request-id: req_/);
    expect(outcome.received).toContain('"code":"request_too_large"');
  }, 30_000);

  it('the openai SDK sending a 50 MB request reads the 413 and its message', async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `http://127.0.0.1:${cli!.port}/v1`, maxRetries: 0, timeout: 20_000 });
    const failure = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'z'.repeat(50 * MB) }] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('request_too_large');
    expect((failure as Error).message).toContain('server.bodyLimit');
  }, 30_000);

  it('undici fetch sending 50 MB with Content-Length reads the 413', async () => {
    const res = await fetch(`http://127.0.0.1:${cli!.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: Buffer.alloc(50 * MB, 0x7b),
      signal: AbortSignal.timeout(20_000),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('request_too_large');
  }, 30_000);
});
