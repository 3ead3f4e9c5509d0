/**
 * npm run bench — the gateway against a bare undici pass-through, both in front of the same
 * fake upstream, each server in its own process, all on 127.0.0.1.
 *
 * Measures: throughput and p50/p99 latency at 1, 10 and 100 connections (autocannon,
 * non-streaming), sequential single-connection latency with microsecond timing, streaming
 * time to first byte, and peak RSS of each server under load.
 * BENCH_SECONDS (default 5) sets the length of each autocannon run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Pool } from 'undici';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const KEY = 'sk-bench-0123456789';
const BODY = JSON.stringify({ model: 'bench', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello to the benchmark.' }], temperature: 0 });
const STREAM_BODY = JSON.stringify({ ...JSON.parse(BODY), stream: true });

interface Server {
  name: string;
  url: string;
  child: ChildProcess;
}

/** Both servers run with the V8 flags `npm start` uses, so the comparison is like for like. */
const NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=25'];

/**
 * Starts a server process whose stdout goes to a file (a pipe drained by this busy process
 * would throttle the gateway's request log) and waits for its port to appear there.
 */
async function startChild(name: string, args: string[], portPattern: RegExp, loader = ['--import', 'tsx']): Promise<Server> {
  const logFile = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-bench-')), `${name.replace(/\W+/g, '-')}.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...NODE_FLAGS, ...loader, ...args], { cwd: ROOT, stdio: ['ignore', out, 'inherit'], env: { ...process.env, NODE_ENV: 'production' } });
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  for (let waited = 0; waited < 30_000; waited += 50) {
    const m = portPattern.exec(readFileSync(logFile, 'utf8'));
    if (m) return { name, url: `http://127.0.0.1:${m[1]}`, child };
    if (exited !== undefined) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not start: ${readFileSync(logFile, 'utf8')}`);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function load(target: Server, connections: number, body: string): Promise<{ rps: number; p50: number; p99: number; rss: number; errors: number }> {
  // Warm-up (JIT, connection pools), not recorded.
  await autocannon({ url: `${target.url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body, connections, duration: 2 });
  let peak = rssMb(target.child.pid!);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(target.child.pid!))), 200);
  const result = await autocannon({
    url: `${target.url}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body,
    connections,
    duration: SECONDS,
  });
  clearInterval(sampler);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, rss: peak, errors: result.errors + result.non2xx };
}

/** Sequential requests on one keep-alive connection, timed in microseconds. */
async function sequential(target: Server, body: string, count: number, untilFirstByte: boolean): Promise<{ p50: number; p99: number }> {
  const pool = new Pool(target.url, { connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < count + 200; i++) {
    const started = process.hrtime.bigint();
    const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
    let first = 0n;
    for await (const _chunk of res.body) {
      if (!first) first = process.hrtime.bigint();
      if (untilFirstByte) continue;
    }
    const ended = process.hrtime.bigint();
    if (i >= 200) times.push(Number((untilFirstByte ? first : ended) - started) / 1e6); // first 200 are warm-up
  }
  await pool.close();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)], p99: times[Math.floor(times.length * 0.99)] };
}

const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);

async function main(): Promise<void> {
  const upstream = await startChild('upstream', ['bench/upstream.ts'], /^(\d+)$/m);
  const bare = await startChild('bare undici hop', ['bench/bare-proxy.ts', upstream.url], /^(\d+)$/m);
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-'));
  const config = path.join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, port: 0 }
log: { level: info, format: json }
keys: [{ name: bench, key: ${KEY} }]
providers:
  upstream: { plugin: openai, baseUrl: "${upstream.url}/v1" }
models:
  bench: { targets: [{ provider: upstream, model: mock-upstream-1 }] }
`,
  );
  // The gateway logs its request lines as in production; they go to /dev/null here.
  const gateway = await startChild('gateway', ['bin/switchyard.mjs', '--config', config], /listening on http:\/\/127\.0\.0\.1:(\d+)/, []);

  console.log(`Switchyard benchmark — node ${process.version}, ${SECONDS}s per run, all on 127.0.0.1\n`);
  const rows: string[] = [];
  const ratios: Record<number, number> = {};
  for (const connections of process.env.BENCH_SKIP_LOAD ? [] : [1, 10, 100]) {
    const b = await load(bare, connections, BODY);
    const g = await load(gateway, connections, BODY);
    ratios[connections] = g.rps / b.rps;
    for (const [name, r] of [['bare hop', b], ['gateway', g]] as const) {
      rows.push(`${String(connections).padStart(5)} ${name.padEnd(9)} ${fmt(r.rps, 0)} req/s ${fmt(r.p50)} ms ${fmt(r.p99)} ms ${fmt(r.rss, 1)} MB ${r.errors ? `  ${r.errors} errors` : ''}`);
    }
    rows.push(`      ratio gateway/bare: ${(g.rps / b.rps).toFixed(2)}×`);
  }
  console.log('conns server       throughput     p50 lat     p99 lat    peak RSS');
  console.log(rows.join('\n'));

  const seqBare = await sequential(bare, BODY, 2000, false);
  const seqGw = await sequential(gateway, BODY, 2000, false);
  const ttfbBare = await sequential(bare, STREAM_BODY, 2000, true);
  const ttfbGw = await sequential(gateway, STREAM_BODY, 2000, true);
  console.log(`\nsequential, 1 connection (2000 requests, µs timing)
  non-streaming latency  bare p50 ${seqBare.p50.toFixed(3)} ms  p99 ${seqBare.p99.toFixed(3)} ms   gateway p50 ${seqGw.p50.toFixed(3)} ms  p99 ${seqGw.p99.toFixed(3)} ms   added p50 ${(seqGw.p50 - seqBare.p50).toFixed(3)} ms
  streaming TTFB         bare p50 ${ttfbBare.p50.toFixed(3)} ms  p99 ${ttfbBare.p99.toFixed(3)} ms   gateway p50 ${ttfbGw.p50.toFixed(3)} ms  p99 ${ttfbGw.p99.toFixed(3)} ms   added p50 ${(ttfbGw.p50 - ttfbBare.p50).toFixed(3)} ms`);

  const peak = rssMb(gateway.child.pid!);
  console.log(`\ntargets: throughput ≥ 0.70× bare at 10 conns: ${ratios[10]?.toFixed(2)}× | added p50 ≤ 0.3 ms: ${(seqGw.p50 - seqBare.p50).toFixed(3)} ms | TTFB ≤ +0.5 ms: +${(ttfbGw.p50 - ttfbBare.p50).toFixed(3)} ms | RSS ≤ 150 MB: ${peak.toFixed(1)} MB now`);
  for (const s of [gateway, bare, upstream]) s.child.kill('SIGTERM');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
