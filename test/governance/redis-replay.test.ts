/**
 * B4: Redis paused beyond the command timeout (CLIENT PAUSE) under traffic, `onUnavailable:
 * open`. Admissions and settlements time out on the gateway's side but run on Redis's once the
 * pause ends; the gateway queues what timed out and replays it. Every settlement carries its
 * request id as an idempotency key, so the spend Redis books is exactly what the upstream
 * served × its price: nothing booked twice, nothing dropped. Needs a real redis-server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import { chat, eventually, startUsageUpstream, type UsageUpstream } from './helpers.ts';

/** $0.028 per answer (18 prompt, 5 completion tokens at $1000/$2000 per million), in nano-USD. */
const COST_NANO = 18 * 1000 * 1000 + 5 * 2000 * 1000;
const KEY = 'sk-replay-0123456789';
const PREFIX = 'replay:';

let redis: RedisServer;
let upstream: UsageUpstream;
let t: TestGateway;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedisServer(), startUsageUpstream({ prompt: 18, completion: 5 })]);
  t = await startTestGateway(
    [
      `state: { backend: redis, redis: { url: "${redis.url}", prefix: "${PREFIX}" }, onUnavailable: open }`,
      'keys:',
      `  - { name: payer, key: ${KEY}, models: ["*"], budget: { usd: 1000, period: daily } }`,
      'providers:',
      `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
      'models:',
      '  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }',
    ].join('\n'),
  );
}, 60_000);
afterAll(async () => {
  await t?.close();
  await upstream?.close();
  await redis?.stop('SIGTERM');
});

it('a settle that timed out but ran is not booked again when replayed: spend is exactly what was served', async () => {
  const client = new Redis(redis.url);
  const spent = async () => Number((await client.get(`${PREFIX}sp:key:payer:total`)) ?? 0);
  await eventually(async () => expect(await client.get(`${PREFIX}sentinel`)).not.toBeNull());
  const tag = 'pp';
  let running = true;
  const statuses: number[] = [];
  // Eight clients in a loop, before, during and after a pause of more than twice the 1 s command
  // timeout: requests admitted unreserved after an admission timed out are settled while Redis is
  // still paused, time out again, and run when the pause ends, before their replay.
  const clients = Array.from({ length: 8 }, async () => {
    while (running) statuses.push((await chat(t.url, KEY, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: tag }] })).status);
  });
  for (const pauseMs of [2_600]) {
    await sleep(200);
    await client.call('CLIENT', 'PAUSE', String(pauseMs), 'ALL');
    await sleep(pauseMs + 300);
  }
  running = false;
  await Promise.all(clients);
  expect(statuses.every((s) => s === 200)).toBe(true);
  const served = upstream.count(tag).requests;
  expect(served).toBe(statuses.length);
  // The pause was seen: commands timed out (one line each way).
  expect(t.logs.some((l) => l.msg === 'redis is unreachable')).toBe(true);
  // Queued settlements are replayed every second; once all are in, nothing more arrives.
  await eventually(async () => expect(await spent()).toBeGreaterThanOrEqual(served * COST_NANO), 10_000);
  await sleep(1_500);
  expect(await spent()).toBe(served * COST_NANO);
  client.disconnect();
}, 30_000);
