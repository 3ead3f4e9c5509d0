/**
 * npm run bench -- --breakdown (or node bench/breakdown.ts): instructions per request, counted by
 * valgrind's callgrind, for the gateway, the bare undici hop and the fastify + undici floor, and
 * where the gateway's go, part by part. Instruction counts hardly move when other work shares the
 * machine (unlike CPU time), so this runs on a busy machine and reruns on another CPU kind.
 *
 * Each server runs under callgrind (all its threads: GC, compilers, libuv pool); per case the
 * server is warmed up (the JIT's tiers settle), callgrind's counters are zeroed
 * (callgrind_control -z), N requests are sent, and the counters dumped (callgrind_control -d).
 * Outside the counts callgrind's instrumentation is off (start-up and warm-up run about 5×
 * slower than natively, a count some 50×): the counts are those of the real code, not its speed.
 *
 *   BREAKDOWN_CASES     which cases, comma-separated (default plain,stream,one; also slow: streams
 *                      whose events come 50 ms apart, the 1,000-slow-streams regime)
 *   BREAKDOWN_REQUESTS  requests per measured case (default 300)
 *   BREAKDOWN_WARMUP    requests before each case's count (default 3000)
 *   BREAKDOWN_SERVERS   which servers, comma-separated (default gateway,hop,floor)
 *   BREAKDOWN_CONFIG    a gateway.yaml for the gateway instead of the benchmark's (bench/servers.ts)
 *   BREAKDOWN_VARIANT   the benchmark's gateway.yaml with a variant (bench/servers.ts GatewayVariant as
 *                      JSON, e.g. '{"ledger":"off"}'): one feature's instructions, on against off
 *   BREAKDOWN_CACHE    callgrind's cache simulation with these caches, e.g. "--I1=32768,8,64
 *                      --D1=49152,12,64 --LL=2097152,16,64": misses per request and an estimate of
 *                      cycles (Ir + 10 per L1 miss + 100 per last-level miss, cachegrind's rule of
 *                      thumb) for each server, to see what a CPU with smaller caches does to each
 *   BREAKDOWN_FUNCTIONS a regular expression: the inclusive instructions per request of the
 *                      functions it matches (one change's own effect, below the run-to-run noise
 *                      of the parts, which move with GC and with how many rows a flush writes)
 *   BREAKDOWN_CALLERS   a regular expression: the callers of the functions it matches, by what
 *                      their calls cost (who reaches a runtime slow path, a megamorphic store...)
 *   BENCH_GATEWAY_ROOT  the checkout whose gateway is measured (default: this one)
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readProfile, type Profile } from './callgrind.ts';
import { Pool } from 'undici';
import { BODIES } from './load.ts';
import { machine } from './procfs.ts';
import { SERVE_FLAGS } from '../bin/serving-env.mjs';
import { gatewayConfig, GATEWAY_ROOT, KEY, LOAD_CORE, pinSelf, ROOT, SERVER_CORE, startUpstream, stop, type Server } from './servers.ts';
import { partCosts } from './parts.ts';

const REQUESTS = Number(process.env.BREAKDOWN_REQUESTS ?? 300);
const WARMUP = Number(process.env.BREAKDOWN_WARMUP ?? 3000);
const SERVERS = (process.env.BREAKDOWN_SERVERS ?? 'gateway,hop,floor').split(',');
const CACHE = process.env.BREAKDOWN_CACHE?.split(/\s+/).filter(Boolean);

const CASES = {
  plain: { title: 'non-streamed, 10 connections', body: BODIES.plain, connections: 10 },
  stream: { title: 'streamed (20 events), 10 connections', body: BODIES.stream, connections: 10 },
  one: { title: 'non-streamed, 1 connection, sequential', body: BODIES.plain, connections: 1 },
  // The 1,000-slow-streams regime at a rate callgrind keeps up with: each event its own turn of
  // the event loop (50 ms apart), as a real model's tokens arrive. Warmed up on fast streams.
  slow: { title: 'slow streams (20 events 50 ms apart), 20 connections', body: BODIES.slow, connections: 20, warmBody: BODIES.stream },
} as const satisfies Record<string, { title: string; body: string; connections: number; warmBody?: string }>;
type Case = keyof typeof CASES;
const RUN = (process.env.BREAKDOWN_CASES ?? 'plain,stream,one').split(',') as Case[];
for (const c of RUN) if (!(c in CASES)) throw new Error(`BREAKDOWN_CASES: plain, stream, one or slow, not ${c}`);

interface Counted {
  server: string;
  perRequest: Record<Case, number>;
  /** Without garbage collection and JIT compilation: what a window of a few hundred requests measures repeatably (a major GC falls in it or not). */
  mutator: Record<Case, number>;
  profiles: Record<Case, Profile>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A server under callgrind, pinned to the server core, with JIT names written to /tmp/perf-<pid>.map. */
