/**
 * Fault battery: `server.workers: 2` on the memory backend (the primary keeps the state, the
 * workers ask it over IPC), one worker killed with -9 under mixed plain and streamed traffic on
 * a budgeted key. The requests it was serving fail at the socket; their reservations stay with
 * the primary until their leases lapse (`state.leaseTtlMs`, 5 s here) and are then booked at their worst case, which
 * here is their exact price. The primary replaces the worker; the budget is never overshot.
 * (The primary's own death: test/cluster/primary-death.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyReport } from '../../src/admin/report.ts';
import { alive, readinessByWorker, startCli, until, type RunningCli } from '../cluster/helpers.ts';
import { adminGet, eventually, startUsageUpstream, todayStart, type UsageUpstream } from '../governance/helpers.ts';
import { COST, COST_NANO, faultConfig, nano, runTraffic, writeConfig } from './helpers.ts';

const ADMIN = 'sk-admin-worker-0123456789';
const KEY = 'sk-worker-budget-0123456789';
const K = 80;
const CLIENTS = 8;
const TAG = 'kw';

let upstream: UsageUpstream;
let cli: RunningCli | undefined;

beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 18, completion: 5 });
  const file = writeConfig(
    'switchyard-fault-worker-',
    faultConfig({
      head: ['server: { workers: 2 }', 'log: { level: info, format: json }', 'state: { backend: memory, file: state.sqlite, leaseTtlMs: 5000, ledger: { flushMs: 50 } }'],
      key: KEY,
      budget: `{ usd: ${K * COST}, period: total }`,
      admin: ADMIN,
      upstream: upstream.baseUrl,
    }),
  );
  cli = await startCli(file, 40_000);
}, 60_000);
afterAll(async () => {
  if (cli?.child.exitCode === null) cli.child.kill('SIGKILL');
  await upstream?.close();
});

it('a worker killed with -9 under traffic: spend between served and served + in flight, the budget not overshot', async () => {
  const url = `http://127.0.0.1:${cli!.port}`;
  const budget = async () => ((await adminGet(url, '/admin/v1/keys', ADMIN)).body.data as KeyReport[]).find((k) => k.name === 'payer')!.budget!;
  const workers = await until(
    'both workers',
    () => readinessByWorker(cli!.port),
    (w) => w.size === 2,
    20_000,
  );
  const [victim] = [...workers.keys()];

  upstream.delay(TAG, 250);
  const traffic = runTraffic(() => url, KEY, TAG, CLIENTS);
  await eventually(() => {
    expect(upstream.count(TAG).requests).toBeGreaterThanOrEqual(16);
    expect(upstream.count(TAG).inFlight).toBeGreaterThanOrEqual(4);
  }, 20_000);
  const inFlight = traffic.outstanding();
  const atKill = upstream.count(TAG).requests;
  const killedAt = Date.now();
  process.kill(victim!, 'SIGKILL');
  // The other worker goes on serving; then the primary replaces the dead one.
  await eventually(() => expect(upstream.count(TAG).requests).toBeGreaterThanOrEqual(atKill + 2 * CLIENTS), 20_000);
  await traffic.stop();
  await until(
    'a replacement worker',
    () => readinessByWorker(cli!.port),
    (w) => w.size === 2 && !w.has(victim!),
    30_000,
  );
  expect(alive(victim!)).toBe(false);
  await eventually(() => expect(upstream.count(TAG).inFlight).toBe(0));
  const served = upstream.count(TAG).requests;
  // The dead worker's requests failed at the socket; no other answer than 200 or that.
  expect(traffic.statuses.filter((s) => s === 0).length).toBeGreaterThanOrEqual(1);
  expect(
    traffic.statuses.filter((s) => s !== 200 && s !== 0),
    `error codes: ${traffic.codes.join(', ')}`,
  ).toEqual([]);

  // Booked now: spent, plus the dead worker's reservations until their leases expire.
  const now = await budget();
  const booked = nano(now.spent_usd) + nano(now.reserved_usd);
  expect(booked).toBeGreaterThanOrEqual(served * COST_NANO);
  expect(booked).toBeLessThanOrEqual((served + inFlight) * COST_NANO);

  // The rest of the budget, then the final refusal: never more than it holds.
  const rest = runTraffic(() => url, KEY, TAG, CLIENTS, { stopOn: ['insufficient_quota'] });
  await rest.ended();
  const total = upstream.count(TAG).requests;
  expect(
    rest.statuses.filter((s) => s !== 200 && s !== 429),
    `error codes: ${rest.codes.join(', ')}`,
  ).toEqual([]);
  expect(total).toBeLessThanOrEqual(K);
  expect(total).toBeGreaterThanOrEqual(K - inFlight);
  const final = await eventually(async () => {
    const b = await budget();
    expect(b.reserved_usd).toBe(0);
    return b;
  }, 20_000);
  expect(nano(final.spent_usd)).toBeGreaterThanOrEqual(total * COST_NANO);
  expect(nano(final.spent_usd)).toBeLessThanOrEqual(Math.min(total + inFlight, K) * COST_NANO);

  // The ledger (the state file both workers write): one row per request that ended, at its price,
  // none twice. The dead worker's rows not written yet are lost (its last flushMs, more when its
  // timer ran late): every request answered a second before the kill or after it is there.
  const sure = traffic.servedAt.filter((at) => at < killedAt - 1_000 || at > killedAt + 500).length + rest.servedAt.length;
  const usage = await eventually(async () => {
    const r = await adminGet(url, `/admin/v1/usage?start_time=${todayStart()}&group_by=key&keys=payer`, ADMIN);
    const [row] = r.body.data.flatMap((b: { results: unknown[] }) => b.results) as Array<{ num_model_requests: number; amount: { value: number } }>;
    expect(row!.num_model_requests).toBeGreaterThanOrEqual(sure);
    return row!;
  });
  expect(usage.num_model_requests).toBeLessThanOrEqual(total);
  expect(nano(usage.amount.value)).toBe(usage.num_model_requests * COST_NANO);
}, 120_000);
