/**
 * Rotating a client key without losing its counters: one `keys:` entry with several secrets (a
 * list, and `previous` ones with an `until`). Through the official openai SDK on a real gateway:
 * every secret shares the key's one rpm window and one budget, usage stays under the one name,
 * and a previous secret past its `until` is refused with a 401 that says the key was rotated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { writeFileSync } from 'node:fs';
import { failureOf, startTestGateway, useTestGateway } from 'switchyard-gateway/kit/testing';
import { sha256Hex } from '../../src/runtime/keys.ts';
import { adminGet, eventually, startUsageUpstream, todayStart, type UsageUpstream } from './helpers.ts';

const NEW = 'sk-rot-new-0123456789';
const OLD = 'sk-rot-old-0123456789';
/** A previous secret still in its overlap, written as a hash. */
const OLDER = 'sk-rot-older-0123456789';
/** A previous secret whose overlap has ended. */
const RETIRED = 'sk-rot-retired-0123456789';
const BUDGET_NEW = 'sk-rot-budget-new-0123456789';
const BUDGET_OLD = 'sk-rot-budget-old-0123456789';
const OPS_KEY = 'sk-rot-admin-0123456789';
const SECRETS = [NEW, OLD, OLDER, RETIRED, BUDGET_NEW, BUDGET_OLD];

let upstream: UsageUpstream;
beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 10, completion: 5 });
});
afterAll(() => upstream.close());

const t = useTestGateway(() =>
  [
    'keys:',
    '  - name: rotating',
    `    key: [${NEW}, ${OLD}]`,
    '    previous:',
    `      - { keyHash: "sha256:${sha256Hex(OLDER)}", until: "2999-01-01T00:00:00Z" }`,
    `      - { key: ${RETIRED}, until: "2020-01-01T00:00:00Z" }`,
    '    limits: { rpm: 5 }',
    // gpt-4o at 10 prompt + 5 completion tokens costs $0.000075 a request: two fit, a third's reservation does not.
    '  - name: budgeted',
    `    keyHash: ["sha256:${sha256Hex(BUDGET_NEW)}"]`,
    `    previous: [{ key: ${BUDGET_OLD}, until: "2999-01-01T00:00:00Z" }]`,
    '    budget: { usd: 0.00018, period: total }',
    'admin:',
    `  keys: [{ name: ops, key: ${OPS_KEY} }]`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
    'models:',
    '  gpt: { targets: [{ provider: up, model: gpt-4o }] }',
  ].join('\n'),
);

const ask = (key: string, tag: string) => t.client(key).chat.completions.create({ model: 'gpt', max_tokens: 5, messages: [{ role: 'user', content: tag }] });

describe('key rotation keeps the counters on one key', () => {
  it('the current secrets and a previous one in its overlap share one rpm window: the 6th request of 5 rpm is refused, whichever secret sends it', async () => {
    for (const key of [OLD, OLD, OLDER, NEW, NEW]) expect((await ask(key, 'rpm')).choices[0].message.content).toBe('ok');
    const err = await failureOf(ask(NEW, 'rpm'));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.message).toContain('Rate limit reached for key rotating on requests per min (RPM): Limit 5, Used 5, Requested 1.');
    expect(upstream.count('rpm').requests).toBe(5);
  });

  it('and one budget: spent with the previous secret and the new one, the next request is over it', async () => {
    await ask(BUDGET_OLD, 'budget');
    await ask(BUDGET_NEW, 'budget');
    const err = await failureOf(ask(BUDGET_OLD, 'budget'));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('insufficient_quota');
    expect(err.message).toContain('key budgeted has used $0.00015 of its $0.00018 budget');
    expect(upstream.count('budget').requests).toBe(2);
  });

  it('a previous secret past its until: 401 invalid_api_key in the OpenAI envelope, saying the key was rotated, with a request id and no secret', async () => {
    const err = await failureOf(ask(RETIRED, 'retired'));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).toBe('401 This API key was rotated: it is a previous secret of the key "rotating" and stopped working at 2020-01-01T00:00:00.000Z. Use the key\'s new secret.');
    expect(err.requestID).toMatch(/\S/);
    expect(upstream.count('retired').requests).toBe(0);

    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${RETIRED}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'retired' }] }),
    });
    const text = await res.text();
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(JSON.parse(text)).toEqual({ error: { message: expect.stringContaining('was rotated'), type: 'authentication_error', param: null, code: 'invalid_api_key' } });
    for (const s of SECRETS) expect(text).not.toContain(s);

    // Anthropic clients (x-api-key on /v1/messages) get the same refusal in Anthropic's envelope.
    const messages = await fetch(`${t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': RETIRED, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt', max_tokens: 5, messages: [{ role: 'user', content: 'retired' }] }),
    });
    expect(messages.status).toBe(401);
    expect(messages.headers.get('request-id')).toMatch(/\S/);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('This API key was rotated') } });
    expect(upstream.count('retired').requests).toBe(0);
  });

  it('usage and spend stay under the one key name, and no secret reaches a log line', async () => {
    const since = `start_time=${todayStart() - 86_400}`;
    const usage = await eventually(async () => {
      const r = await adminGet(t.url, `/admin/v1/usage?${since}&group_by=key`, OPS_KEY);
      const rows = r.body.data.flatMap((b: { results: Array<Record<string, unknown>> }) => b.results);
      expect(rows.map((row: Record<string, unknown>) => [row.key, row.num_model_requests])).toEqual([
        ['budgeted', 2],
        ['rotating', 5],
      ]);
      return rows as Array<{ key: string; amount: { value: number } }>;
    });
    expect(usage.find((row) => row.key === 'budgeted')?.amount.value).toBeCloseTo(2 * 0.000075, 12);
    const logs = t.logText();
    expect(logs).toContain('"key":"rotating"');
    for (const s of [...SECRETS, ...SECRETS.map(sha256Hex)]) expect(logs).not.toContain(s);
  });
});

describe('a rotation applied by a reload', () => {
  it('keeps the rpm window the old secret used: the new secret continues it, and ending the overlap refuses the old one as rotated', async () => {
    const config = (keyLines: string[]) =>
      [
        'keys:',
        '  - name: reloaded',
        ...keyLines,
        '    limits: { rpm: 3 }',
        'providers:',
        `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
        'models:',
        '  gpt: { targets: [{ provider: up, model: gpt-4o }] }',
      ].join('\n');
    const gateway = await startTestGateway(config([`    key: ${OLD}`]));
    try {
      const send = (key: string) => gateway.client(key).chat.completions.create({ model: 'gpt', max_tokens: 5, messages: [{ role: 'user', content: 'reload' }] });
      await send(OLD);
      await send(OLD);

      writeFileSync(gateway.configFile, config([`    keyHash: "sha256:${sha256Hex(NEW)}"`, `    previous: [{ key: ${OLD}, until: "2999-01-01T00:00:00Z" }]`]));
      expect((await gateway.gateway.reload()).ok).toBe(true);
      await send(NEW);
      for (const key of [NEW, OLD]) expect((await failureOf(send(key))).code, key).toBe('rate_limit_exceeded');
      expect(upstream.count('reload').requests).toBe(3);

      writeFileSync(gateway.configFile, config([`    keyHash: "sha256:${sha256Hex(NEW)}"`, `    previous: [{ key: ${OLD}, until: "2020-01-01T00:00:00Z" }]`]));
      expect((await gateway.gateway.reload()).ok).toBe(true);
      const err = await failureOf(send(OLD));
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(err.message).toContain('This API key was rotated: it is a previous secret of the key "reloaded"');
    } finally {
      await gateway.close();
    }
  });
});
