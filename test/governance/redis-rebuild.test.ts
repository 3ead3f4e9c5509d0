/**
 * Redis loses its data under a budgeted key (FLUSHALL; a restart without persistence) while the
 * real gateway serves, in front of an upstream with an exact price per request that counts what
 * it served: the gateway notices (the sentinel key is gone), refuses budgeted keys until period
 * spend is rebuilt from the request ledger (SQLite state file, then a real PostgreSQL), says so
 * loudly and counts it, and then admits exactly what the budget has left: never more. Needs a
 * real redis-server and PostgreSQL; fails, never skips, without them.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { chat, eventually, startUsageUpstream, type UsageUpstream } from './helpers.ts';

/**
 * 18 prompt and 5 completion tokens per answer; a two-byte message with max_tokens 5 reserves
 * exactly that (see shared-redis.test.ts), so at $1000/$2000 per million a request reserves and
 * costs $0.028 and a budget of K requests holds exactly K.
 */
const COST = (18 * 1000 + 5 * 2000) / 1e6;
const K = 6;
const SOLO = 'sk-rebuild-solo-0123456789';
const TEAMED = 'sk-rebuild-teamed-0123456789';

let redis: RedisServer;
let upstream: UsageUpstream;
let postgres: PostgresServer;

beforeAll(async () => {
  [redis, upstream, postgres] = await Promise.all([startRedisServer(), startUsageUpstream({ prompt: 18, completion: 5 }), startPostgres()]);
}, 90_000);
afterAll(async () => {
  await upstream?.close();
  await redis?.stop('SIGTERM');
  await postgres?.destroy();
});

let databases = 0;
const ENGINES = [
  { name: 'SQLite', ledger: async () => '{ enabled: true, flushMs: 20 }' },
  { name: 'PostgreSQL', ledger: async () => `{ flushMs: 20, postgres: { url: "${await postgres.createDatabase(`rebuild_${++databases}`)}" } }` },
];

function configOf(ledger: string, prefix: string): string {
  return [
    `state: { backend: redis, redis: { url: "${redis.url}", prefix: "${prefix}" }, onUnavailable: closed, ledger: ${ledger} }`,
    'metrics: { auth: false }',
    'teams:',
    `  lab: { budget: { usd: ${K * COST}, period: monthly } }`,
    'keys:',
    `  - { name: solo, key: ${SOLO}, models: ["*"], budget: { usd: ${K * COST}, period: daily } }`,
    `  - { name: teamed, key: ${TEAMED}, team: lab, models: ["*"] }`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
    'models:',
    '  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }',
  ].join('\n');
}

