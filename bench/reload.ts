/**
 * The cost of reloading a 10,000-key gateway.yaml to the serving thread, while a closed-loop
 * client (4 connections, on its own thread) sends requests: per reload step, the serving
 * thread's CPU (process.threadCpuUsage, so the parser thread's work does not count), the longest
 * event-loop stall, and the latency (p50/p99/max) of the requests that overlapped the reload.
 * Then the same parse + build done on this thread, for comparison (what a reload cost before).
 *
 *   node --conditions=switchyard-source bench/reload.ts [keys] [reloads]
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { parseConfigFile } from '../src/config/load.ts';
import { DEV_KEY, startTestGateway } from '../src/kit/testing/index.ts';
import { buildRuntime } from '../src/runtime/build.ts';
import { reloadSteps } from '../src/runtime/reload-steps.ts';
import { bigConfig } from '../test/helpers/big-config.ts';

const keys = Number(process.argv[2] ?? 10_000);
const reloads = Number(process.argv[3] ?? 5);
const now = () => performance.timeOrigin + performance.now();
const t = await startTestGateway(bigConfig(keys));
try {
  const client = new Worker(new URL('./reload-client.ts', import.meta.url), { workerData: { url: t.url, token: DEV_KEY, connections: 4 } });
  const requestsDone = new Promise<[number, number, number][]>((resolve) => client.once('message', resolve));
  await new Promise((r) => setTimeout(r, 1000));
  const windows: [number, number][] = [];
  const steps = new Map<string, number[]>();
  const stalls: number[] = [];
  reloadSteps.record = (step, cpuMs) => steps.set(step, [...(steps.get(step) ?? []), cpuMs]);
  for (let i = 0; i < reloads; i++) {
    writeFileSync(t.configFile, bigConfig(keys, { extraKey: `sk-bench-extra-key-${i}-0000000` }));
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const start = now();
    const outcome = await t.gateway.reload('bench');
    // The old generation's garbage is collected after the swap: the next second counts too.
    await new Promise((r) => setTimeout(r, 1000));
    windows.push([start, now()]);
    delay.disable();
    if (!outcome.ok) throw new Error(`reload failed: ${outcome.errors?.join('; ')}`);
    stalls.push(delay.max / 1e6);
  }
  reloadSteps.record = undefined;
  client.postMessage('stop');
  const requests = await requestsDone;
  const during = requests.filter(([s, e]) => windows.some(([ws, we]) => e >= ws && s <= we));
  const latencies = during.map(([s, e]) => e - s).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN;
  const failed = requests.filter(([, , status]) => status !== 200).length;

  const started = performance.now();
  const parsed = await parseConfigFile(t.configFile, {});
  await (await buildRuntime(parsed, { generation: 99, log: pino({ level: 'silent' }), env: {} })).close();
  const inThread = performance.now() - started;

  const fmt = (list: number[]) => list.map((v) => v.toFixed(1)).join(' / ');
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, load ${loadavg()[0].toFixed(1)}`);
  console.log(`${keys} keys, ${reloads} reloads; serving-thread CPU per step, ms (each reload):`);
  for (const [step, list] of steps) console.log(`  ${step.padEnd(26)} ${fmt(list)}`);
  console.log(`longest event-loop stall (reload + 1 s after): ${fmt(stalls)} ms`);
  console.log(
    `requests overlapping a reload: ${latencies.length}, p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${pct(100).toFixed(1)} ms; ${requests.length} requests in all, ${failed} not 200`,
  );
  console.log(`the same parse + build on the serving thread: ${inThread.toFixed(0)} ms`);
} finally {
  await t.close();
}
