/**
 * The memory backend killed with requests in flight (issue 21, B1): their reservations were in
 * the state file since admission, so the next start books them at their worst case, as the
 * Redis store books a lease that expired. Spend is never lost, nothing is booked twice, and a
 * request settled before the crash leaves no reservation behind.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyReport } from '../../src/admin/report.ts';
import { adminGet, chat, eventually, spawnGateway, startUsageUpstream, type GatewayProcess, type UsageUpstream } from './helpers.ts';

const ADMIN = 'sk-admin-crash-0123456789';
const KEY = 'sk-crash-budget-0123456789';
/** 10 prompt + 5 completion tokens at $1000/$2000 per million: what a settled request costs. */
const COST = (10 * 1000 + 5 * 2000) / 1e6;
const IN_FLIGHT = 4;

let upstream: UsageUpstream;
let file: string;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 10, completion: 5 });
  file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-crash-')), 'gateway.yaml');
  writeFileSync(
    file,
    `keys:
  - { name: saver, key: ${KEY}, models: ["*"], budget: { usd: 100, period: total } }
admin:
  keys: [{ name: ops, key: ${ADMIN} }]
providers:
  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }
`,
  );
});
afterAll(async () => {
  for (const g of running) await g.stop('SIGKILL');
  await upstream?.close();
});

async function start(): Promise<GatewayProcess> {
  const g = await spawnGateway(file, 60_000);
  running.push(g);
  return g;
}

const saver = async (g: GatewayProcess): Promise<KeyReport> => (await adminGet(g.url, '/admin/v1/keys', ADMIN)).body.data[0];

it('kill -9 with requests in flight: the next start books their reservations, once', async () => {
  const first = await start();
  // One request settled before the crash: its reservation must not be booked again.
  expect((await chat(first.url, KEY, { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'settled' }] })).status).toBe(200);
  await eventually(async () => expect((await saver(first)).budget!.spent_usd).toBeCloseTo(COST, 12));

  const release = upstream.hold('crash');
  const asked = Array.from({ length: IN_FLIGHT }, (_, i) =>
    chat(first.url, KEY, { model: 'm', max_tokens: 50, stream: i % 2 === 1, messages: [{ role: 'user', content: 'crash' }] }).catch(() => undefined),
  );
  await eventually(() => expect(upstream.count('crash').inFlight).toBe(IN_FLIGHT));
  const before = (await saver(first)).budget!;
  expect(before.reserved_usd).toBeGreaterThan(0);
  await first.stop('SIGKILL');
  release();
  await Promise.all(asked);

  const second = await start();
  const after = (await saver(second)).budget!;
  // The settled request's cost, and the worst case of the four the upstream was answering: not one lost, not one twice.
  expect(after.spent_usd).toBeCloseTo(COST + before.reserved_usd, 12);
  expect(after.reserved_usd).toBe(0);
  expect(second.output()).toContain(`state file: ${IN_FLIGHT} requests were in flight when the gateway last stopped without settling them`);

  // Booked once: a graceful restart books nothing more.
  await second.stop('SIGTERM');
  const third = await start();
  expect((await saver(third)).budget!.spent_usd).toBeCloseTo(COST + before.reserved_usd, 12);
  expect(third.output()).not.toContain('requests were in flight');
}, 120_000);
