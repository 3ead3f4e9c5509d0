/**
 * A CPU profile of the gateway under one scenario, for finding what to optimise (not a measure):
 *   node bench/profile.ts <plain|stream|slow> [seconds]
 * Starts the upstream (core 0) and the gateway with --cpu-prof (core 1), warms up, loads, stops
 * the gateway and prints the profile's heaviest functions by self time; the .cpuprofile file
 * (for Chrome DevTools) is in the directory printed at the end. PROFILE_NODE_FLAGS adds Node flags
 * (e.g. --trace-gc; the gateway's output is gateway.log in that directory); PROFILE_SERVER=hop profiles
 * the bare hop instead.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BODIES, PATHS, saturate } from './load.ts';
import { machine } from './procfs.ts';
import { SERVE_FLAGS } from '../bin/serving-env.mjs';
import { gatewayConfig, GATEWAY_ROOT, pinSelf, ROOT, startPinnedNode, startUpstream, stop } from './servers.ts';

const scenario = (process.argv[2] ?? 'plain') as keyof typeof BODIES;
const seconds = Number(process.argv[3] ?? 8);
if (!(scenario in BODIES)) throw new Error(`scenario: one of ${Object.keys(BODIES).join(', ')}`);
const connections = scenario === 'slow' ? 1000 : 10;

pinSelf();
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-profile-'));
const upstream = await startUpstream(dir);
const config = path.join(dir, 'gateway.yaml');
writeFileSync(config, gatewayConfig(upstream, { name: 'gateway' }));
const server = process.env.PROFILE_SERVER === 'hop' ? 'hop' : 'gateway';
const gateway =
  server === 'hop'
    ? await startPinnedNode(
        dir,
        'hop',
        ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...SERVE_FLAGS, ...(process.env.PROFILE_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), 'bench/bare-proxy.mjs', upstream.url],
        undefined,
        ROOT,
      )
    : await startPinnedNode(
        dir,
        'gateway',
        ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(process.env.PROFILE_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), 'scripts/start.mjs', '--config', config, '--no-watch'],
        '/readyz',
        GATEWAY_ROOT,
      );
try {
  await saturate(gateway.url, { body: BODIES[scenario], path: PATHS[scenario], connections, seconds: 2 });
  const result = await saturate(gateway.url, { body: BODIES[scenario], path: PATHS[scenario], connections, seconds });
  console.log(`Machine: ${machine()}; Node ${process.version}`);
  console.log(`${scenario}: ${(result.completed / result.seconds).toFixed(0)}/s, ${result.errors} errors`);
} finally {
  await stop(gateway);
  await stop(upstream);
}
console.log(`server output: ${path.join(dir, `${server}.log`)}`);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}
// The largest profile is the gateway's (npm start's build, when it ran one, writes its own).
const file = readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort((a, b) => statSync(path.join(dir, b)).size - statSync(path.join(dir, a)).size)[0];
if (!file) throw new Error(`no profile in ${dir}`);
const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { nodes: Node[] };
const total = profile.nodes.reduce((s, n) => s + n.hitCount, 0);
const self = new Map<string, number>();
for (const n of profile.nodes) {
  const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`;
  self.set(key, (self.get(key) ?? 0) + n.hitCount);
}
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log(`${((hits / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
console.log(`profile: ${path.join(dir, file)}`);
