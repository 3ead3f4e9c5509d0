/**
 * Fault battery: Redis paused (CLIENT PAUSE) or slowed (every byte 1.5 s late through a proxy)
 * beyond the gateway's 1 s command timeout, under mixed plain and streamed traffic on a budgeted
 * key, with `onUnavailable: closed` and `open`. Admissions that time out are refused (closed) or
 * served unreserved (open); settlements that time out are queued and replayed, and each carries
 * its request id, so one that timed out but ran is not booked again; a reservation whose
 * admission timed out but ran is given back. Afterwards spent is exactly what the upstream
 * served × price and nothing stays reserved. (Paused with `open`:
 * test/governance/redis-replay.test.ts.) Needs a real redis-server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import type { KeyReport } from '../../src/admin/report.ts';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import { adminGet, eventually, startUsageUpstream, type UsageUpstream } from '../governance/helpers.ts';
import { COST_NANO, faultConfig, nano, runTraffic } from './helpers.ts';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.ts';

const ADMIN = 'sk-admin-slow-0123456789';
const KEY = 'sk-slow-budget-0123456789';
const FAULT_MS = 2_600;

let redis: RedisServer;
let upstream: UsageUpstream;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedisServer(), startUsageUpstream({ prompt: 18, completion: 5 })]);
}, 60_000);
afterAll(async () => {
  await upstream?.close();
  await redis?.stop('SIGTERM');
});

const CASES = [
  { mode: 'closed', fault: 'paused', tag: 's1' },
  { mode: 'closed', fault: 'slowed', tag: 's2' },
  { mode: 'open', fault: 'slowed', tag: 's3' },
] as const;

describe.each(CASES)('redis $fault beyond the command timeout, onUnavailable: $mode', ({ mode, fault, tag }) => {
  let proxy: LatencyProxy;
  let t: TestGateway;
  const prefix = `${tag}:`;
  beforeAll(async () => {
    proxy = await startLatencyProxy(redis.port);
    const state = `state: { backend: redis, redis: { url: "redis://127.0.0.1:${proxy.port}", prefix: "${prefix}" }, onUnavailable: ${mode} }`;
    t = await startTestGateway(faultConfig({ head: [state], key: KEY, budget: '{ usd: 1000, period: daily }', admin: ADMIN, upstream: upstream.baseUrl }));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('spend is exactly what the upstream served × price; nothing stays reserved', async () => {
    const client = new Redis(redis.url);
    const spent = async () => Number((await client.get(`${prefix}sp:key:payer:total`)) ?? 0);
    const reserved = async () => ((await adminGet(t.url, '/admin/v1/keys', ADMIN)).body.data as KeyReport[]).find((k) => k.name === 'payer')!.budget!.reserved_usd;
    await eventually(async () => expect(await client.get(`${prefix}sentinel`)).not.toBeNull());
    upstream.delay(tag, 50);

    const traffic = runTraffic(() => t.url, KEY, tag, 8, { pauseAfterErrorMs: 100 });
    await sleep(300);
    if (fault === 'paused') await client.call('CLIENT', 'PAUSE', String(FAULT_MS), 'ALL');
    else proxy.setDelay(1_500);
    await sleep(FAULT_MS);
    proxy.setDelay(0);
    await sleep(500);
    await traffic.stop();

    const served = upstream.count(tag).requests;
    const ok = traffic.statuses.filter((s) => s === 200).length;
    expect(t.logs.some((l) => l.msg === 'redis is unreachable')).toBe(true);
    expect(served).toBe(ok);
    if (mode === 'open') expect(traffic.statuses.filter((s) => s !== 200)).toEqual([]);
    else {
      // Closed: budgeted requests wait for Redis; each refusal is the catalogued 503.
      expect(traffic.codes.length).toBeGreaterThan(0);
      expect(new Set(traffic.codes)).toEqual(new Set(['limits_unavailable']));
    }
    // Queued settlements are replayed every second; once all are in, nothing more arrives.
    await eventually(async () => expect(await spent()).toBeGreaterThanOrEqual(served * COST_NANO), 15_000);
    await eventually(async () => expect(await reserved()).toBe(0), 15_000);
    await sleep(1_500);
    expect(await spent()).toBe(served * COST_NANO);
    expect(nano(await reserved())).toBe(0);
    client.disconnect();
  }, 60_000);
});
