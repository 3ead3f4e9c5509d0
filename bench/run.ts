/**
 * npm run bench [-- --quick]: the gateway against a bare undici pass-through hop (the floor for
 * any Node hop) and the stack's floor (bench/floor.mjs: fastify + undici doing the same JSON
 * work), all in front of the same fake upstream, all on 127.0.0.1. `-- --breakdown`: instructions
 * per request and per part under callgrind instead (bench/breakdown.ts); `-- --syscalls`: system
 * calls per request by name, under strace (bench/syscalls.ts); `-- --soak`: the 10-minute memory
 * soak alone (bench/soak.ts).
 *
 * The load generator (this process) and the upstream are pinned to core 0, each server under
 * test to core 1 (taskset). Each round, the servers' runs are cut into blocks that take turns
 * (hop, gateway, variants, then the other way round), so that all see the same machine; the main
 * measure is the CPU time each server used per request (/proc/<pid>/stat), which a noisy machine
 * moves far less than throughput. Servers under test: the hop, the gateway
 * started as its README says (the bin, with its own V8 flags) with auth, validation, the log line
 * (JSON to a file), metrics and the request ledger (SQLite) on, and variants: log line off,
 * metrics off, tracing on (to an OTLP sink in the upstream), ledger off, ledger on PostgreSQL (a
 * server started as the tests start it), guardrails on (the built-in detectors: stream TTFB and a
 * check that a stream is never held whole, bench/hold.ts), the response cache on (a hit, the same
 * request again, against a miss, a new prompt each request), and a pair of their own for stored
 * Responses (the same Responses request, translated to chat, kept in the state file or not). The
 * report goes to stdout and bench/results/latest.md (a full run also to bench/results/<date>.md).
 *
 *   BENCH_SECONDS       length of each load run (default 8, quick 2)
 *   BENCH_ROUNDS        rounds, each giving every server one run of every kind (default 3, quick 1)
 *   BENCH_SEQUENTIAL    requests per single-connection run (default 2000, quick 300)
 *   BENCH_SLOW_SECONDS  length of each 1,000-slow-streams run (default 8, quick 3)
 *   BENCH_SOAK_SECONDS  length of the memory soak (default 60, quick 6)
 *   BENCH_GATEWAY_ROOT  the checkout whose gateway is measured (default: this one)
 */
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { BODIES, closedLoop, type LoadResult, PATHS, saturate } from './load.ts';
import { cpuPressureMicros, figures, type Sample, sample, soak } from './measure.ts';
import { CLOCK_TICKS, machine, rssMb } from './procfs.ts';
import { type BenchData, type Figures, renderReport, type Scenario, SCENARIO_TITLES } from './report.ts';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres.ts';
import { holdCheck } from './hold.ts';
import { measureLedger } from './ledger.ts';
import { cpusAllowed, GATEWAY_ROOT, type GatewayVariant, KEY, pinSelf, ROOT, type Server, startGateway, startFloor, startHop, startUpstream, stop } from './servers.ts';

const QUICK = process.argv.includes('--quick');

/** A positive number from the environment, within bounds, so that every loop stays bounded. */
function setting(name: string, full: number, quick: number, max: number): number {
  const value = Number(process.env[name] ?? (QUICK ? quick : full));
  if (!Number.isFinite(value) || value <= 0 || value > max) throw new Error(`${name} must be a number in (0, ${max}], not ${process.env[name]}`);
  return value;
}
const SECONDS = setting('BENCH_SECONDS', 8, 2, 600);
const ROUNDS = Math.round(setting('BENCH_ROUNDS', 3, 1, 20));
const SEQUENTIAL = Math.round(setting('BENCH_SEQUENTIAL', 2000, 300, 100_000));
const SLOW_SECONDS = setting('BENCH_SLOW_SECONDS', 8, 3, 600);
const SOAK_SECONDS = Math.round(setting('BENCH_SOAK_SECONDS', 60, 6, 3600));
const SLOW_STREAMS = 1000;
/**
 * A run is cut into blocks of about 2 s (load runs) or a quarter of the requests (sequential
 * runs), and the servers' blocks take turns: the machine's other work then falls on all of
 * them alike instead of on whichever server happened to run during a burst.
 */
