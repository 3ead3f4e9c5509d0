/**
 * The Redis store after Redis lost its data, against a real redis-server and a spend source
 * standing for the ledger: requests in flight across the loss are booked once (in full: their
 * reservation went with the data), settlements that ended before the rebuild are not booked on
 * top of the ledger's figures, and without a ledger the loss is said out loud.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import type { SpendSource } from './redis-recovery.ts';
import { RedisStore } from './redis-store.ts';
import { recordingLogger } from './testing/backend-suite.ts';
import { startRedisServer, type RedisServer } from './testing/redis-server.ts';
import type { Scope, StateBackend } from './types.ts';

let server: RedisServer;
let admin: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url);
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop('SIGTERM');
});

const SCOPES: Scope[] = [{ name: 'key:k', limits: { budget: { usd: 10, period: 'total' } } }];
const USAGE = { input: 1, cachedInput: 0, cacheWrite: 0, output: 1 };
let prefixes = 0;

async function open(spend: SpendSource | undefined, log = recordingLogger()): Promise<{ engine: StateBackend; prefix: string; log: typeof log }> {
  const prefix = `rc${++prefixes}:`;
  const store = await RedisStore.open({ url: server.url, prefix, log, spend, checkEveryMs: 100 });
  const engine = createEngine(store, { log, retryEveryMs: 50 });
  return { engine, prefix, log };
}

const spentUsd = async (engine: StateBackend) => (await engine.status(SCOPES))[0]!.spentUsd;
async function until(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 25))) if (Date.now() > end) throw new Error('timed out');
}

it('books a request in flight across the loss once, in full, and a settlement that ended before the rebuild not on top of the ledger', async () => {
  // The ledger holds $2 for the key (among them the settlement queued during the loss, below).
  let ledgerUsd = 0;
  const spend: SpendSource = { flushMs: 10, periodSpend: async () => (ledgerUsd ? [{ scope: 'key:k', period: 'total', nano: ledgerUsd * 1e9 }] : []) };
  const { engine, prefix, log } = await open(spend);
  await until(async () => (await admin.get(`${prefix}sentinel`)) !== null);
  const inFlight = await engine.admit({ scopes: SCOPES, tokens: 2, costUsd: 1 });
  const ended = await engine.admit({ scopes: SCOPES, tokens: 2, costUsd: 1 });
  if (inFlight.status !== 'admitted' || ended.status !== 'admitted') throw new Error('not admitted');

  await admin.flushall();
  // Settled while the counters are gone: kept, not booked into empty counters.
  expect(await engine.settle(ended.lease, { usage: USAGE, costUsd: 0.5 })).toBe('queued');
  expect((await engine.admit({ scopes: SCOPES, tokens: 2, costUsd: 1 })).status).toBe('unavailable');
  ledgerUsd = 2;
  await until(async () => (await admin.get(`${prefix}sentinel`)) !== null);
  await until(async () => (await engine.admit({ scopes: [{ name: 'key:probe', limits: { budget: { usd: 1, period: 'total' } } }], tokens: 1, costUsd: 0 })).status === 'admitted');
  // The queued settlement is replayed and skipped (its row was in the ledger's $2); the one in flight is booked.
  expect(await engine.settle(inFlight.lease, { usage: USAGE, costUsd: 0.25 })).toBe('settled');
  await new Promise((r) => setTimeout(r, 200));
  expect(await spentUsd(engine)).toBeCloseTo(2.25, 9);
  // Settling it again (a replay) books nothing.
  expect(await engine.settle(inFlight.lease, { usage: USAGE, costUsd: 0.25 })).toBe('settled');
  expect(await spentUsd(engine)).toBeCloseTo(2.25, 9);
  expect(log.lines.filter((l) => l.level === 'warn' && l.msg.includes('rebuilt from the request ledger'))).toHaveLength(1);
  await engine.close();
});

it('without a ledger, says loudly that spend was lost and admits again from zero', async () => {
  const { engine, prefix, log } = await open(undefined);
  await until(async () => (await admin.get(`${prefix}sentinel`)) !== null);
  const r = await engine.admit({ scopes: SCOPES, tokens: 2, costUsd: 1 });
  if (r.status !== 'admitted') throw new Error(r.status);
  await engine.settle(r.lease, { usage: USAGE, costUsd: 3 });
  await admin.flushall();
  await until(async () => log.lines.some((l) => l.level === 'error' && l.msg.includes('no request ledger is kept')));
  expect(await spentUsd(engine)).toBe(0);
  await engine.close();
});
