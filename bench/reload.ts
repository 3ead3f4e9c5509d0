/**
 * The cost of reloading a 10,000-key gateway.yaml to the serving thread: the longest event-loop
 * stall while the gateway reloads (parse on a worker thread), against the same parse and build
 * done on this thread (what a reload cost before).
 *
 *   node --conditions=switchyard-source bench/reload.ts [keys]
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { parseConfigFile } from '../src/config/load.ts';
import { startTestGateway } from '../src/kit/testing/index.ts';
import { buildRuntime } from '../src/runtime/build.ts';
import { bigConfig } from '../test/helpers/big-config.ts';

const keys = Number(process.argv[2] ?? 10_000);
const t = await startTestGateway(bigConfig(keys));
try {
  const stalls: number[] = [];
  for (let i = 0; i < 3; i++) {
    writeFileSync(t.configFile, bigConfig(keys, { extraKey: `sk-bench-extra-key-${i}-0000000` }));
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const outcome = await t.gateway.reload('bench');
    delay.disable();
    if (!outcome.ok) throw new Error(`reload failed: ${outcome.errors?.join('; ')}`);
    stalls.push(delay.max / 1e6);
  }
  const started = performance.now();
  const parsed = await parseConfigFile(t.configFile, {});
  await (await buildRuntime(parsed, { generation: 99, log: pino({ level: 'silent' }), env: {} })).close();
  const inThread = performance.now() - started;
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`);
  console.log(
    `${keys} keys: reload stalls the event loop at most ${stalls.map((s) => s.toFixed(0)).join(' / ')} ms (3 reloads); the same parse + build on the serving thread: ${inThread.toFixed(0)} ms`,
  );
} finally {
  await t.close();
}