describe.each(ENGINES)('redis counters rebuilt from the $name ledger', (engine) => {
  let t: TestGateway;
  let prefix: string;
  beforeAll(async () => {
    prefix = `rb${++databases}:`;
    t = await startTestGateway(configOf(await engine.ledger(), prefix));
    // A first start writes the sentinel once its check (of an empty ledger) is done.
    const client = new Redis(redis.url);
    await eventually(async () => expect(await client.get(`${prefix}sentinel`)).not.toBeNull());
    client.disconnect();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Sends requests tagged `tag` (two bytes) one at a time until one is refused for the budget; returns the statuses. */
  async function spendAll(key: string, tag: string): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < 3 * K; i++) {
      const answer = await chat(t.url, key, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: tag }] });
      statuses.push(answer.status);
      if (answer.status === 429) {
        expect(answer.body.error.code).toBe('insufficient_quota');
        break;
      }
      // A refusal while the counters are rebuilt (closed): wait a little and try again.
      if (answer.status === 503) await new Promise((r) => setTimeout(r, 50));
    }
    return statuses;
  }

  const ask = (key: string, tag: string) => chat(t.url, key, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: tag }] });
  const rebuiltLines = () => t.logs.filter((l) => l.level === 40 && /rebuilt from the request ledger/.test(l.msg));

  it('FLUSHALL under a budgeted key: refused until rebuilt, then exactly the budget, logged and counted', async () => {
    const tag = engine.name === 'SQLite' ? 'f1' : 'f2';
    for (let i = 0; i < 3; i++) expect((await ask(SOLO, tag)).status).toBe(200);
    const client = new Redis(redis.url);
    await client.flushall();
    client.disconnect();
    // The first admission after the loss finds the sentinel gone: budgeted keys wait (onUnavailable: closed).
    const during = await ask(SOLO, tag);
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('limits_unavailable');
    const statuses = await spendAll(SOLO, tag);
    // Exactly K served in all, though Redis forgot the first 3: never over budget.
    expect(upstream.count(tag).requests).toBe(K);
    expect(statuses.filter((s) => s === 200)).toHaveLength(K - 3);
    expect(statuses.at(-1)).toBe(429);
    const [line] = await eventually(() => {
      const lines = rebuiltLines();
      expect(lines).toHaveLength(1);
      return lines;
    });
    expect(line).toMatchObject({ keys: ['solo'], keyCount: 1, totalUsd: expect.closeTo(3 * COST, 9) });
    expect(line!.msg).toMatch(/sentinel key disappeared/);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^switchyard_state_data_losses_total 1$/m);
    expect(metrics).toMatch(/^switchyard_state_rebuilds_total 1$/m);
  });

  it("a redis-server restart without persistence: a team's budget is rebuilt the same way", async () => {
    const tag = engine.name === 'SQLite' ? 'r1' : 'r2';
    for (let i = 0; i < 4; i++) expect((await ask(TEAMED, tag)).status).toBe(200);
    await redis.stop();
    await redis.start();
    const statuses = await spendAll(TEAMED, tag);
    expect(upstream.count(tag).requests).toBe(K);
    expect(statuses.filter((s) => s === 200)).toHaveLength(K - 4);
    expect(statuses.at(-1)).toBe(429);
    const lines = await eventually(() => {
      const found = rebuiltLines();
      expect(found).toHaveLength(2);
      return found;
    });
    expect(lines[1]).toMatchObject({ teams: ['lab'], keys: expect.arrayContaining(['solo', 'teamed']) });
  });
});

describe('a fleet of two instances on one PostgreSQL ledger', () => {
  const fleet: TestGateway[] = [];
  const prefix = 'fleet:';
  beforeAll(async () => {
    const ledger = `{ flushMs: 20, postgres: { url: "${await postgres.createDatabase('rebuild_fleet')}" } }`;
    fleet.push(await startTestGateway(configOf(ledger, prefix)), await startTestGateway(configOf(ledger, prefix)));
    const client = new Redis(redis.url);
    await eventually(async () => expect(await client.get(`${prefix}sentinel`)).not.toBeNull());
    client.disconnect();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(fleet.map((g) => g.close()));
  });

  it('FLUSHALL: one instance rebuilds (the lock), the other waits for it, and the budget holds across both', async () => {
    const tag = 'ff';
    const ask = (i: number) => chat(fleet[i % 2]!.url, SOLO, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: tag }] });
    for (let i = 0; i < 2; i++) expect((await ask(i)).status).toBe(200);
    const client = new Redis(redis.url);
    await client.flushall();
    client.disconnect();
    // Both instances notice at once (each asks); then they share what the budget has left.
    const statuses: number[] = [];
    for (let i = 0; statuses.filter((s) => s === 429).length < 2 && i < 100; i++) {
      const answer = await ask(i);
      statuses.push(answer.status);
      if (answer.status === 503) await new Promise((r) => setTimeout(r, 30));
    }
    expect(upstream.count(tag).requests).toBe(K);
    const rebuilt = fleet.flatMap((g) => g.logs.filter((l) => l.level === 40 && /rebuilt from the request ledger/.test(l.msg)));
    expect(rebuilt).toHaveLength(1);
    expect(rebuilt[0]).toMatchObject({ keys: ['solo'], totalUsd: expect.closeTo(2 * COST, 9) });
  });
});
