/**
 * node bench/gc.ts [slow|stream|plain] [connections] [rounds] [variant]: garbage collection per
 * request, the gateway against the bare hop under the same load (default: 1,000 slow streams, 2
 * rounds); `variant` is a GatewayVariant of bench/servers.ts as JSON, e.g. '{"ledger":"off"}'.
 * Both run with --trace-gc-nvp; for each run of 6 s the GCs that fell in it give the bytes
 * allocated and promoted per request and the GC pause per request, by kind (s = scavenge,
 * mc = mark-compact). Bytes are counts (they hold on a busy machine); pauses are times. V8 writes
 * the trace through stdout's buffer: a window's last few lines are read with the next window's,
 * so a round's figures are right to a few GCs in ~100.
 *
 * Why: at 1,000 concurrent slow streams a stream's objects live a second, through scavenges, so
 * what the gateway allocates and keeps per stream costs more there than in a short count
 * (bench/breakdown.ts's slow case: instructions 1.18× the hop's at 20 connections).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type GcEvent, gcEvents } from './gc-trace.ts';
import type { GatewayVariant, Server } from './servers.ts';

const SECONDS = 6;

// bench/servers.ts (imported by load.ts too) reads the servers' flags when it is loaded: the trace is asked for first.
process.env.BENCH_HOP_FLAGS = `${process.env.BENCH_HOP_FLAGS ?? ''} --trace-gc-nvp`;
process.env.BENCH_GATEWAY_FLAGS = `${process.env.BENCH_GATEWAY_FLAGS ?? ''} --trace-gc-nvp`;
const { pinSelf, startGateway, startHop, startUpstream, stop } = await import('./servers.ts');
const { BODIES, PATHS, saturate } = await import('./load.ts');
const { machine } = await import('./procfs.ts');
const scenario = (process.argv[2] ?? 'slow') as keyof typeof BODIES;
if (!(scenario in BODIES)) throw new Error(`scenario: ${Object.keys(BODIES).join(', ')}`);
const connections = Number(process.argv[3] ?? (scenario === 'slow' ? 1000 : 10));
const rounds = Number(process.argv[4] ?? 2);
const variant = JSON.parse(process.argv[5] ?? '{}') as Partial<GatewayVariant>;

/** The GCs a server's log holds so far. */
function gcLines(server: Server): GcEvent[] {
  return gcEvents(readFileSync(server.logFile, 'utf8'));
}

pinSelf();
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-gc-'));
const upstream = await startUpstream(dir);
const hop = await startHop(dir, upstream);
const gateway = await startGateway(dir, upstream, { name: 'gateway', ...variant });
console.log(`Machine: ${machine()}; Node ${process.version}. ${scenario}, ${connections} connections, runs of ${SECONDS} s, the servers taking turns.\n`);
console.log('| round | server | requests | allocated per request | promoted per request | GC pause per request |');
console.log('|---|---|---:|---:|---:|---|');
try {
  for (const s of [hop, gateway]) await saturate(s.url, { body: BODIES[scenario === 'slow' ? 'stream' : scenario], path: PATHS[scenario], connections: 10, seconds: 2 });
  for (let r = 1; r <= rounds; r++) {
    for (const s of r % 2 ? [hop, gateway] : [gateway, hop]) {
      const before = gcLines(s).length;
      const run = await saturate(s.url, { body: BODIES[scenario], path: PATHS[scenario], connections, seconds: SECONDS });
      const gcs = gcLines(s).slice(before);
      const n = Math.max(1, run.completed);
      const kinds = new Map<string, { count: number; pauseMs: number }>();
      let allocated = 0;
      let promoted = 0;
      for (const gc of gcs) {
        const kind = kinds.get(gc.kind) ?? { count: 0, pauseMs: 0 };
        kind.count++;
        kind.pauseMs += gc.pauseMs;
        kinds.set(gc.kind, kind);
        allocated += gc.allocated;
        promoted += gc.promoted;
      }
      const pauses = [...kinds].map(([k, v]) => `${k} ${v.count}× ${((v.pauseMs * 1000) / n).toFixed(0)} µs`).join(', ');
      console.log(`| ${r} | ${s.name} | ${run.completed} | ${(allocated / n / 1024).toFixed(1)} KB | ${(promoted / n / 1024).toFixed(1)} KB | ${pauses} |`);
    }
  }
} finally {
  for (const s of [hop, gateway, upstream]) await stop(s);
  rmSync(dir, { recursive: true, force: true });
}
