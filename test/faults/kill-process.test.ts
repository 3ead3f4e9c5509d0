/**
 * Fault battery: one gateway process (no cluster) killed with -9 under mixed plain and streamed
 * traffic on a budgeted key, on the memory backend (the SQLite state file) and on the Redis
 * backend (a real redis-server, the ledger in SQLite), then started again. The upstream counts
 * what it served and each request's cost is exact (helpers.ts), so:
 * - booked spend after the restart is at least what the upstream served × price and at most
 *   (served + the requests in flight at the kill) × price: nothing lost, nothing booked twice;
 * - the budget is never overshot: with the in-flight requests' reservations kept (state file;
 *   Redis leases booked when they expire), traffic after the restart stops exactly at the budget.
 * Fails (with more served than the budget and spend below what was served) when the memory
 * store does not persist reservations at admission, or Redis does not book expired leases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyReport } from '../../src/admin/report.ts';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import { adminGet, eventually, spawnGateway, startUsageUpstream, todayStart, type GatewayProcess, type UsageUpstream } from '../governance/helpers.ts';
import { COST, COST_NANO, faultConfig, nano, runTraffic, writeConfig } from './helpers.ts';

const ADMIN = 'sk-admin-kill-0123456789';
const KEY = 'sk-kill-budget-0123456789';
/** The budget, in requests: more than the first life serves, so the second runs into it. */
const K = 60;
const CLIENTS = 8;

let upstream: UsageUpstream;
let redis: RedisServer;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  [upstream, redis] = await Promise.all([startUsageUpstream({ prompt: 18, completion: 5 }), startRedisServer()]);
}, 60_000);
afterAll(async () => {
  for (const g of running) await g.stop('SIGKILL');
  await upstream?.close();
  await redis?.stop('SIGTERM');
});

const BACKENDS = [
  { name: 'memory (SQLite state file)', tag: 'k1', state: '{ backend: memory, ledger: { flushMs: 50 } }', leasesOutliveTheProcess: false },
  { name: 'redis (SQLite ledger)', tag: 'k2', state: '', leasesOutliveTheProcess: true },
];

describe.concurrent.each(BACKENDS)('kill -9 of a single process, $name', (backend) => {
  let file: string;
  beforeAll(() => {
    const state = backend.state || `{ backend: redis, redis: { url: "${redis.url}", prefix: "kill:" }, onUnavailable: closed, leaseTtlMs: 5000, ledger: { enabled: true, flushMs: 50 } }`;
    file = writeConfig('switchyard-fault-kill-', faultConfig({ head: [`state: ${state}`], key: KEY, budget: `{ usd: ${K * COST}, period: total }`, admin: ADMIN, upstream: upstream.baseUrl }));
  });

  async function start(): Promise<GatewayProcess> {
    const g = await spawnGateway(file, 60_000);
    running.push(g);
    return g;
  }
  const budgetOf = async (g: GatewayProcess) => ((await adminGet(g.url, '/admin/v1/keys', ADMIN)).body.data as KeyReport[]).find((k) => k.name === 'payer')!.budget!;
  const ledgerOf = async (g: GatewayProcess) => {
    const usage = await adminGet(g.url, `/admin/v1/usage?start_time=${todayStart()}&group_by=key&keys=payer`, ADMIN);
    const [row] = usage.body.data.flatMap((b: { results: unknown[] }) => b.results) as Array<{ num_model_requests: number; amount: { value: number } }>;
    return { requests: row?.num_model_requests ?? 0, nano: nano(row?.amount.value ?? 0) };
  };

  it('spend after the restart is between served and served + in flight; the budget is not overshot', async () => {
    const { tag } = backend;
    upstream.delay(tag, 250);
    const first = await start();
    let target = first;
    const before = runTraffic(() => target.url, KEY, tag, CLIENTS);
    await eventually(() => {
      expect(upstream.count(tag).requests).toBeGreaterThanOrEqual(20);
      expect(upstream.count(tag).inFlight).toBeGreaterThanOrEqual(3);
    }, 20_000);
    const inFlight = before.outstanding();
    const killedAt = Date.now();
    await first.stop('SIGKILL');
    await before.stop();
    // The upstream finishes (or drops) what it was answering to a dead socket: it served those.
    await eventually(() => expect(upstream.count(tag).inFlight).toBe(0));
    const served = upstream.count(tag).requests;
    expect(before.statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(served);
    expect(
      before.statuses.filter((s) => s !== 200 && s !== 0),
      `error codes: ${before.codes.join(', ')}`,
    ).toEqual([]);

    const second = await start();
    target = second;
    // Booked: spent (the memory store booked the reservations at open) plus what is still reserved (Redis: leases of the dead process until they expire).
    const after = await budgetOf(second);
    const booked = nano(after.spent_usd) + nano(after.reserved_usd);
    expect(booked).toBeGreaterThanOrEqual(served * COST_NANO);
    expect(booked).toBeLessThanOrEqual((served + inFlight) * COST_NANO);
    if (!backend.leasesOutliveTheProcess) {
      expect(after.reserved_usd).toBe(0);
      expect(second.output()).toMatch(/requests were in flight when the gateway last stopped without settling them/);
    }

    // The rest of the budget, then refusals: not one request more than the budget holds.
    const rest = runTraffic(() => target.url, KEY, tag, CLIENTS, { stopOn: ['insufficient_quota'] });
    await rest.ended();
    const total = upstream.count(tag).requests;
    expect(
      rest.statuses.filter((s) => s !== 200 && s !== 429),
      `error codes: ${rest.codes.join(', ')}`,
    ).toEqual([]);
    expect(rest.statuses.filter((s) => s === 200)).toHaveLength(total - served);
    expect(total).toBeLessThanOrEqual(K);
    // Only the requests admitted but not yet sent upstream when the process died are booked and not served.
    expect(total).toBeGreaterThanOrEqual(K - inFlight);

    // Settled at last (Redis: the dead leases lapse after leaseTtlMs, 5 s here, and are booked then): spend within the same bounds, nothing reserved.
    const final = await eventually(
      async () => {
        const b = await budgetOf(second);
        expect(b.reserved_usd).toBe(0);
        return b;
      },
      backend.leasesOutliveTheProcess ? 20_000 : 5_000,
    );
    expect(nano(final.spent_usd)).toBeGreaterThanOrEqual(total * COST_NANO);
    expect(nano(final.spent_usd)).toBeLessThanOrEqual((total + inFlight) * COST_NANO);
    expect(nano(final.spent_usd)).toBeLessThanOrEqual(K * COST_NANO);

    // The ledger: one row per request that ended, at its price, none twice. A kill -9 loses the
    // rows not written yet (the last flushMs, more when the timer runs late on a loaded machine):
    // every request that ended a second before the kill, and every one after the restart, is there.
    const settledEarly = before.servedAt.filter((at) => at < killedAt - 1_000).length;
    const ledger = await eventually(async () => {
      const l = await ledgerOf(second);
      expect(l.requests).toBeGreaterThanOrEqual(settledEarly + (total - served));
      return l;
    });
    expect(ledger.requests).toBeLessThanOrEqual(total);
    expect(ledger.nano).toBe(ledger.requests * COST_NANO);
  }, 120_000);
});
