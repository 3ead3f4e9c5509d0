/**
 * What a load run cost the server under test and the machine: CPU time of the server and of the
 * load core's processes, peak RSS, CPU pressure, log bytes, listen-queue overflows. A run may be
 * made of several blocks (interleaved with other servers' blocks); their samples add up.
 */
import { readFileSync, statSync } from 'node:fs';
import { BODIES, type LoadResult, saturate } from './load.ts';
import { cpuMicros, listenOverflows, PeakRss, rssMb } from './procfs.ts';
import type { Figures, SoakFigures } from './report.ts';
import type { Server } from './servers.ts';
import { percentile } from './stats.ts';

/** One block's raw counts, in µs and bytes, to be added up over a run. */
export interface Sample {
  load: LoadResult;
  cpuUs: number;
  loadCpuUs: number;
  pressureUs: number;
  logBytes: number;
  overflows: number;
  peakRssMb: number;
}

/** Microseconds during which some task waited for a CPU, machine-wide (PSI, /proc/pressure/cpu); NaN without PSI. */
export function cpuPressureMicros(): number {
  try {
    return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]);
  } catch {
    return Number.NaN;
  }
}

/** Runs `load` against `server` and takes what it cost; `loadPids` are the load core's processes. */
export async function sample(server: Server, loadPids: number[], load: (url: string) => Promise<LoadResult>): Promise<Sample> {
  const loadCpu = () => loadPids.reduce((n, pid) => n + cpuMicros(pid), 0);
  const peak = new PeakRss(server.pid);
  const before = { cpu: cpuMicros(server.pid), load: loadCpu(), pressure: cpuPressureMicros(), log: statSync(server.logFile).size, overflows: listenOverflows() };
  const result = await load(server.url);
  return {
    load: result,
    cpuUs: cpuMicros(server.pid) - before.cpu,
    loadCpuUs: loadCpu() - before.load,
    pressureUs: cpuPressureMicros() - before.pressure,
    logBytes: statSync(server.logFile).size - before.log,
    overflows: listenOverflows() - before.overflows,
    peakRssMb: peak.stop(),
  };
}

/** A run's figures from its blocks: counts and times added up, percentiles over all requests, the highest peak. */
export function figures(samples: Sample[]): Figures {
  const sum = (f: (s: Sample) => number) => samples.reduce((n, s) => n + f(s), 0);
  const completed = sum((s) => s.load.completed);
  const wallUs = sum((s) => s.load.seconds) * 1e6;
  const errorKinds: Record<string, number> = {};
  for (const s of samples) for (const [kind, n] of Object.entries(s.load.errorKinds)) errorKinds[kind] = (errorKinds[kind] ?? 0) + n;
  const latencies = samples.flatMap((s) => s.load.latencies);
  return {
    completed,
    errors: sum((s) => s.load.errors),
    errorKinds,
    rps: completed / (wallUs / 1e6),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ttfbP50: percentile(
      samples.flatMap((s) => s.load.firstBytes),
      50,
    ),
    ttfbP99: percentile(
      samples.flatMap((s) => s.load.firstBytes),
      99,
    ),
    cpuUs: sum((s) => s.cpuUs) / completed,
    peakRssMb: Math.max(...samples.map((s) => s.peakRssMb)),
    serverBusy: sum((s) => s.cpuUs) / wallUs,
    loadBusy: sum((s) => s.loadCpuUs) / wallUs,
    cpuPressure: sum((s) => s.pressureUs) / wallUs,
    logBytesPerRequest: sum((s) => s.logBytes) / completed,
    listenOverflows: sum((s) => s.overflows),
  };
}

/** Mixed load on the gateway (non-streamed, streamed and 200 slow streams at once) for `seconds`, RSS sampled every second. */
export async function soak(gateway: Server, seconds: number): Promise<SoakFigures> {
  const samples: [number, number][] = [];
  const started = Date.now();
  const sampler = setInterval(() => samples.push([Math.round((Date.now() - started) / 1000), rssMb(gateway.pid)]), 1000);
  const cpu0 = cpuMicros(gateway.pid);
  const runs = await Promise.all([
    saturate(gateway.url, { body: BODIES.plain, connections: 4, seconds }),
    saturate(gateway.url, { body: BODIES.stream, connections: 4, seconds }),
    saturate(gateway.url, { body: BODIES.slow, connections: 200, seconds }),
  ]);
  clearInterval(sampler);
  const completed = runs.reduce((n, r) => n + r.completed, 0);
  const errorKinds: Record<string, number> = {};
  for (const r of runs) for (const [kind, n] of Object.entries(r.errorKinds)) errorKinds[kind] = (errorKinds[kind] ?? 0) + n;
  return { seconds, samples, completed, errors: runs.reduce((n, r) => n + r.errors, 0), errorKinds, cpuUs: (cpuMicros(gateway.pid) - cpu0) / completed };
}
