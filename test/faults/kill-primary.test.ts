/**
 * Fault battery: `server.workers: 2` on the memory backend, the primary (which holds the state
 * file) killed with -9 under mixed plain and streamed traffic on a budgeted key. The workers
 * drain (test/cluster/primary-death.test.ts checks the streams and the ledger rows), but their
 * settlements cannot reach the dead primary: the reservations it wrote to the state file at
 * admission are booked at the next start, at their worst case, which here is their exact price.
 * So spend after the restart is what the upstream served, and the budget holds exactly.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyReport } from '../../src/admin/report.ts';
import { alive, readinessByWorker, startCli, until, type RunningCli } from '../cluster/helpers.ts';
import { adminGet, eventually, startUsageUpstream, type UsageUpstream } from '../governance/helpers.ts';
import { COST, COST_NANO, faultConfig, nano, runTraffic, writeConfig } from './helpers.ts';

const ADMIN = 'sk-admin-primary-0123456789';
const KEY = 'sk-primary-budget-0123456789';
const K = 40;
const CLIENTS = 6;
const TAG = 'kp';

let upstream: UsageUpstream;
let file: string;
const clis: RunningCli[] = [];

beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 18, completion: 5 });
  // The primary's deadline for workers' state calls is raised: a restart's bookkeeping while the
  // other test project loads both cores can take the primary past the 2 s default (a 503 here).
  file = writeConfig(
    'switchyard-fault-primary-',
    faultConfig({
      head: [
        'server: { workers: 2, shutdownGraceMs: 15000, primaryTimeoutMs: 10000 }',
        'log: { level: info, format: json }',
        'state: { backend: memory, file: state.sqlite, ledger: { flushMs: 50 } }',
      ],
      key: KEY,
      budget: `{ usd: ${K * COST}, period: total }`,
      admin: ADMIN,
      upstream: upstream.baseUrl,
    }),
  );
});
afterAll(async () => {
  for (const cli of clis) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  await upstream?.close();
});

async function start(): Promise<{ cli: RunningCli; url: string; pids: number[] }> {
  const cli = await startCli(file, 40_000);
  clis.push(cli);
  const workers = await until(
    'both workers',
    () => readinessByWorker(cli.port),
    (w) => w.size === 2,
    20_000,
  );
  return { cli, url: `http://127.0.0.1:${cli.port}`, pids: [...workers.keys()] };
}

it('the primary killed with -9 under traffic: the next start books what was in flight, the budget holds', async () => {
  const first = await start();
  upstream.delay(TAG, 1_000);
  const traffic = runTraffic(() => first.url, KEY, TAG, CLIENTS);
  await eventually(() => {
    expect(upstream.count(TAG).requests).toBeGreaterThanOrEqual(2 * CLIENTS);
    expect(upstream.count(TAG).inFlight).toBeGreaterThanOrEqual(CLIENTS / 2);
  }, 30_000);
  const inFlight = traffic.outstanding();
  first.cli.child.kill('SIGKILL');
  await traffic.stop();
  await until(
    'the workers exiting',
    async () => first.pids.filter(alive),
    (left) => left.length === 0,
    30_000,
  );
  // The workers drained: what was in flight was answered (or refused new connections: status 0).
  expect(
    traffic.statuses.filter((s) => s !== 200 && s !== 0),
    `error codes: ${traffic.codes.join(', ')}`,
  ).toEqual([]);
  await eventually(() => expect(upstream.count(TAG).inFlight).toBe(0));
  const served = upstream.count(TAG).requests;

  const second = await start();
  const budget = async () => ((await adminGet(second.url, '/admin/v1/keys', ADMIN)).body.data as KeyReport[]).find((k) => k.name === 'payer')!.budget!;
  const after = await budget();
  expect(after.reserved_usd).toBe(0);
  expect(nano(after.spent_usd)).toBeGreaterThanOrEqual(served * COST_NANO);
  expect(nano(after.spent_usd)).toBeLessThanOrEqual((served + inFlight) * COST_NANO);
  expect(second.cli.output()).toMatch(/requests were in flight when the gateway last stopped without settling them/);

  upstream.delay(TAG, 50);
  const rest = runTraffic(() => second.url, KEY, TAG, CLIENTS, { stopOn: ['insufficient_quota'] });
  await rest.ended();
  const total = upstream.count(TAG).requests;
  expect(
    rest.statuses.filter((s) => s !== 200 && s !== 429),
    `error codes: ${rest.codes.join(', ')}`,
  ).toEqual([]);
  expect(total).toBeLessThanOrEqual(K);
  expect(total).toBeGreaterThanOrEqual(K - inFlight);
  expect(nano((await budget()).spent_usd)).toBeLessThanOrEqual(K * COST_NANO);
}, 150_000);
