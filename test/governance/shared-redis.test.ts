/**
 * Three real gateway processes (`switchyard --config ... --port 0`) sharing one real redis-server,
 * in front of one upstream that reports fixed usage: limits and budgets hold across the three
 * exactly, spend survives restarts and reloads, and a Redis outage follows `state.onUnavailable`
 * (two instances closed, one open) without crashing anything. Fails, never skips, when
 * redis-server is not installed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import type { KeyReport } from '../../src/admin/report.ts';
import { adminGet, chat, eventually, spawnGateway, startUsageUpstream, type Answer, type GatewayProcess, type UsageUpstream } from './helpers.ts';

const ADMIN = 'sk-admin-shared-0123456789';
const KEY = {
  burst: 'sk-burst-0123456789',
  ads1: 'sk-ads-one-0123456789',
  ads2: 'sk-ads-two-0123456789',
  tokens: 'sk-tokens-0123456789',
  conc: 'sk-conc-0123456789',
  budget: 'sk-budget-0123456789',
  steady: 'sk-steady-0123456789',
  free: 'sk-free-0123456789',
};

/**
 * Every answer: 18 prompt and 5 completion tokens. A two-byte message with max_tokens 5 reserves
 * exactly that (8 to prime the reply + 8 of framing + 2 bytes; 5 out), so at `price: { input:
 * 1000, output: 2000 }` a request reserves and costs the same: 18×1000/1e6 + 5×2000/1e6 = $0.028.
 */
const USAGE = { prompt: 18, completion: 5 };
const COST = (18 * 1000 + 5 * 2000) / 1e6;
const K = 7;
const BUDGET = K * COST; // $0.196

function config(onUnavailable: 'closed' | 'open', redisUrl: string, upstreamUrl: string, budgetUsd: number): string {
  return [
    `state: { backend: redis, redis: { url: "${redisUrl}" }, onUnavailable: ${onUnavailable} }`,
    'log: { level: info, format: json }',
    'teams:',
    '  ads: { limits: { rpm: 6 } }',
    'keys:',
    `  - { name: burst, key: ${KEY.burst}, models: ["*"], limits: { rpm: 10 } }`,
    `  - { name: ads-1, key: ${KEY.ads1}, team: ads, models: ["*"] }`,
    `  - { name: ads-2, key: ${KEY.ads2}, team: ads, models: ["*"] }`,
    `  - { name: tokens, key: ${KEY.tokens}, models: ["*"], limits: { tpm: 200 } }`,
    `  - { name: conc, key: ${KEY.conc}, models: ["*"], limits: { concurrency: 3 } }`,
    `  - { name: budget, key: ${KEY.budget}, models: ["*"], budget: { usd: ${budgetUsd}, period: total } }`,
    `  - { name: steady, key: ${KEY.steady}, models: ["*"], limits: { rpm: 100000 } }`,
    `  - { name: free, key: ${KEY.free}, models: ["*"] }`,
    'admin:',
    `  keys: [{ name: ops, key: ${ADMIN} }]`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstreamUrl}" }`,
    'models:',
    '  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }',
  ].join('\n');
}

let redis: RedisServer;
let upstream: UsageUpstream;
let dir: string;
/** A and B close on a Redis outage, C stays open. */
let files: { closed: string; open: string };
let gateways: GatewayProcess[] = [];

function writeConfigs(budgetUsd: number): void {
  writeFileSync(files.closed, config('closed', redis.url, upstream.baseUrl, budgetUsd));
  writeFileSync(files.open, config('open', redis.url, upstream.baseUrl, budgetUsd));
}

/** A and B (closed) and C (open), each once its listening line is out and its admin API reads Redis. */
async function startThree(): Promise<GatewayProcess[]> {
  const three = await Promise.all([spawnGateway(files.closed), spawnGateway(files.closed), spawnGateway(files.open)]);
  // Connecting to Redis may outlast startup on a loaded machine; the instance then reconnects by itself.
  for (const g of three) await eventually(async () => expect((await adminGet(g.url, '/admin/v1/keys', ADMIN)).status).toBe(200), 15_000);
  return three;
}

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startRedisServer(), startUsageUpstream(USAGE)]);
  dir = mkdtempSync(path.join(tmpdir(), 'switchyard-shared-redis-'));
  files = { closed: path.join(dir, 'gateway.yaml'), open: path.join(dir, 'gateway-open.yaml') };
  writeConfigs(BUDGET);
  gateways = await startThree();
}, 120_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
  await upstream?.close();
  await redis?.stop();
});

/** `n` requests at once, spread round-robin over the instances (and over `keys`). */
function burst(n: number, keys: string[], tag: string, extra: Record<string, unknown> = {}): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) => chat(gateways[i % gateways.length]!.url, keys[i % keys.length]!, { model: 'm', messages: [{ role: 'user', content: tag }], max_tokens: 5, ...extra })),
  );
}

