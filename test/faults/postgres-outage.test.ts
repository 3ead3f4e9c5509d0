/**
 * Fault battery: the PostgreSQL ledger's server stopped (a crash: `pg_ctl -m immediate`, writes
 * cut mid-transaction) and started again while eight clients send mixed plain and streamed
 * requests. No request fails (the ledger is never on the request's path); the rows wait in the
 * queue, are written once the server is back, and a batch retried after a write that may have
 * committed books nothing twice: the rows, counted by request id, are exactly the requests the
 * upstream served, each at its exact price. Needs a real PostgreSQL (test/helpers/postgres.ts),
 * here with durable commits: without them the crash itself loses commits PostgreSQL acknowledged.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { adminGet, eventually, startUsageUpstream, type UsageUpstream } from '../governance/helpers.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { COST_NANO, MODEL, runTraffic } from './helpers.ts';

const ADMIN = 'sk-admin-pg-outage-0123456789';
const KEY = 'sk-pg-outage-0123456789';
const TAG = 'pg';

let upstream: UsageUpstream;
let postgres: PostgresServer;
let url: string;
let t: TestGateway;

beforeAll(async () => {
  [upstream, postgres] = await Promise.all([startUsageUpstream({ prompt: 18, completion: 5 }), startPostgres({ durableCommits: true })]);
  url = await postgres.createDatabase('outage');
  t = await startTestGateway(
    [
      'keys:',
      `  - { name: load, key: ${KEY}, models: ["*"] }`,
      'admin:',
      `  keys: [{ name: ops, key: ${ADMIN} }]`,
      'metrics: { auth: false }',
      // The URL from a file, as a password would be kept.
      'state: { ledger: { flushMs: 20, postgres: { url: "${file:pg-url}" } } }',
      'providers:',
      `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
      'models:',
      MODEL,
    ].join('\n'),
    { files: { 'pg-url': url } },
  );
}, 90_000);
afterAll(async () => {
  await t?.close();
  await upstream?.close();
  await postgres?.destroy();
});

it('no request fails; the rows, counted by request id, are exactly what the upstream served', async () => {
  upstream.delay(TAG, 20);
  const traffic = runTraffic(() => t.url, KEY, TAG, 8);
  await eventually(() => expect(upstream.count(TAG).requests).toBeGreaterThanOrEqual(30), 20_000);
  await postgres.stop('immediate');
  const atStop = upstream.count(TAG).requests;
  await eventually(() => expect(upstream.count(TAG).requests).toBeGreaterThanOrEqual(atStop + 40), 20_000);
  // While it is down the rows wait in the queue; a single request is still found there.
  expect(t.gateway.ledger!.stats.up).toBe(false);
  expect((await adminGet(t.url, `/admin/v1/requests/${traffic.ids.at(-1)}`, ADMIN)).status).toBe(200);
  await postgres.start();
  await sleep(1_000);
  await traffic.stop();

  const served = upstream.count(TAG).requests;
  expect(traffic.statuses).toEqual(Array(served).fill(200));
  expect(new Set(traffic.ids).size).toBe(served);
  // The gateway's own count first: a row it wrote that the database no longer has is the database's loss.
  await eventually(async () => {
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^switchyard_ledger_written_rows_total\\{engine="postgres"\\} ${served}$`, 'm'));
  }, 20_000);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const counted = await eventually(async () => {
      const { rows } = await client.query("SELECT COUNT(*)::int AS n, COUNT(DISTINCT id)::int AS ids, SUM(cost_nano)::bigint AS nano FROM switchyard_requests WHERE key = 'load'");
      expect(rows[0].n).toBe(served);
      return rows[0];
    }, 20_000);
    expect(counted.ids).toBe(served);
    expect(Number(counted.nano)).toBe(served * COST_NANO);
    const { rows } = await client.query<{ id: string }>("SELECT id FROM switchyard_requests WHERE key = 'load'");
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(traffic.ids));
  } finally {
    await client.end();
  }
  // The metrics say what happened: every row written, none dropped, the database up again.
  const metrics = await (await fetch(`${t.url}/metrics`)).text();
  expect(metrics).toMatch(new RegExp(`^switchyard_ledger_written_rows_total\\{engine="postgres"\\} ${served}$`, 'm'));
  expect(metrics).toMatch(/^switchyard_ledger_dropped_rows_total\{engine="postgres"\} 0$/m);
  expect(metrics).toMatch(/^switchyard_ledger_up\{engine="postgres"\} 1$/m);
  const logs = t.logText();
  expect(logs).toContain('request ledger: the database cannot be written');
  expect(logs).toContain('request ledger: the database takes writes again');
  // The URL (a secret read from a file) is in no log line.
  expect(logs).not.toContain(url);
}, 90_000);
