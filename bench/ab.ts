/**
 * A quick A/B of one scenario, hop against gateway, for working on one figure (not the report):
 *   node bench/ab.ts <plain|stream|slow|miss> [rounds] [seconds] [cache | variant]
 * With `cache`, the gateway with the exact cache on is measured against the gateway without it;
 * with a variant (bench/servers.ts GatewayVariant as JSON, e.g. '{"ledger":"off"}'), the gateway
 * with it against the gateway as the benchmark runs it: one feature's price in CPU and throughput.
 * With BENCH_BASELINE_ROOT (a worktree of an earlier commit), that checkout's gateway is measured
 * against this one's: a code change's price or gain.
 * Same pinning and measures as `npm run bench`; blocks take turns; prints per-round figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BODIES, PATHS, saturate } from './load.ts';
import { figures, sample } from './measure.ts';
import { machine } from './procfs.ts';
import { type GatewayVariant, pinSelf, startGateway, startHop, startUpstream, stop } from './servers.ts';

const scenario = (process.argv[2] ?? 'plain') as keyof typeof BODIES;
const rounds = Number(process.argv[3] ?? 3);
const seconds = Number(process.argv[4] ?? 4);
const connections = scenario === 'slow' ? 1000 : 10;
pinSelf();
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-ab-'));
const upstream = await startUpstream(dir);
const variant: GatewayVariant | undefined =
  process.argv[5] === 'cache' ? { name: 'gateway, cache on', cache: true } : process.argv[5] ? { name: `gateway ${process.argv[5]}`, ...JSON.parse(process.argv[5]) } : undefined;
// With a variant or a baseline, "hop" below is a gateway too: the benchmark's, or the baseline's.
const baseline = process.env.BENCH_BASELINE_ROOT;
const hop = baseline
  ? await startGateway(dir, upstream, { name: 'baseline' }, path.resolve(baseline))
  : variant
    ? await startGateway(dir, upstream, { name: 'gateway' })
    : await startHop(dir, upstream);
const gateway = await startGateway(dir, upstream, variant ?? { name: 'gateway' });
console.log(`Machine: ${machine()}; Node ${process.version}`);
try {
  // Warmed in the regime measured: for the slow streams, 1,000 of them (connections, heap, the ramp's code paths).
  for (const s of [hop, gateway]) await saturate(s.url, { body: BODIES[scenario], path: PATHS[scenario], connections, seconds: scenario === 'slow' ? seconds : 2 });
  for (let r = 1; r <= rounds; r++) {
    const line: string[] = [];
    const cpu = { hop: 0, gateway: 0 };
    const rps = { hop: 0, gateway: 0 };
    for (const s of r % 2 ? [hop, gateway] : [gateway, hop]) {
      const f = figures([await sample(s, [process.pid, upstream.pid], (url) => saturate(url, { body: BODIES[scenario], path: PATHS[scenario], connections, seconds }))]);
      line.push(`${s.name} ${f.rps.toFixed(0)}/s ${f.cpuUs.toFixed(0)} µs busy ${(f.serverBusy * 100).toFixed(0)}% rss ${f.peakRssMb.toFixed(0)} MB err ${f.errors}`);
      const which = s === hop ? 'hop' : 'gateway';
      cpu[which] = f.cpuUs;
      rps[which] = f.rps;
    }
    console.log(`round ${r}: ${line.join(' | ')} → cpu ${(cpu.gateway / cpu.hop).toFixed(2)}× rps ${(rps.gateway / rps.hop).toFixed(2)}×`);
  }
} finally {
  for (const s of [gateway, hop, upstream]) await stop(s);
  rmSync(dir, { recursive: true, force: true });
}
