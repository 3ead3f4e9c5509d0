/**
 * Fault battery: 100 concurrent 10 MB request bodies at full size (the default 10 MB
 * `bodyLimit`: each one allowed on its own), against the real CLI, while a probe sends a small
 * request every 100 ms. Before `server.inFlightBodyLimit` this took a gateway to 1.7 GB and
 * stalled other traffic 8 s. Asserted is the mechanism, with bounds generous enough for a loaded
 * 2-core machine: the bodies held at once stay under the configured cap (peak RSS grows by less
 * than a small multiple of it: a held body is its bytes, its string and its parsed copy), the
 * rest get 503 `server_busy` with Retry-After before their body is read, counted, and every probe
 * is answered (most within milliseconds). (Smaller bodies and the 413: test/hardening/big-bodies.test.ts.)
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request, startCli, type RunningCli } from '../cluster/helpers.ts';

const KEY = 'sk-fault-bodies-0123456789';
const MB = 1024 * 1024;
const BODIES = 100;
const CAP_MB = 40;
/** A chat request of 10 MB less 1 KB: under the default bodyLimit (10 MB), as big as it allows. */
const BIG = Buffer.from(JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'x'.repeat(10 * MB - 1024) }] }));

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

/** One POST with a Content-Length body on a connection of its own. */
function post(port: number, body: Buffer): Promise<Posted> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.end(body);
  });
}

let cli: RunningCli | undefined;
beforeAll(async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-fault-bodies-')), 'gateway.yaml');
  writeFileSync(
    file,
    `
server: { inFlightBodyLimit: ${CAP_MB}mb, headersTimeoutMs: 60000, requestTimeoutMs: 120000 }
log: { level: info, format: json }
metrics: { enabled: true }
keys:
  - { name: client, key: ${KEY}, models: ["*"] }
providers:
  slow: { plugin: mock, latencyMs: 1500 }
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

it(`${BODIES} concurrent 10 MB bodies: at most ${CAP_MB} MB held, the rest refused with 503, a probe answered throughout`, async () => {
  const { port, child } = cli!;
  const before = peakRssMb(child.pid!);
  let flooding = true;
  const latencies: number[] = [];
  const probeStatuses: number[] = [];
  const probes = (async () => {
    while (flooding) {
      const at = Date.now();
      // No answer within 30 s counts as a failed probe (status 0).
      const probe = await request(port, 'POST', '/v1/chat/completions', { key: KEY, body: { model: 'demo', messages: [{ role: 'user', content: 'hi' }] }, timeoutMs: 10_000 }).catch(() => ({
        status: 0,
      }));
      probeStatuses.push(probe.status);
      latencies.push(Date.now() - at);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const answers = await Promise.all(Array.from({ length: BODIES }, () => post(port, BIG)));
  flooding = false;
  await probes;

  const served = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 503);
  expect(served.length + refused.length, JSON.stringify(answers.map((a) => a.status))).toBe(BODIES);
  // 40 MB holds three 10 MB bodies at once, each for its 1.5 s answer: the 1,000 MB arriving cannot all fit.
  expect(served.length).toBeGreaterThanOrEqual(3);
  expect(refused.length).toBeGreaterThanOrEqual(BODIES / 2);
  for (const r of refused) {
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['x-request-id']).toBeTruthy();
    expect(JSON.parse(r.body).error).toMatchObject({ code: 'server_busy', type: 'service_unavailable_error' });
  }
  const grown = peakRssMb(child.pid!) - before;
  // Three held bodies are ~90 MB (bytes, string, parsed copy); the rest is the refused bodies'
  // chunks read and dropped, and GC lag. Measured 148-204 MB on a 2-core machine (the code of
  // 16f47de and of today alike; without the cap 1.7 GB): 6× the cap bounds it with room.
  expect(grown, `peak RSS grew by ${grown.toFixed(0)} MB`).toBeLessThan(CAP_MB * 6);
  // The probe was never starved: B7 stalled other traffic 8 s, and without the cap no probe was
  // answered within 30 s here. Single probes can wait seconds for a CPU on a loaded machine (the
  // refused bodies are still read and dropped, 960 MB), so the bound is on every probe answering
  // and on the median.
  expect(latencies.length).toBeGreaterThanOrEqual(3);
  expect(probeStatuses.filter((s) => s !== 200)).toEqual([]);
  const median = [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)]!;
  expect(median, `probe latencies ${JSON.stringify(latencies)}`).toBeLessThan(1_000);

  const metrics = await request(port, 'GET', '/metrics');
  const line = metrics.body.split('\n').find((l) => l.startsWith('switchyard_refusals_total{') && l.includes('reason="bodies_in_flight"'));
  expect(line, 'a bodies_in_flight refusal counter').toBeDefined();
  expect(Number(line!.slice(line!.lastIndexOf(' ') + 1))).toBe(refused.length);
}, 90_000);
