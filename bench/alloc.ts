/**
 * node bench/alloc.ts [plain|stream]: what the gateway allocates per request and what of it
 * outlives the request, by allocation site. Counts of bytes, not times: it runs on a busy machine.
 *
 * The gateway (npm start, the benchmark's gateway.yaml) runs with --trace-gc-nvp, --expose-gc and
 * the inspector. After a warm-up, three windows of requests (10 connections):
 *  1. the GC trace alone: the `allocated` and `promoted` bytes of the window's GCs, per request
 *     (the window lies between two forced full GCs with idle gaps, so its GCs are known by time);
 *  2. V8's sampling heap profiler keeping the samples of objects that GCs collected: bytes
 *     allocated per request by function. (Keeping what minor GCs collect holds the sampled
 *     objects through scavenges, so promotion is measured in window 1, without the profiler.)
 *  3. the profiler keeping what major GCs collect but not what minor GCs do, stopped after a
 *     forced minor GC removed the young garbage: what is left was promoted to the old generation
 *     (it lived through two scavenges) or is still alive, by function. A mark-compact in the
 *     window also collects the young garbage of the moment, which then counts: the same small
 *     share of every function's allocation (printed). The table's third column, the share of
 *     what the function allocated (window 2), tells objects that outlive the request from that.
 * Then what full GCs cannot free (retained per request: a leak if it keeps growing).
 *
 *   ALLOC_REQUESTS  requests per window (default 4000)
 *   ALLOC_WARMUP    requests before the first window (default 4000)
 *   ALLOC_INTERVAL  the profiler's mean sampling interval in bytes (default 256)
 *   ALLOC_WITHOUT   features turned off, comma-separated: log (warn level), metrics, ledger
 *   BENCH_GATEWAY_FLAGS  more Node flags for the gateway (heap flags given replace the bin's)
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BODIES, closedLoop } from './load.ts';
import { gcEvents } from './gc-trace.ts';
import { machine } from './procfs.ts';
import { freePort, gatewayConfig, pinSelf, startPinnedNode, startUpstream, stop, GATEWAY_ROOT, type GatewayVariant } from './servers.ts';

const scenario = (process.argv[2] ?? 'plain') as 'plain' | 'stream';
if (scenario !== 'plain' && scenario !== 'stream') throw new Error('scenario: plain or stream');
const REQUESTS = Number(process.env.ALLOC_REQUESTS ?? 4000);
const WARMUP = Number(process.env.ALLOC_WARMUP ?? 4000);
const INTERVAL = Number(process.env.ALLOC_INTERVAL ?? 256);
const CONNECTIONS = 10;
/** Idle time around the forced GCs that bound the first window, wider than the GC trace's clock offset. */
const GAP_MS = 1000;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
class Inspector {
  #ws: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id as number);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  static async open(port: number): Promise<Inspector> {
    const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve, { once: true });
      ws.addEventListener('error', () => reject(new Error('cannot reach the gateway inspector')), { once: true });
    });
    return new Inspector(ws);
  }

  call<T = unknown>(method: string, params: object = {}): Promise<T> {
    const id = this.#next++;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  }

  /** Evaluates an expression in the gateway and returns its value. */
  async evaluate(expression: string): Promise<number> {
    const { result } = await this.call<{ result: { value: number } }>('Runtime.evaluate', { expression, returnByValue: true });
    return result.value;
  }

  close(): void {
    this.#ws.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en');

/** Bytes per request by function (name and file:line), heaviest first. */
function bySite(head: ProfileNode): Map<string, number> {
  const sites = new Map<string, number>();
  const walk = (node: ProfileNode) => {
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = url ? ` ${url.replace(/^.*\/(node_modules|src|plugins|bench)\//, '$1/')}:${lineNumber + 1}` : '';
      const key = `${functionName || '(anonymous)'}${where}`;
      sites.set(key, (sites.get(key) ?? 0) + node.selfSize / REQUESTS);
    }
    for (const child of node.children) walk(child);
  };
  walk(head);
  return new Map([...sites].sort((a, b) => b[1] - a[1]));
}

/** Bytes per request by where the allocating code lives: our sources, undici, fastify, Node... */
function byModule(sites: Map<string, number>): Map<string, number> {
  const modules = new Map<string, number>();
  for (const [site, bytes] of sites) {
    const where = / (node_modules\/(?:@[^/]+\/)?[^/]+|src\/[^/]+|plugins\/[^/]+|node:[^/:]+)/.exec(site)?.[1] ?? '(V8 / native)';
    modules.set(where, (modules.get(where) ?? 0) + bytes);
  }
  return new Map([...modules].sort((a, b) => b[1] - a[1]));
}

function table(title: string, rows: Map<string, number>, limit: number, shareOf?: Map<string, number>): string[] {
  const lines = ['', `| ${title} | bytes per request |${shareOf ? ' % of what it allocates |' : ''}`, shareOf ? '|---|---:|---:|' : '|---|---:|'];
  for (const [name, bytes] of [...rows].slice(0, limit)) {
    const share = shareOf ? ` ${shareOf.has(name) ? `${Math.round((100 * bytes) / (shareOf.get(name) as number))}` : '?'} |` : '';
    lines.push(`| \`${name.slice(0, 140)}\` | ${fmt(bytes)} |${share}`);
  }
  return lines;
}

async function main(): Promise<void> {
  pinSelf();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-alloc-'));
  const upstream = await startUpstream(dir);
  const config = path.join(dir, 'gateway.yaml');
  const without = new Set(process.env.ALLOC_WITHOUT?.split(',').filter(Boolean));
  for (const f of without) if (!['log', 'metrics', 'ledger'].includes(f)) throw new Error(`ALLOC_WITHOUT: log, metrics or ledger, not ${f}`);
  const variant: GatewayVariant = { name: 'gateway', log: without.has('log') ? 'warn' : 'info', metrics: !without.has('metrics'), ledger: without.has('ledger') ? 'off' : undefined };
  writeFileSync(config, gatewayConfig(upstream, variant));
  const inspectPort = await freePort();
  const flags = ['--trace-gc-nvp', '--expose-gc', `--inspect=127.0.0.1:${inspectPort}`, ...(process.env.BENCH_GATEWAY_FLAGS?.split(' ').filter(Boolean) ?? [])];
  const gateway = await startPinnedNode(dir, 'gateway', [...flags, 'scripts/start.mjs', '--config', config, '--no-watch'], '/readyz', GATEWAY_ROOT).catch(async (err) => {
    await stop(upstream);
    throw err;
  });
  const load = async (n: number) => {
    const result = await closedLoop(gateway.url, { body: BODIES[scenario], connections: CONNECTIONS, seconds: 3600, maxRequests: n });
    if (result.errors > 0) throw new Error(`${result.errors} of ${n} requests failed: ${JSON.stringify(result.errorKinds)}`);
  };
  const lines: string[] = [];
  const inspector = await Inspector.open(inspectPort).catch(async (err) => {
    await stop(gateway);
    await stop(upstream);
    throw err;
  });
  const gc = (type = 'major') => inspector.evaluate(`gc({ type: '${type}' }), 0`);
  /** The time of the gateway's clock, a gap after the last request or forced GC (nothing else runs then). */
  const quietNow = async () => {
    await sleep(GAP_MS);
    return inspector.evaluate('performance.now()');
  };
  const sampled = async (n: number, options: object, before?: () => Promise<unknown>): Promise<ProfileNode> => {
    await inspector.call('HeapProfiler.startSampling', { samplingInterval: INTERVAL, ...options });
    await load(n);
    await before?.();
    return (await inspector.call<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling')).profile.head;
  };
  let windows: { traced: [number, number]; third: [number, number] };
  let all: ProfileNode;
  let survivors: ProfileNode;
  let retained: number;
  try {
    await load(WARMUP);
    await inspector.call('HeapProfiler.enable');
    await gc();
    const heapBefore = await inspector.evaluate('process.memoryUsage().heapUsed');
    const from = await quietNow();
    await load(REQUESTS);
    await sleep(GAP_MS);
    await gc();
    const to = await quietNow();
    all = await sampled(REQUESTS, { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const thirdFrom = await quietNow();
    survivors = await sampled(REQUESTS, { includeObjectsCollectedByMajorGC: true }, () => gc('minor'));
    const thirdTo = await quietNow();
    await gc();
    retained = ((await inspector.evaluate('process.memoryUsage().heapUsed')) - heapBefore) / (3 * REQUESTS);
    // The trace's clock starts a little after performance.now()'s: half a gap of margin either side.
    windows = { traced: [from - GAP_MS / 2, to - GAP_MS / 2], third: [thirdFrom - GAP_MS / 2, thirdTo - GAP_MS / 2] };
  } finally {
    inspector.close();
    await stop(gateway);
    await stop(upstream);
  }
  const trace = gcEvents(readFileSync(gateway.logFile, 'utf8'));
  const within = ([from, to]: [number, number]) => trace.filter((e) => e.ms > from && e.ms <= to);
  const events = within(windows.traced);
  const allocated = events.reduce((s, e) => s + e.allocated, 0) / REQUESTS;
  const promoted = events.reduce((s, e) => s + e.promoted, 0) / REQUESTS;
  const kinds: Record<string, number> = {};
  for (const e of events) kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
  // Young garbage a mark-compact collected: what was allocated since the GC before it.
  const third = within(windows.third);
  const noise =
    third.filter((e) => e.kind !== 's').reduce((s, e) => s + e.allocated, 0) /
    Math.max(
      1,
      third.reduce((s, e) => s + e.allocated, 0),
    );
  const allSites = bySite(all);
  const survivorSites = bySite(survivors);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, b) => s + b, 0);
  lines.push(
    `# Allocation per request: ${scenario}, ${CONNECTIONS} connections${without.size ? `, without ${[...without].join(', ')}` : ''}`,
    '',
    `Machine: ${machine()}; Node ${process.version}. ${WARMUP} requests of warm-up, three windows of ${REQUESTS} requests; sampling interval ${INTERVAL} bytes.`,
    '',
    `- allocated (GC trace, the window's ${events.length} GCs: ${Object.entries(kinds)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}, the last one forced): **${fmt(allocated)} bytes per request**`,
    `- allocated (sampling profiler's estimate): ${fmt(sum(allSites))} bytes per request`,
    `- promoted to the old generation by scavenges (GC trace): **${fmt(promoted)} bytes per request**`,
    `- outliving two scavenges (sampled in window 3: promoted, or alive at its end): ${fmt(sum(survivorSites))} bytes per request, of which about ${(100 * noise).toFixed(1)} % of each function's allocation is young garbage its mark-compacts collected`,
    `- retained after a full GC, over the three windows: ${fmt(retained)} bytes per request`,
    ...table('allocated by module', byModule(allSites), 15),
    ...table('allocated by function', allSites, Number(process.env.ALLOC_TOP ?? 40)),
    ...table('outliving two scavenges, by function (window 3)', survivorSites, 30, allSites),
    '',
    `Gateway output (with the GC trace): ${gateway.logFile}`,
  );
  console.log(lines.join('\n'));
}

await main();