async function startCounted(dir: string, name: string, args: string[], port: number, cwd: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; pid: number; url: string; out: string }> {
  const out = path.join(dir, `cg-${name}`);
  const log = openSync(path.join(dir, `${name}.log`), 'a');
  // Instrumentation off until a count starts: start-up and warm-up run several times faster.
  const valgrind = ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}`, ...(CACHE ? ['--cache-sim=yes', ...CACHE] : [])];
  const node = [process.execPath, ...SERVE_FLAGS, '--perf-basic-prof', '--interpreted-frames-native-stack', ...args];
  const child = spawn('taskset', ['-c', String(SERVER_CORE), ...valgrind, ...node], { cwd, stdio: ['ignore', log, log], env });
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; waited < 900_000; waited += 500) {
    if (child.exitCode !== null) break;
    const up = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(
      () => true,
      () => false,
    );
    if (up) return { child, pid: child.pid as number, url, out };
    await sleep(500);
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not start under valgrind within 900 s:\n${readFileSync(path.join(dir, `${name}.log`), 'utf8').slice(-2000)}`);
}

async function count(dir: string, name: string, args: string[], port: number, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Counted> {
  const server = await startCounted(dir, name, args, port, cwd, env);
  const perRequest = {} as Record<Case, number>;
  const mutator = {} as Record<Case, number>;
  const profiles = {} as Record<Case, Profile>;
  try {
    let dump = 0;
    for (const c of RUN) {
      const spec: { title: string; body: string; connections: number; warmBody?: string } = CASES[c];
      await send(server.url, spec.warmBody ?? spec.body, spec.connections, WARMUP);
      control(server.pid, '-i', 'on');
      // A few requests with the instrumentation on before the count: callgrind's call stacks start from what runs then.
      await send(server.url, spec.body, spec.connections, spec.connections * 2);
      control(server.pid, '-z');
      const failed = await send(server.url, spec.body, spec.connections, REQUESTS);
      control(server.pid, '-d');
      control(server.pid, '-i', 'off');
      dump++;
      if (failed) throw new Error(`${name} ${c}: ${failed} of ${REQUESTS} requests failed`);
      const file = `${server.out}.${dump}`;
      for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(100);
      profiles[c] = readProfile(file, `/tmp/perf-${server.pid}.map`);
      perRequest[c] = profiles[c].total / REQUESTS;
      mutator[c] = withoutRuntime(profiles[c]) / REQUESTS;
      console.error(`${name} · ${spec.title}: ${fmt(perRequest[c])} instructions per request, ${fmt(mutator[c])} without GC and JIT`);
    }
  } finally {
    server.child.kill('SIGKILL');
    rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
  }
  return { server: name, perRequest, mutator, profiles };
}

function control(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/**
 * `total` requests over `connections` closed loops, with no timeouts (under callgrind a request
 * may take seconds on a busy machine); returns how many did not answer 200 with a whole body.
 */
async function send(url: string, body: string, connections: number, total: number): Promise<number> {
  const pool = new Pool(url, { connections, headersTimeout: 0, bodyTimeout: 0 });
  let sent = 0;
  let failed = 0;
  const loop = async () => {
    while (sent < total) {
      sent++;
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
      const text = await res.body.text();
      if (res.statusCode !== 200 || (body.includes('"stream":true') && !text.includes('[DONE]'))) failed++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await pool.close();
  return failed;
}

function freePortSync(offset: number): number {
  return 20_000 + ((process.pid * 7 + offset) % 20_000);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

/** A profile's instructions less garbage collection and JIT compilation (the first two parts). */
function withoutRuntime(profile: Profile): number {
  const { parts } = partCosts(profile);
  return profile.total - parts[0].instructions - parts[1].instructions;
}

/** The parts' own instructions per request (bench/parts.ts). */
function partsTable(profile: Profile): string[] {
  const rows: string[] = ['| part | instructions per request | % of the request | its heaviest functions |', '|---|---:|---:|---|'];
  const { parts, remainder } = partCosts(profile);
  for (const p of parts)
    rows.push(
      `| ${p.name} | ${fmt(p.instructions / REQUESTS)} | ${((100 * p.instructions) / profile.total).toFixed(1)} | ${
        p.functions
          .slice(0, 3)
          .map((f) => `\`${f}\``)
          .join(', ') || '—'
      } |`,
    );
  rows.push(`| the rest (Node's HTTP server, event loop, timers, GC outside a part) | ${fmt(remainder / REQUESTS)} | ${((100 * remainder) / profile.total).toFixed(1)} | |`);
  return rows;
}

/** Misses per request under the simulated caches, and cycles estimated from them (BREAKDOWN_CACHE). */
function cacheTable(counted: Counted[]): string[] {
  const rows = [
    `## Simulated caches: ${CACHE?.join(' ')}`,
    '',
    'Per request, every instruction (GC and JIT included); estimated cycles = instructions + 10 × L1 misses + 100 × last-level misses.',
    '',
    '| case | server | instructions | L1 misses (I1 + D1 read + D1 write) | last-level misses | estimated cycles | vs hop |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  const cycles = (e: Record<string, number>) => (e.Ir ?? 0) + 10 * l1(e) + 100 * ll(e);
  const l1 = (e: Record<string, number>) => (e.I1mr ?? 0) + (e.D1mr ?? 0) + (e.D1mw ?? 0);
  const ll = (e: Record<string, number>) => (e.ILmr ?? 0) + (e.DLmr ?? 0) + (e.DLmw ?? 0);
  for (const c of RUN) {
    const hop = counted.find((x) => x.server === 'hop')?.profiles[c].events;
    for (const x of counted) {
      const e = x.profiles[c].events;
      const ratio = hop ? `${(cycles(e) / cycles(hop)).toFixed(2)}×` : '';
      rows.push(`| ${CASES[c].title} | ${x.server} | ${fmt((e.Ir ?? 0) / REQUESTS)} | ${fmt(l1(e) / REQUESTS)} | ${fmt(ll(e) / REQUESTS)} | ${fmt(cycles(e) / REQUESTS)} | ${ratio} |`);
    }
  }
  return rows;
}

/** Inclusive and self instructions per request of the functions whose names match. */
function matching(profile: Profile, pattern: RegExp): string[] {
  const rows = ['| inclusive per request | self per request | function |', '|---:|---:|---|'];
  const found = [...profile.functions.values()].filter((f) => pattern.test(f.name)).sort((a, b) => b.inclusive - a.inclusive);
  for (const f of found.slice(0, 40)) rows.push(`| ${fmt(f.inclusive / REQUESTS)} | ${fmt(f.self / REQUESTS)} | \`${f.name.slice(0, 140)}\` |`);
  return rows;
}

/** Who calls the matching functions, by what those calls cost (callgrind's inclusive call costs). */
function callers(profile: Profile, pattern: RegExp): string[] {
  const rows = ['| calls cost per request | caller | callee |', '|---:|---|---|'];
  const found: [number, string, string][] = [];
  for (const [caller, out] of profile.calls) for (const [callee, cost] of out) if (pattern.test(callee) && caller !== callee) found.push([cost, caller, callee]);
  for (const [cost, caller, callee] of found.sort((a, b) => b[0] - a[0]).slice(0, 30)) rows.push(`| ${fmt(cost / REQUESTS)} | \`${caller.slice(0, 100)}\` | \`${callee.slice(0, 60)}\` |`);
  return rows;
}

function topTable(profile: Profile, key: 'self' | 'inclusive', limit: number): string[] {
  const rows = [`| ${key} instructions per request | function |`, '|---:|---|'];
  for (const f of [...profile.functions.values()].sort((a, b) => b[key] - a[key]).slice(0, limit)) rows.push(`| ${fmt(f[key] / REQUESTS)} | \`${f.name.slice(0, 140)}\` |`);
  return rows;
}

async function main(): Promise<void> {
  pinSelf();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-breakdown-'));
  const upstream: Server = await startUpstream(dir);
  const counted: Counted[] = [];
  try {
    for (const [i, name] of SERVERS.entries()) {
      const port = freePortSync(i);
      if (name === 'hop') counted.push(await count(dir, 'hop', ['bench/bare-proxy.mjs', upstream.url, String(port)], port, ROOT));
      else if (name === 'floor') counted.push(await count(dir, 'floor', ['bench/floor.mjs', upstream.url, String(port)], port, ROOT));
      else if (name === 'gateway') {
        // The compiled gateway, as npm start runs it (built first when its sources changed).
        const build = spawnSync(process.execPath, ['scripts/start.mjs', '--version'], { cwd: GATEWAY_ROOT, stdio: 'ignore' });
        if (build.status !== 0) throw new Error('building dist/ failed');
        const config = process.env.BREAKDOWN_CONFIG ?? path.join(dir, 'gateway.yaml');
        if (!process.env.BREAKDOWN_CONFIG) writeFileSync(config, gatewayConfig(upstream, { name: 'gateway', ...JSON.parse(process.env.BREAKDOWN_VARIANT ?? '{}') }));
        const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_RUN_DIST: '1' };
        delete env.NODE_OPTIONS;
        counted.push(await count(dir, 'gateway', ['bin/switchyard.mjs', '--config', config, '--port', String(port), '--no-watch'], port, GATEWAY_ROOT, env));
      } else throw new Error(`BREAKDOWN_SERVERS: gateway, hop or floor, not ${name}`);
    }
  } finally {
    await stop(upstream);
  }
  const lines: string[] = [
    '# Instructions per request (callgrind)',
    '',
    `Machine: ${machine()}; Node ${process.version}; valgrind ${execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim()}.`,
    `Each case: ${WARMUP} requests of warm-up, then ${REQUESTS} counted (all threads of the server), upstream on CPU ${LOAD_CORE}, server on CPU ${SERVER_CORE}, on 127.0.0.1.`,
    '',
    'Per request: all instructions, then without garbage collection and JIT compilation (in brackets), which is what a window of a few hundred requests measures repeatably: a major GC falls in it or not.',
    '',
    `| case | ${counted.map((c) => c.server).join(' | ')} |${counted.length > 1 ? ' gateway vs the others, without GC and JIT |' : ''}`,
    `|---|${counted.map(() => '---:').join('|')}|${counted.length > 1 ? '---|' : ''}`,
  ];
  for (const c of RUN) {
    const gw = counted.find((x) => x.server === 'gateway');
    const ratios = gw && counted.length > 1 ? counted.filter((x) => x !== gw).map((x) => `${(gw.mutator[c] / x.mutator[c]).toFixed(2)}× ${x.server}`) : [];
    lines.push(`| ${CASES[c].title} | ${counted.map((x) => `${fmt(x.perRequest[c])} (${fmt(x.mutator[c])})`).join(' | ')} |${ratios.length ? ` ${ratios.join(', ')} |` : ''}`);
  }
  const gateway = counted.find((x) => x.server === 'gateway');
  if (gateway) {
    for (const c of RUN.filter((x) => x !== 'one')) {
      lines.push('', `## The gateway's parts, ${CASES[c].title}`, '', ...partsTable(gateway.profiles[c]));
      lines.push('', `### Heaviest functions, ${CASES[c].title}`, '', ...topTable(gateway.profiles[c], 'self', 30));
    }
  }
  for (const other of counted.filter((x) => x.server !== 'gateway'))
    if (other.profiles.plain) lines.push('', `## Heaviest functions of the ${other.server}, ${CASES.plain.title}`, '', ...topTable(other.profiles.plain, 'self', 15));
  if (CACHE) lines.push('', ...cacheTable(counted));
  const wanted = process.env.BREAKDOWN_FUNCTIONS;
  if (wanted) for (const x of counted) for (const c of RUN) lines.push('', `## Functions matching /${wanted}/: ${x.server}, ${CASES[c].title}`, '', ...matching(x.profiles[c], new RegExp(wanted)));
  const calledBy = process.env.BREAKDOWN_CALLERS;
  if (calledBy) for (const x of counted) for (const c of RUN) lines.push('', `## Callers of /${calledBy}/: ${x.server}, ${CASES[c].title}`, '', ...callers(x.profiles[c], new RegExp(calledBy)));
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  if (!process.env.BREAKDOWN_SERVERS && !process.env.BREAKDOWN_CASES) writeFileSync(path.join(ROOT, 'bench', 'results', 'breakdown-latest.md'), report);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