const LOAD_BLOCKS = Math.max(1, Math.round(SECONDS / 2));
const SEQUENTIAL_BLOCKS = QUICK ? 1 : 4;

const VARIANTS: GatewayVariant[] = [
  { name: 'gateway, log line off', log: 'warn' },
  { name: 'gateway, metrics off', metrics: false },
  { name: 'gateway, tracing on', tracing: true },
  // The gateway's default keeps the request ledger in its SQLite state file.
  { name: 'gateway, ledger off', ledger: 'off' },
];
const GUARDRAILS: GatewayVariant = { name: 'gateway, guardrails on', guardrails: true };
const CACHE: GatewayVariant = { name: 'gateway, cache on', cache: true };
/**
 * Stored Responses, kept (the default) and not (`state.responses.enabled: false`): a pair of their
 * own, so that the main gateway's memory figures are those of the chat load alone.
 */
const STORED: GatewayVariant = { name: 'gateway, Responses stored' };
const NOT_STORED: GatewayVariant = { name: 'gateway, stored Responses off', storedResponses: false };
/** Streams per server in the never-held-whole check (each lasts the upstream's pause, 300 ms). */
const HOLD_STREAMS = QUICK ? 5 : 20;

type Load = (url: string) => Promise<LoadResult>;
/** One block of each scenario. */
const BLOCKS: Record<Scenario, { count: number; load: Load }> = {
  plain: { count: LOAD_BLOCKS, load: (url) => saturate(url, { body: BODIES.plain, connections: 10, seconds: SECONDS / LOAD_BLOCKS }) },
  stream: { count: LOAD_BLOCKS, load: (url) => saturate(url, { body: BODIES.stream, connections: 10, seconds: SECONDS / LOAD_BLOCKS }) },
  miss: { count: LOAD_BLOCKS, load: (url) => saturate(url, { body: BODIES.miss, connections: 10, seconds: SECONDS / LOAD_BLOCKS }) },
  responses: {
    count: LOAD_BLOCKS,
    load: (url) => saturate(url, { body: BODIES.responses, path: PATHS.responses, connections: 10, seconds: SECONDS / LOAD_BLOCKS }),
  },
  latency: {
    count: SEQUENTIAL_BLOCKS,
    load: (url) => closedLoop(url, { body: BODIES.plain, connections: 1, seconds: 60, maxRequests: Math.ceil(SEQUENTIAL / SEQUENTIAL_BLOCKS) }),
  },
  ttfb: {
    count: SEQUENTIAL_BLOCKS,
    load: (url) => closedLoop(url, { body: BODIES.stream, connections: 1, seconds: 60, maxRequests: Math.ceil(SEQUENTIAL / SEQUENTIAL_BLOCKS) }),
  },
  slow: { count: 1, load: (url) => saturate(url, { body: BODIES.slow, connections: SLOW_STREAMS, seconds: SLOW_SECONDS }) },
};

