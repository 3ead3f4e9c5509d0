/**
 * The memory backend: spend and usage live in the SQLite file beside gateway.yaml, so a restart
 * and a reload keep them; a stream the client abandons is charged its prompt bound and what was
 * delivered.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeUpstream, startTestGateway, streamAnswer, type TestGateway } from 'switchyard-gateway/kit/testing';
import type { KeyReport } from '../../src/admin/report.ts';
import { adminGet, chat, eventually, startUsageUpstream, todayStart, type UsageUpstream } from './helpers.ts';

const ADMIN = 'sk-admin-memory-0123456789';
const KEY = 'sk-memory-budget-0123456789';
/** 18 prompt + 5 completion tokens at $1000/$2000 per million: $0.028 a request, reserved exactly (see shared-redis.test.ts). */
const COST = (18 * 1000 + 5 * 2000) / 1e6;

let upstream: UsageUpstream;
const slow = fakeUpstream(() =>
  streamAnswer(
    [
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'abcdefgh' }, finish_reason: null }] })}\n\n`,
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'never delivered' }, finish_reason: null }] })}\n\n`,
    ],
    { gapMs: 10_000 },
  ),
);
let t: TestGateway;

const yaml = (budgetUsd: number) =>
  [
    'keys:',
    `  - { name: saver, key: ${KEY}, models: ["*"], budget: { usd: ${budgetUsd}, period: total } }`,
    'admin:',
    `  keys: [{ name: ops, key: ${ADMIN} }]`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
    `  slow: { plugin: openai, baseUrl: "${slow.url}" }`,
    'models:',
    '  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }',
    '  s: { retry: { attempts: 1 }, targets: [{ provider: slow, model: house-model, price: { input: 1000, output: 2000 } }] }',
  ].join('\n');

beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 18, completion: 5 });
  await slow.start();
  t = await startTestGateway(yaml(5 * COST));
});
afterAll(async () => {
  await t?.close();
  await upstream.close();
  await slow.close();
});

const ask = (stream = false) => chat(t.url, KEY, { model: 'm', messages: [{ role: 'user', content: 'mm' }], max_tokens: 5, stream });
async function saver(): Promise<KeyReport> {
  const r = await adminGet(t.url, '/admin/v1/keys', ADMIN);
  expect(r.status).toBe(200);
  return r.body.data[0];
}
async function usageRequests(): Promise<number> {
  const r = await adminGet(t.url, `/admin/v1/usage?start_time=${todayStart() - 86_400}`, ADMIN);
  return r.body.data.reduce((n: number, b: { results: Array<{ num_model_requests: number }> }) => n + b.results.reduce((m, x) => m + x.num_model_requests, 0), 0);
}

describe('memory backend: spend kept in the SQLite file beside gateway.yaml', () => {
  it('a restart keeps what was spent and the usage records', async () => {
    expect((await Promise.all([ask(), ask(true), ask()])).map((a) => a.status)).toEqual([200, 200, 200]);
    await eventually(async () => expect((await saver()).budget!.spent_usd).toBeCloseTo(3 * COST, 12));
    await t.close();
    const file = path.join(t.dir, 'switchyard-state.sqlite');
    expect(existsSync(file)).toBe(true);
    t = await startTestGateway({ file: t.configFile });
    const after = await saver();
    expect(after.budget).toMatchObject({ usd: 5 * COST, spent_usd: expect.closeTo(3 * COST, 12), reserved_usd: 0, remaining_usd: expect.closeTo(2 * COST, 12) });
    expect(await usageRequests()).toBe(3);
    // Exactly the two requests left in the budget, then insufficient_quota.
    expect((await ask()).status).toBe(200);
    await eventually(async () => expect((await saver()).budget!.spent_usd).toBeCloseTo(4 * COST, 12));
    expect((await ask(true)).status).toBe(200);
    await eventually(async () => expect((await saver()).budget!.spent_usd).toBeCloseTo(5 * COST, 12));
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('insufficient_quota');
  });

  it('a reload that changes the budget keeps what was spent', async () => {
    writeFileSync(t.configFile, yaml(6 * COST));
    const outcome = await t.gateway.reload('test');
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    expect(readFileSync(t.configFile, 'utf8')).toContain(`usd: ${6 * COST}`);
    expect((await saver()).budget).toMatchObject({ usd: 6 * COST, spent_usd: expect.closeTo(5 * COST, 12), remaining_usd: expect.closeTo(COST, 12) });
    expect((await ask()).status).toBe(200);
    await eventually(async () => expect((await saver()).budget!.spent_usd).toBeCloseTo(6 * COST, 12));
    expect((await ask()).body.error.code).toBe('insufficient_quota');
  });
});

describe('a stream the client abandons', () => {
  it('is charged its prompt bound and the delivered text (4 characters a token), and recorded in the usage', async () => {
    const before = (await saver()).spent_usd!;
    await t.close();
    // A fresh budget large enough for the reservation (prompt bound + 100 output tokens).
    writeFileSync(t.configFile, yaml(1));
    t = await startTestGateway({ file: t.configFile });
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 's', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'abandon me' }] }),
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('abcdefgh');
    await reader.cancel();
    // Prompt bound: 8 to prime the reply + 8 of framing + 10 bytes = 26 tokens; delivered: 8 characters = 2 tokens.
    const charged = (26 * 1000 + 2 * 2000) / 1e6;
    await eventually(async () => expect((await saver()).budget!.spent_usd).toBeCloseTo(before + charged, 12));
    const usage = await adminGet(t.url, `/admin/v1/usage?start_time=${todayStart() - 86_400}&models=s`, ADMIN);
    expect(usage.body.data.flatMap((b: { results: unknown[] }) => b.results)).toMatchObject([
      { num_model_requests: 1, input_tokens: 26, output_tokens: 2, amount: { value: expect.closeTo(charged, 12) } },
    ]);
  });
});
