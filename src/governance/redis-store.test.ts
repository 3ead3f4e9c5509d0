import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { PERIODS, periodId } from './periods.ts';
import { LUA_PRELUDE } from './redis-lua.ts';
import { RedisStore } from './redis-store.ts';
import { backendSuite, recordingLogger, T0 } from './testing/backend-suite.ts';
import { startRedisServer, type RedisServer } from './testing/redis-server.ts';
import type { Scope, StateBackend } from './types.ts';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop('SIGTERM');
});

let tests = 0;
/**
 * Two engines with their own connections, sharing one prefix per test. The conformance suite is
 * not about timeouts: a command may wait 10 s (the default 1 s turned admissions into
 * `unavailable` while the whole test suite loaded the machine).
 */
async function pair(options: { leaseTtlMs?: number; renewEveryMs?: number } = {}, log = recordingLogger()) {
  const prefix = `t${++tests}:`;
  const open = async () => createEngine(await RedisStore.open({ url: server.url, prefix, log, commandTimeoutMs: 10_000, connectTimeoutMs: 10_000 }), { log, renewEveryMs: 3_600_000, ...options });
  const a = await open();
  const b = await open();
  return { a, b, log, close: async () => void (await Promise.all([a.close(), b.close()])) };
}

backendSuite('redis', () => pair());

describe('redis store', () => {
  it('computes the same calendar period ids in Lua as in TypeScript (1970 to 2100, leap days, year ends)', async () => {
    const redis = new Redis(server.url);
    const edges = [
      0,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2000, 2, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(2025, 0, 1),
      Date.UTC(2026, 0, 4, 23, 59, 59, 999),
      Date.UTC(2026, 0, 5),
      Date.UTC(2100, 1, 28, 12),
    ];
    let seed = 1;
    const samples = [...edges, ...Array.from({ length: 400 }, () => Math.floor(((seed = (seed * 16807) % 2147483647) / 2147483647) * Date.UTC(2100, 0, 1)))];
    const args = samples.flatMap((ms) => PERIODS.map((p) => [p, ms] as const));
    const lua = `${LUA_PRELUDE}\nlocal out = {}\nfor i = 2, #ARGV, 2 do out[#out + 1] = periodId(ARGV[i], tonumber(ARGV[i + 1])) end\nreturn out`;
    const ids = (await redis.eval(lua, 0, 'unused:', ...args.flat())) as string[];
    expect(ids).toEqual(args.map(([p, ms]) => periodId(p, ms)));
    redis.disconnect();
  });

  it('uses the Redis server clock when no time is passed', async () => {
    const { a, close } = await pair();
    const before = Date.now();
    const r = await a.admit({ scopes: [{ name: 'key:clock', limits: { rpm: 5 } }], tokens: 1, costUsd: 0 });
    expect(r.status).toBe('admitted');
    if (r.status === 'admitted') expect(Math.abs(r.lease.at - before)).toBeLessThan(2_000);
    await close();
  });

  it('shares spend between instances', async () => {
    const { a, b, close } = await pair();
    const scopes: Scope[] = [{ name: 'team:shared', limits: { budget: { usd: 10, period: 'daily' } } }];
    const r = await a.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (r.status !== 'admitted') throw new Error(r.status);
    await a.settle(r.lease, { usage: { input: 5, cachedInput: 0, cacheWrite: 0, output: 5 }, costUsd: 0.25, now: T0 });
    const [status] = await b.status(scopes, T0 + 1);
    expect(status!.budget).toMatchObject({ spentUsd: 0.25, reservedUsd: 0, remainingUsd: 9.75 });
    await close();
  });

  it("renews leases in real time, and a dead instance's slot comes back after the lease expires", async () => {
    const { a, b, close } = await pair({ leaseTtlMs: 1_000, renewEveryMs: 200 });
    const scopes: Scope[] = [{ name: 'key:lease', limits: { concurrency: 1 } }];
    const held = await a.admit({ scopes, tokens: 1, costUsd: 0 });
    expect(held.status).toBe('admitted');
    // Several lease lifetimes: only the renewals keep it.
    await sleep(2_500);
    expect((await b.admit({ scopes, tokens: 1, costUsd: 0 })).status).toBe('refused');
    // a "dies": it stops renewing without settling.
    await a.close();
    await sleep(1_200);
    expect((await b.admit({ scopes, tokens: 1, costUsd: 0 })).status).toBe('admitted');
    await close().catch(() => undefined);
  });

  it('answers unavailable while Redis is down, logs each transition once, keeps settlements, and recovers by itself', async () => {
    const log = recordingLogger();
    const prefix = `t${++tests}:`;
    const a = createEngine(await RedisStore.open({ url: server.url, prefix, log }), { log });
    const scopes: Scope[] = [{ name: 'key:outage', limits: { rpm: 100 } }];
    const admitted = async (backend: StateBackend) => (await backend.admit({ scopes, tokens: 1, costUsd: 0.01 })).status;
    expect(await admitted(a)).toBe('admitted');
    expect(log.lines.filter((l) => l.msg.includes('unreachable'))).toHaveLength(0);

    await server.stop();
    const started = Date.now();
    const during = [];
    for (let i = 0; i < 20; i++) during.push(await a.admit({ scopes, tokens: 1, costUsd: 0.01 }));
    expect(during.every((r) => r.status === 'unavailable')).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    // Admitted anyway (onUnavailable: open): its usage is kept until Redis is back.
    const open = during[0]!;
    if (open.status !== 'unavailable') throw new Error(open.status);
    expect(open.lease.reserved).toBe(false);
    expect(await a.settle(open.lease, { usage: { input: 7, cachedInput: 0, cacheWrite: 0, output: 3 }, costUsd: 0.02, labels: { key: 'outage', model: 'gpt-4o' } })).toBe('queued');
    await expect(a.status(scopes)).rejects.toMatchObject({ code: 'state_unavailable' });
    await sleep(300);

    await server.start();
    const deadline = Date.now() + 10_000;
    while ((await admitted(a)) !== 'admitted') {
      if (Date.now() > deadline) throw new Error('did not recover');
      await sleep(50);
    }
    const transitions = log.lines.filter((l) => /reachable|connected/.test(l.msg));
    expect(transitions.map((l) => `${l.level} ${l.msg}`)).toEqual(['info redis connected', 'error redis is unreachable', 'info redis is reachable again']);

    let page;
    for (const until = Date.now() + 5_000; Date.now() < until; await sleep(100)) {
      page = await a.usage({ startTime: Math.floor(Date.now() / 1000) - 3_600 });
      if (page.data.some((d) => d.results.length > 0)) break;
    }
    const results = page!.data.flatMap((d) => d.results);
    expect(results).toEqual([expect.objectContaining({ num_model_requests: 1, input_tokens: 7, output_tokens: 3, amount: { value: 0.02, currency: 'usd' } })]);
    await a.close();
  });
});