/** JIT, connection pools and heaps warmed once per server, before any measured run. */
async function warmUp(server: Server): Promise<void> {
  await saturate(server.url, { body: BODIES.plain, connections: 10, seconds: 2 });
  await saturate(server.url, { body: BODIES.stream, connections: 10, seconds: 2 });
  await closedLoop(server.url, { body: BODIES.plain, connections: 1, seconds: 20, maxRequests: 200 });
  await closedLoop(server.url, { body: BODIES.stream, connections: 1, seconds: 20, maxRequests: 200 });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function progress(scenario: Scenario, server: Server, round: number, f: Figures): void {
  const errors = f.errors ? `  ${f.errors} errors ${JSON.stringify(f.errorKinds)}` : '';
  const latency = scenario === 'ttfb' ? `TTFB p50 ${f.ttfbP50.toFixed(3)} ms` : `p50 ${f.p50.toFixed(3)} ms`;
  console.error(
    `[round ${round}] ${SCENARIO_TITLES[scenario]} · ${server.name}: ${f.rps.toFixed(0)}/s, ${latency}, ${f.cpuUs.toFixed(0)} CPU µs/req, peak ${f.peakRssMb.toFixed(0)} MB, core1 ${(f.serverBusy * 100).toFixed(0)} %, core0 ${(f.loadBusy * 100).toFixed(0)} %${errors}`,
  );
}

function gitDescription(): string {
  try {
    // The last commit of the gateway's own code: a commit elsewhere (bench/, docs) changes nothing measured.
    const commit = execFileSync('git', ['log', '-1', '--format=%h', '--', 'src', 'plugins', 'bin', 'package.json'], { cwd: GATEWAY_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src', 'plugins', 'bin', 'package.json'], { cwd: GATEWAY_ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${commit} with uncommitted changes in src/plugins/bin` : commit;
  } catch {
    return 'unknown commit';
  }
}

async function main(): Promise<void> {
  if (availableParallelism() < 2) throw new Error('the benchmark pins the load and the server under test to two different cores: it needs at least 2');
  pinSelf();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-'));
  const servers: Server[] = [];
  const started = Date.now();
  const pressure0 = cpuPressureMicros();
  let postgres: PostgresServer | undefined;
  try {
    const upstream = await startUpstream(dir);
    servers.push(upstream);
    const hop = await startHop(dir, upstream);
    servers.push(hop);
    const floor = await startFloor(dir, upstream);
    servers.push(floor);
    const gateway = await startGateway(dir, upstream, { name: 'gateway' });
    servers.push(gateway);
    // The ledger on PostgreSQL: a server of its own, as the ledger's tests start it.
    postgres = await startPostgres();
    const ledgerDatabase = await postgres.createDatabase('bench_ledger');
    const variants: Server[] = [];
    for (const v of [...VARIANTS, { name: 'gateway, ledger on PostgreSQL', ledger: { postgres: ledgerDatabase } } satisfies GatewayVariant, GUARDRAILS, CACHE])
      variants.push(await startGateway(dir, upstream, v));
    servers.push(...variants);
    const guardrails = variants.find((v) => v.name === GUARDRAILS.name) as Server;
    const cache = variants.find((v) => v.name === CACHE.name) as Server;
    // Not a feature variant of the tables above (it differs only on /v1/responses): measured in its own scenario.
    const stored = await startGateway(dir, upstream, STORED);
    const notStored = await startGateway(dir, upstream, NOT_STORED);
    servers.push(stored, notStored);
    await sleep(2000);
    const idleRssMb = Object.fromEntries([hop, gateway].map((s) => [s.name, rssMb(s.pid)]));
    const gatewayCmdline = readFileSync(`/proc/${gateway.pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    const codeAtStart = gitDescription();
    const pins = `load generator on CPU ${cpusAllowed(process.pid)}, upstream on ${cpusAllowed(upstream.pid)}, hop on ${cpusAllowed(hop.pid)}, gateway on ${cpusAllowed(gateway.pid)}`;
    console.error(`Switchyard benchmark${QUICK ? ' (quick)' : ''}: ${pins}; ${ROUNDS} round(s) of ${SECONDS} s runs`);

    const runs = new Map<string, Figures[]>();
    const loadPids = [process.pid, upstream.pid];
    /** One round of a scenario: the servers' blocks take turns, in the opposite order each time (drift cancels out). */
    const interleaved = async (scenario: Scenario, list: Server[], round: number) => {
      const samples = new Map<Server, Sample[]>(list.map((s) => [s, []]));
      for (let block = 0; block < BLOCKS[scenario].count; block++) {
        for (const s of (block + round) % 2 ? list : [...list].reverse()) samples.get(s)?.push(await sample(s, loadPids, BLOCKS[scenario].load));
      }
      for (const s of list) {
        const f = figures(samples.get(s) ?? []);
        progress(scenario, s, round, f);
        const key = `${scenario}/${s.name}`;
        runs.set(key, [...(runs.get(key) ?? []), f]);
      }
    };
    console.error('warming up every server');
    for (const s of [hop, floor, gateway, ...variants]) await warmUp(s);
    for (const s of [stored, notStored]) await saturate(s.url, { body: BODIES.responses, path: PATHS.responses, connections: 10, seconds: 2 });
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of ['plain', 'stream'] as const) await interleaved(scenario, [hop, floor, gateway, ...variants], round);
      await interleaved('miss', [hop, gateway, cache], round);
      await interleaved('responses', [stored, notStored], round);
      for (const scenario of ['latency', 'ttfb'] as const) await interleaved(scenario, [hop, floor, gateway, guardrails], round);
    }
    const hold = [];
    for (const s of [hop, gateway, guardrails]) hold.push(await holdCheck(s, HOLD_STREAMS));
    console.error(`memory soak: ${SOAK_SECONDS} s of mixed load on the gateway`);
    const soakFigures = await soak(gateway, SOAK_SECONDS);
    // The 1,000-stream runs last: what they leave in the heap is theirs (≤ 250 MB), not "RSS under load" (≤ 150 MB).
    // Their regime warmed first, for each server, as the others were: 1,000 upstream connections,
    // a heap grown to 1,000 live streams, the ramp's code paths. Without it the gateway's rounds
    // climbed towards its steady state (574, 620, 699 streams/s in d0a2bd4's three).
    console.error('warming up every server for the 1,000-stream runs');
    for (const s of [hop, floor, gateway]) await saturate(s.url, { body: BODIES.slow, connections: SLOW_STREAMS, seconds: SLOW_SECONDS });
    for (let round = 1; round <= ROUNDS; round++) await interleaved('slow', [hop, floor, gateway], round);
    await sleep(5000);
    const idleAfterRssMb = rssMb(gateway.pid);

    const ledgerCost = await measureLedger(await postgres.createDatabase('bench_ledger_rows'));
    const ledgerRows = await countRows(ledgerDatabase);
    const traceExports = ((await (await fetch(`${upstream.url}/stats`)).json()) as { traceExports: number }).traceExports;
    const metricsOn = (await fetch(`${gateway.url}/metrics`)).status;
    const metricsOff = (await fetch(`${variants[1].url}/metrics`)).status;
    const featureChecks = await checkFeatures(gateway, guardrails, cache, stored, notStored);
    const wall = (Date.now() - started) / 1000;
    const date = new Date().toISOString().slice(0, 10);
    const data: BenchData = {
      date,
      header: [
        `Machine: ${machine()}; Node ${process.version}; clock ticks ${CLOCK_TICKS}/s. Code: ${codeAtStart} when the gateways started.`,
        `Pinning (taskset): ${pins}. Load generator: autocannon (load runs), undici (single-connection runs), all on 127.0.0.1.`,
        `Gateway: \`${gatewayCmdline.replace(process.execPath, 'node').replace(`${GATEWAY_ROOT}/`, '')}\` (started by npm start: the compiled dist/, the V8 flags the bin's own). Hop: the same V8 flags.`,
        `${ROUNDS} round(s), after a warm-up of every server (and one 1,000-stream run each before those runs). Per server and round: load runs of ${SECONDS} s in ${LOAD_BLOCKS} block(s), ${SEQUENTIAL} sequential requests in ${SEQUENTIAL_BLOCKS} block(s), the servers' blocks taking turns; 1,000-stream runs of ${SLOW_SECONDS} s; soak ${SOAK_SECONDS} s${QUICK ? ' (--quick: a smoke run, not figures to cite)' : ''}.`,
        `Whole run ${Math.round(wall)} s; some task waited for a CPU during ${((100 * (cpuPressureMicros() - pressure0)) / (wall * 1e6)).toFixed(0)} % of it (other work on the machine).`,
      ],
      runs,
      hop: hop.name,
      floor: floor.name,
      gateway: gateway.name,
      variants: variants.map((v) => v.name),
      guardrails: guardrails.name,
      cache: cache.name,
      stored: stored.name,
      notStored: notStored.name,
      hold,
      idleRssMb,
      idleAfterRssMb,
      soak: soakFigures,
      notes: [
        `Checks: the PostgreSQL ledger variant booked ${ledgerRows} rows; the tracing variant's spans reached the OTLP sink in ${traceExports} exports; GET /metrics answered ${metricsOn} with metrics on, ${metricsOff} with them off; the log line's bytes per request are in the features table. ${featureChecks}`,
        'CPU µs per request: utime + stime of the server process over the run (/proc/<pid>/stat), divided by the requests completed in it.',
        `Request ledger (bench/ledger.ts, main-thread CPU, no HTTP), µs of the serving thread per request: the row built and queued ${ledgerCost.recordUs.toFixed(2)}; row and write with the engine on its writer thread (the gateway's way) SQLite ${ledgerCost.sqliteThreadedUs.toFixed(2)}, PostgreSQL ${ledgerCost.postgresThreadedUs?.toFixed(2)}; with the engine on the serving thread (before the writer thread) SQLite ${ledgerCost.sqliteInThreadUs.toFixed(2)}, PostgreSQL ${ledgerCost.postgresInThreadUs?.toFixed(2)}. The gateway's default keeps the SQLite ledger; the variants "ledger off" and "ledger on PostgreSQL" show the whole process's difference under load (the writer thread's CPU included).`,
        "Peak RSS: VmHWM of /proc/<pid>/status, reset at the start of each run (clear_refs), so it is the run's own peak.",
        `1,000 slow streams: the connections open in batches of 100, 100 ms apart (Node's listen backlog is 511), and each connection's stream still running when its ${SLOW_SECONDS} s end is cut, so even a server that keeps every stream at 1 s completes only about ${Math.round((SLOW_STREAMS * Math.floor(SLOW_SECONDS - 0.5)) / (SLOW_SECONDS + 0.9))} streams/s.`,
        ...(gitDescription() === codeAtStart ? [] : [`The code changed during the run (now ${gitDescription()}); the gateways ran what they loaded at their start.`]),
      ],
    };
    const report = renderReport(data);
    process.stdout.write(report);
    const results = path.join(ROOT, 'bench', 'results');
    mkdirSync(results, { recursive: true });
    writeFileSync(path.join(results, 'latest.md'), report);
    if (!QUICK) writeFileSync(path.join(results, `${date}.md`), report);
    console.error(`written to bench/results/latest.md${QUICK ? '' : ` and bench/results/${date}.md`}`);
  } finally {
    for (const s of servers.reverse()) await stop(s);
    await postgres?.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** That the variants did their work: a key in a prompt refused, the same request answered from the cache, a Responses answer kept or not. */
async function checkFeatures(gateway: Server, guardrails: Server, cache: Server, storedOn: Server, notStored: Server): Promise<string> {
  // An OpenAI-style key in the prompt: the `secrets` rule blocks it before any provider is called.
  const secret = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: `my key is sk-proj-${'A1b2C3d4E5f6G7h8'.repeat(3)}` }] });
  const post = (s: Server, body: string) => fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
  const blocked = await post(guardrails, secret);
  const code = ((await blocked.json()) as { error?: { code?: string } }).error?.code;
  const passed = (await post(gateway, secret)).status;
  const hits: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await post(cache, BODIES.plain);
    await res.arrayBuffer();
    hits.push(res.headers.get('x-switchyard-cache') ?? 'none');
  }
  const stored: number[] = [];
  for (const s of [storedOn, notStored]) {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
    const { id } = (await (await fetch(`${s.url}${PATHS.responses}`, { method: 'POST', headers, body: BODIES.responses })).json()) as { id: string };
    stored.push((await fetch(`${s.url}/v1/responses/${id}`, { headers })).status);
  }
  return `A prompt holding an API key: the guardrails variant answered ${blocked.status} ${code}, the gateway without guardrails ${passed}. The cache variant answered the benchmark's request twice more with x-switchyard-cache ${hits.join(', ')}. A Responses answer read back by its id: ${stored[0]} from the gateway keeping them, ${stored[1]} with stored Responses off.`;
}

/** Rows the ledger variant wrote to PostgreSQL. */
async function countRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM switchyard_requests')).rows[0]!.n;
  } finally {
    await client.end();
  }
}

// --breakdown: instructions per request and per part, under callgrind (bench/breakdown.ts).
if (process.argv.includes('--breakdown')) await import('./breakdown.ts');
else if (process.argv.includes('--syscalls')) await import('./syscalls.ts');
else if (process.argv.includes('--soak')) await import('./soak.ts');
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
