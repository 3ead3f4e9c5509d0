/**
 * An upstream that answers without a usage report (older vLLM, Ollama or LM Studio builds, some
 * proxies) is not free: the request is charged its prompt estimate and the answer's text at four
 * characters a token, recorded in the usage and counted against the budget.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fakeUpstream, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { adminGet, chat, eventually, todayStart } from './helpers.ts';

const ADMIN = 'sk-admin-no-usage-0123456789';
const KEY = 'sk-no-usage-budget-0123456789';
/** 12 characters: 3 output tokens. */
const ANSWER = 'abcdefghijkl';

const upstream = fakeUpstream(() => ({
  status: 200,
  body: { id: 'c1', object: 'chat.completion', created: 1, model: 'house-model', choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }] },
}));
let t: TestGateway;

beforeAll(async () => {
  await upstream.start();
  t = await startTestGateway(`keys:
  - { name: frugal, key: ${KEY}, models: ["*"], budget: { usd: 0.1, period: total } }
admin:
  keys: [{ name: ops, key: ${ADMIN} }]
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}" }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }
`);
});
afterAll(async () => {
  await t.close();
  await upstream.close();
});

it('charges an answer without usage its prompt estimate and its text, and the budget runs out', async () => {
  const ask = () => chat(t.url, KEY, { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] });
  const first = await ask();
  expect(first.status).toBe(200);
  expect(first.body.choices[0].message.content).toBe(ANSWER);
  const usage = await eventually(async () => {
    const page = await adminGet(t.url, `/admin/v1/usage?start_time=${todayStart() - 86_400}&models=m`, ADMIN);
    const [row] = page.body.data.flatMap((b: { results: unknown[] }) => b.results);
    expect(row).toMatchObject({ num_model_requests: 1, output_tokens: 3 });
    return row;
  });
  expect(usage.input_tokens).toBeGreaterThan(0);
  expect(usage.amount.value).toBeCloseTo((usage.input_tokens * 1000 + 3 * 2000) / 1e6, 12);
  // Each answer costs about $0.03 of the $0.10: the budget refuses before ten are served.
  const answers = [];
  for (let i = 0; i < 10; i++) answers.push(await ask());
  expect(answers.filter((a) => a.status === 200).length).toBeLessThan(5);
  expect(answers.at(-1)).toMatchObject({ status: 429, body: { error: { code: 'insufficient_quota' } } });
});