/** How many answers of each status. */
function statuses(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

async function keyReport(name: string, via = gateways[0]!): Promise<KeyReport> {
  const r = await adminGet(via.url, '/admin/v1/keys', ADMIN);
  expect(r.status, r.text).toBe(200);
  return r.body.data.find((k: KeyReport) => k.name === name);
}

describe('limits across three instances sharing one Redis', () => {
  it('rpm: a burst of 30 over the three admits exactly 10; the other 20 get 429 with OpenAI headers', async () => {
    const answers = await burst(30, [KEY.burst], 'b1');
    expect(statuses(answers)).toEqual({ 200: 10, 429: 20 });
    expect(upstream.count('b1').requests).toBe(10);
    // Each admission saw its own count: the remaining figures of the ten are 9, 8, ..., 0.
    const remaining = answers.filter((a) => a.status === 200).map((a) => Number(a.headers.get('x-ratelimit-remaining-requests')));
    expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const a of answers) expect(a.headers.get('x-ratelimit-limit-requests')).toBe('10');
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests', param: null });
      expect(a.body.error.message).toMatch(/^Rate limit reached for key burst on requests per min \(RPM\): Limit 10, Used 10, Requested 1\. Please try again in [\d.]+m?s\.$/);
      expect(a.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(a.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|(\d+m)?[\d.]+s)$/); // OpenAI's format: 250ms, 6.5s, 1m0s
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(a.headers.get('retry-after-ms'))).toBeGreaterThan(0);
      expect(Number(a.headers.get('retry-after-ms'))).toBeLessThanOrEqual(60_000);
    }
  });

  it("a team's rpm holds over its keys and the three instances: 20 requests from two keys, exactly 6 admitted", async () => {
    const answers = await burst(20, [KEY.ads1, KEY.ads2], 't1');
    expect(statuses(answers)).toEqual({ 200: 6, 429: 14 });
    expect(upstream.count('t1').requests).toBe(6);
    for (const a of answers.filter((x) => x.status === 429)) expect(a.body.error.message).toContain('Rate limit reached for team ads on requests per min (RPM): Limit 6');
  });

  it('tpm: the tokens admitted in the window never pass the limit (reserved as an upper bound, settled to real usage)', async () => {
    // Reserves 8 + 8 + 2 prompt + 20 output = 38 tokens; settles to 23.
    const answers = await burst(20, [KEY.tokens], 'k1', { max_tokens: 20 });
    const admitted = answers.filter((a) => a.status === 200).length;
    // Five reservations fit at once (5 × 38 = 190); settled requests free room, never past 200.
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted * 23).toBeLessThanOrEqual(200);
    expect(upstream.count('k1').requests).toBe(admitted);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'tokens' });
      expect(a.headers.get('x-ratelimit-limit-tokens')).toBe('200');
    }
    const report = await eventually(async () => {
      const k = await keyReport('tokens', gateways[2]);
      expect(k.tokens!.remaining).toBe(200 - admitted * 23);
      return k;
    });
    expect(report.tokens!.limit).toBe(200);
  });

  it('concurrency: the upstream never sees more than 3 of the key in flight at once', async () => {
    upstream.delay('c1', 300);
    const answers = await burst(15, [KEY.conc], 'c1');
    const counted = upstream.count('c1');
    expect(counted.maxInFlight).toBeLessThanOrEqual(3);
    expect(counted.maxInFlight).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status === 200).length).toBe(counted.requests);
    for (const a of answers.filter((x) => x.status === 429)) expect(a.body.error.message).toMatch(/^Concurrency limit reached for key conc: Limit 3 requests in flight/);
    await eventually(async () => expect((await keyReport('conc', gateways[1])).concurrency).toEqual({ limit: 3, in_flight: 0 }));
  });

  it(`a budget that allows exactly ${K} requests admits ${K} over the three, streamed and plain mixed`, async () => {
    const outcomes = await Promise.all(gateways.map((g, worker) => spendUntilRefused(g, worker)));
    const served = outcomes.reduce((n, o) => n + o.served, 0);
    expect(served).toBe(K);
    expect(upstream.count('bg').requests).toBe(K);
    expect(upstream.count('bg').streamed).toBeGreaterThan(0);
    expect(upstream.count('bg').streamed).toBeLessThan(K);
    for (const o of outcomes) {
      expect(o.final.status).toBe(429);
      expect(o.final.body.error).toMatchObject({ code: 'insufficient_quota', type: 'insufficient_quota' });
      expect(o.final.body.error.message).toBe('You exceeded your current quota: key budget has used $0.20 of its $0.20 budget, and this request may cost up to $0.03.');
      expect(o.final.headers.get('x-should-retry')).toBe('false');
    }
    const k = await eventually(async () => {
      const r = await keyReport('budget', gateways[2]);
      expect(r.budget!.reserved_usd).toBe(0);
      return r;
    });
    expect(k.budget).toEqual({ usd: BUDGET, period: 'total', spent_usd: expect.closeTo(BUDGET, 12), reserved_usd: 0, remaining_usd: 0, resets_at: null });
  });
});

