/**
 * A reload of a 10,000-key gateway.yaml under steady traffic: the parse (YAML with positions,
 * ajv, cross-checks, key digests, redaction index) runs on a worker thread, so the serving
 * thread's event loop stays responsive. Before, the same reload blocked it 1.4–1.8 s.
 * The bound is generous on purpose (a loaded 2-core CI machine): what remains on the serving
 * thread is the key index, the copy of the result and the key diff (both in slices, one per task,
 * which the test checks through the reload-steps probe) and a major GC of the larger heap.
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { DEV_KEY, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { bigConfig } from '../helpers/big-config.ts';
import { reloadSteps } from '../../src/runtime/reload-steps.ts';

const KEYS = 10_000;
// Measured 50–600 ms on a 2-core machine at load 14–16 (the in-thread parse alone took 2–8 s there).
const MAX_STALL_MS = 750;

let t: TestGateway | undefined;
afterEach(async () => {
  reloadSteps.record = undefined;
  await t?.close();
  t = undefined;
});

/** Requests back to back on a few connections until stopped; counts answers by status. */
function steadyTraffic(url: string, token: string) {
  const pool = new Pool(url, { connections: 4 });
  const statuses: number[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.body.text();
      statuses.push(res.statusCode);
    }
  };
  const done = Promise.all([loop(), loop(), loop(), loop()]);
  return {
    statuses,
    async stop() {
      running = false;
      await done;
      await pool.close();
    },
  };
}

/** Runs `fn` while sampling the event loop's delay; returns its result and the worst stall in ms. */
async function measured<T>(fn: () => Promise<T>): Promise<{ result: T; maxStallMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    const result = await fn();
    return { result, maxStallMs: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

describe('reload of a 10,000-key config', () => {
  it('keeps the event loop responsive during a good and a broken reload, and applies only the good one', async () => {
    t = await startTestGateway(bigConfig(KEYS));
    const traffic = steadyTraffic(t.url, DEV_KEY);
    try {
      await new Promise((r) => setTimeout(r, 300));

      // A good edit: one more key, which works once the reload is done.
      writeFileSync(t.configFile, bigConfig(KEYS, { extraKey: 'sk-test-added-after-reload-000' }));
      const steps: string[] = [];
      reloadSteps.record = (step) => steps.push(step);
      const good = await measured(() => t!.gateway.reload('test'));
      reloadSteps.record = undefined;
      expect(good.result).toMatchObject({ ok: true, generation: 2 });
      expect(good.result.changes).toBe('keys +added');
      // The serving thread took the worker's 10,001 keys in parts and diffed them in slices, each
      // step a task of its own with requests between: the key parts, the snapshot, the slices.
      expect(steps.filter((s) => s === 'receive a part')).toHaveLength(12);
      expect(steps.filter((s) => s === 'diff a slice of keys')).toHaveLength(6);
      expect(good.maxStallMs).toBeLessThan(MAX_STALL_MS);
      const added = await fetch(`${t.baseURL}/models`, { headers: { authorization: 'Bearer sk-test-added-after-reload-000' } });
      expect(added.status).toBe(200);

      // A broken edit deep in the file: reported with file:line:col, generation 2 keeps serving.
      writeFileSync(t.configFile, bigConfig(KEYS, { extraKey: 'sk-test-added-after-reload-000', brokenKeyAt: 9_000 }));
      const broken = await measured(() => t!.gateway.reload('test'));
      expect(broken.result.ok).toBe(false);
      expect(broken.result.generation).toBe(2);
      expect(broken.result.errors?.[0]).toMatch(/gateway\.yaml:\d{5}:\d+ keys\[9000\]\.team: unknown team "nobody"/);
      expect(broken.maxStallMs).toBeLessThan(MAX_STALL_MS);
      expect(t.gateway.runtime.generation).toBe(2);
    } finally {
      await traffic.stop();
    }
    expect(traffic.statuses.length).toBeGreaterThan(10);
    expect(traffic.statuses.filter((s) => s !== 200)).toEqual([]);
  }, 180_000);
});
