/**
 * npm run bench -- --syscalls (or node bench/syscalls.ts): system calls per request, by name, for
 * the bare undici hop, the fastify + undici floor and the gateway (as npm start runs it), counted
 * by strace on every thread of the serving process. A count, not a time: it is the same on any
 * CPU and on a busy machine, and what a system call costs is what differs most between CPU kinds
 * (the kernel's speculative-execution mitigations on entry and exit): a server that makes more
 * of them pays more on such a CPU than an instruction count says.
 *
 *   SYSCALLS_REQUESTS  counted requests per case (default 2000), after SYSCALLS_WARMUP (2000)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { BODIES } from './load.ts';
import { machine } from './procfs.ts';
import { KEY, pinSelf, type Server, startFloor, startGateway, startHop, startUpstream, stop } from './servers.ts';

const REQUESTS = Number(process.env.SYSCALLS_REQUESTS ?? 2000);
const WARMUP = Number(process.env.SYSCALLS_WARMUP ?? 2000);
/** Not a system call: the context switches row, kept apart from the calls' sum. */
const SWITCHES = '(context switches, all threads)';
const CASES = [
  { name: 'non-streamed, 10 connections', body: BODIES.plain, connections: 10 },
  { name: 'streamed (20 events), 10 connections', body: BODIES.stream, connections: 10 },
  { name: 'non-streamed, 1 connection', body: BODIES.plain, connections: 1 },
] as const;

/** The process that listens: the gateway's bin runs the server in a child of the one npm start began. */
function servingPid(pid: number): number {
  const children = (): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const kids = children();
  return kids.length === 0 ? pid : servingPid(kids[kids.length - 1]);
}

async function send(url: string, body: string, connections: number, total: number): Promise<void> {
  const pool = new Pool(url, { connections });
  let sent = 0;
  const loop = async () => {
    while (sent < total) {
      sent++;
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await pool.close();
}

/** Context switches of every thread of a process so far (voluntary: a thread waited; involuntary: it was preempted). */
function contextSwitches(pid: number): number {
  let sum = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      for (const m of readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8').matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) sum += Number(m[1]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return sum;
}

/** Context switches per request (without strace), then strace -c: calls per request by system call name. */
async function count(server: Server, c: (typeof CASES)[number]): Promise<Map<string, number>> {
  await send(server.url, c.body, c.connections, WARMUP);
  const pid = servingPid(server.pid);
  const before = contextSwitches(pid);
  await send(server.url, c.body, c.connections, REQUESTS);
  const switches = (contextSwitches(pid) - before) / REQUESTS;
  const out = path.join(tmpdir(), `switchyard-syscalls-${process.pid}-${server.name}.txt`);
  const strace: ChildProcess = spawn('strace', ['-f', '-c', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1000));
  await send(server.url, c.body, c.connections, REQUESTS);
  const done = new Promise((r) => strace.once('exit', r));
  strace.kill('SIGINT');
  await done;
  const calls = new Map<string, number>();
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') calls.set(m[2], Number(m[1]) / REQUESTS);
  }
  rmSync(out, { force: true });
  calls.set(SWITCHES, switches);
  return calls;
}

async function main(): Promise<void> {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
  } catch {
    throw new Error('bench --syscalls needs strace (Debian: apt-get install -y strace)');
  }
  pinSelf();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-syscalls-'));
  const upstream = await startUpstream(dir);
  const results: Array<{ server: string; cases: Map<string, number>[] }> = [];
  try {
    for (const [name, start] of [
      ['hop', () => startHop(dir, upstream)],
      ['floor', () => startFloor(dir, upstream)],
      ['gateway', () => startGateway(dir, upstream, { name: 'gateway' })],
    ] as const) {
      const server = await start();
      try {
        const cases: Map<string, number>[] = [];
        for (const c of CASES) cases.push(await count(server, c));
        results.push({ server: name, cases });
      } finally {
        await stop(server);
      }
    }
  } finally {
    await stop(upstream);
    rmSync(dir, { recursive: true, force: true });
  }
  const fmt = (n: number) => n.toFixed(2);
  const sum = (m: Map<string, number>) => [...m].reduce((a, [name, v]) => (name === SWITCHES ? a : a + v), 0);
  const lines = [
    '# System calls per request (strace -c, every thread of the serving process)',
    '',
    `Machine: ${machine()}; Node ${process.version}. ${WARMUP} requests of warm-up, then ${REQUESTS} counted per case.`,
    '',
    `| case | ${results.map((r) => r.server).join(' | ')} |`,
    `|---|${results.map(() => '---:').join('|')}|`,
    ...CASES.map((c, i) => `| ${c.name} | ${results.map((r) => fmt(sum(r.cases[i]))).join(' | ')} |`),
    '',
    'Context switches per request, every thread, counted in a run without strace (/proc/<pid>/task/*/status):',
    '',
    `| case | ${results.map((r) => r.server).join(' | ')} |`,
    `|---|${results.map(() => '---:').join('|')}|`,
    ...CASES.map((c, i) => `| ${c.name} | ${results.map((r) => fmt(r.cases[i].get(SWITCHES) ?? 0)).join(' | ')} |`),
  ];
  for (const [i, c] of CASES.entries()) {
    const names = new Set(results.flatMap((r) => [...r.cases[i].keys()]));
    names.delete(SWITCHES);
    const rows = [...names].map((n) => ({ n, v: results.map((r) => r.cases[i].get(n) ?? 0) })).filter((r) => r.v.some((v) => v >= 0.01));
    rows.sort((a, b) => b.v[b.v.length - 1] - a.v[a.v.length - 1]);
    lines.push('', `## ${c.name}: by call`, '', `| call | ${results.map((r) => r.server).join(' | ')} |`, `|---|${results.map(() => '---:').join('|')}|`);
    for (const r of rows) lines.push(`| ${r.n} | ${r.v.map(fmt).join(' | ')} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