/**
 * One client per instance spending the budget key: plain and streamed in turn; a 429 that says
 * the budget is only held by requests in flight is retried, insufficient_quota ends it.
 */
async function spendUntilRefused(g: GatewayProcess, worker: number): Promise<{ served: number; final: Answer }> {
  let served = 0;
  for (let i = 0; i < 100; i++) {
    const a = await chat(g.url, KEY.budget, { model: 'm', messages: [{ role: 'user', content: 'bg' }], max_tokens: 5, stream: (i + worker) % 2 === 1 });
    if (a.status === 200) served++;
    else if (a.status === 429 && a.body.error.code === 'rate_limit_exceeded') await sleep(10);
    else return { served, final: a };
  }
  throw new Error('the budget was never refused');
}

describe('spend kept across restarts and reloads (Redis)', () => {
  it('all three stopped and started again: the spent budget is still spent', async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    gateways = await startThree();
    const k = await keyReport('budget', gateways[1]);
    expect(k.budget!.spent_usd).toBeCloseTo(BUDGET, 12);
    const refused = await chat(gateways[0]!.url, KEY.budget, { model: 'm', messages: [{ role: 'user', content: 'bg' }], max_tokens: 5 });
    expect(refused.body.error.code).toBe('insufficient_quota');
  }, 120_000);

  it('a reload that raises the budget by two requests keeps what was spent: exactly 2 more are admitted', async () => {
    writeConfigs(BUDGET + 2 * COST);
    for (const g of gateways) g.child.kill('SIGHUP');
    for (const g of gateways) await eventually(async () => expect((await keyReport('budget', g)).budget!.usd).toBeCloseTo(BUDGET + 2 * COST, 12));
    const k = await keyReport('budget');
    expect(k.budget!.spent_usd).toBeCloseTo(BUDGET, 12);
    expect(k.budget!.remaining_usd).toBeCloseTo(2 * COST, 12);
    const before = upstream.count('bg').requests;
    const outcomes = await Promise.all(gateways.map((g, worker) => spendUntilRefused(g, worker)));
    expect(outcomes.reduce((n, o) => n + o.served, 0)).toBe(2);
    expect(upstream.count('bg').requests - before).toBe(2);
    for (const g of gateways) await eventually(() => expect(g.output()).toMatch(/reloaded gateway(-open)?\.yaml \(generation 2\): keys ~budget/));
  });
});

describe('Redis killed and restarted mid-run', () => {
  it('closed instances answer 503 for limited keys, the open one serves, unlimited keys are served, nothing crashes, all recover', async () => {
    const [a, b, c] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
    const ask = (g: GatewayProcess, key: string, tag: string, stream = false) => chat(g.url, key, { model: 'm', messages: [{ role: 'user', content: tag }], max_tokens: 5, stream });
    // Requests admitted before the outage, still upstream when Redis dies: they finish normally.
    const release = upstream.hold('mid');
    const inFlight = gateways.flatMap((g) => [ask(g, KEY.steady, 'mid'), ask(g, KEY.steady, 'mid', true)]);
    await eventually(() => expect(upstream.count('mid').inFlight).toBe(6));
    await redis.stop();
    release();
    expect(statuses(await Promise.all(inFlight))).toEqual({ 200: 6 });

    for (const g of [a, b]) {
      const r = await ask(g, KEY.steady, 'down');
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'limits_unavailable', type: 'service_unavailable_error' });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect((await ask(c, KEY.steady, 'down')).status).toBe(200);
    for (const g of gateways) expect((await ask(g, KEY.free, 'down-free')).status).toBe(200);
    for (const g of gateways) {
      const r = await adminGet(g.url, '/admin/v1/keys', ADMIN);
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('limits_unavailable');
      expect(r.text).not.toContain(String(redis.port));
    }
    expect(upstream.count('down').requests).toBe(1);

    await redis.start();
    for (const g of [a, b]) await eventually(async () => expect((await ask(g, KEY.steady, 'back')).status).toBe(200), 15_000);
    // Each instance reconnects on its own schedule (100 ms doubling to 2 s).
    for (const g of gateways) await eventually(async () => expect((await adminGet(g.url, '/admin/v1/keys', ADMIN)).status).toBe(200), 10_000);
    for (const g of gateways) {
      expect(g.alive()).toBe(true);
      // One line per transition, not one per request.
      const lost = g
        .output()
        .split('\n')
        .filter((l) => l.includes('redis is unreachable'));
      expect(lost.length).toBeGreaterThanOrEqual(1);
      expect(lost.length).toBeLessThanOrEqual(3);
      // Log lines are written in batches: the last ones may still be on their way.
      await eventually(() => expect(g.output()).toContain('redis is reachable again'));
    }
  }, 30_000);
});
