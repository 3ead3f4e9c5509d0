/**
 * Retries, backoff, Retry-After, budgets and timeouts, driven by a fault-injecting fake upstream
 * through the real gateway with the official SDK (its own retries off). Time and randomness are
 * injected, so waits are asserted exactly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { DEV_KEY, expectValid, failureOf, FakeClock, fakeUpstream, loadFixture, logLineFor, replay, splitStream, useTestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const ok = () => replay(f('chat-basic'));
const serverError = () => replay(f('error-500-server-error'));

const clock = new FakeClock(7);
const a = fakeUpstream(ok);
const b = fakeUpstream(ok);
const t = useTestGateway(
  () =>
    configYaml({
      providers: `  a: { plugin: openai, baseUrl: "${a.url}/v1" }\n  b: { plugin: openai, baseUrl: "${b.url}/v1" }`,
      models: [
        '  backoff: { retry: { attempts: 3, backoff: { initialMs: 100, maxMs: 150, multiplier: 2 } }, targets: [{ provider: a, model: m }] }',
        '  pair: { retry: { attempts: 2, maxRetryAfterMs: 2000 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  no-retry: { retry: { attempts: 3, retryOn: [] }, targets: [{ provider: a, model: m }] }',
        '  only-429: { retry: { attempts: 3, retryOn: [429] }, targets: [{ provider: a, model: m }] }',
        '  slow-headers: { retry: { attempts: 1 }, timeout: { firstByteMs: 150 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  all-slow: { retry: { attempts: 1 }, timeout: { firstByteMs: 150 }, targets: [{ provider: a, model: m }] }',
        '  stalls: { retry: { attempts: 1 }, timeout: { idleMs: 150 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  total: { retry: { attempts: 1 }, timeout: { totalMs: 200 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  budget: { retry: { attempts: 3, budgetMs: 250, backoff: { initialMs: 1, maxMs: 1 } }, timeout: { firstByteMs: 100000 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  per-target: { retry: { attempts: 1 }, targets: [{ provider: a, model: m, retry: { attempts: 3, backoff: { initialMs: 10, maxMs: 10 } } }, { provider: b, model: m }] }',
      ].join('\n'),
    }),
  { upstreams: [a, b], clock },
);
afterEach(() => {
  clock.sleeps.length = 0;
});

const ask = (model: string) =>
  t
    .client()
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
    .withResponse();
const fail = (model: string) =>
  t
    .client()
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
    .then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );

describe('retry and backoff', () => {
  it('retries 5xx with exponential backoff and full jitter, capped at maxMs', async () => {
    a.setHandler((_r, i) => (i < 2 ? serverError() : ok()));
    const probe = new FakeClock(7);
    const expected = [Math.round(probe.random() * 100), Math.round(probe.random() * 150)];
    const { response } = await ask('backoff');
    expect(response.headers.get('x-switchyard-attempts')).toBe('3');
    expect(clock.sleeps).toEqual(expected);
    expect(a.requests).toHaveLength(3);
  });

  it('honours retry-after-ms, retry-after seconds and retry-after as an HTTP date', async () => {
    const limited = (headers: Record<string, string>) => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', ...headers } });
    a.setHandler((_r, i) => (i === 0 ? limited({ 'retry-after-ms': '1500' }) : ok()));
    await ask('pair');
    a.reset();
    a.setHandler((_r, i) => (i === 0 ? limited({ 'retry-after': '1' }) : ok()));
    await ask('pair');
    a.reset();
    const date = new Date(Date.now() + 2000).toUTCString();
    a.setHandler((_r, i) => (i === 0 ? limited({ 'retry-after': date }) : ok()));
    await ask('pair');
    expect(clock.sleeps.slice(0, 2)).toEqual([1500, 1000]);
    expect(clock.sleeps[2]).toBeGreaterThan(500);
    expect(clock.sleeps[2]).toBeLessThanOrEqual(2000);
    expect(b.requests).toHaveLength(0);
  });

  it('a Retry-After above the cap is not waited for: the next target answers at once', async () => {
    a.setHandler(() => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '60' } }));
    const { response } = await ask('pair');
    expect(clock.sleeps).toEqual([]);
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
  });

  it('retryOn decides what is retried', async () => {
    a.setHandler(serverError);
    expect((await fail('no-retry'))!.status).toBe(502);
    expect(a.requests).toHaveLength(1);
    a.reset();
    expect((await fail('only-429'))!.status).toBe(502);
    expect(a.requests).toHaveLength(1);
  });

  it('a target can override the alias retry policy', async () => {
    a.setHandler((_r, i) => (i < 2 ? serverError() : ok()));
    const { response } = await ask('per-target');
    expect(response.headers.get('x-switchyard-provider')).toBe('a');
    expect(a.requests).toHaveLength(3);
  });

  it('connection resets and malformed bodies are retried, then fail over', async () => {
    a.setHandler((_r, i) => (i === 0 ? { reset: true } : { status: 200, body: '{"choices": [' }));
    const { data, response } = await ask('pair');
    expect(data.choices[0].message.content).toBe('The capital of France is Paris.');
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
    expect(a.requests).toHaveLength(2);
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line.attemptLog.map((x: { provider: string; outcome: string }) => `${x.provider}:${x.outcome}`)).toEqual(['a:error', 'a:error', 'b:ok']);
  });

  it('a 402 (billing) is the operator problem: no retry, the next target serves', async () => {
    a.setHandler(() => ({ status: 402, body: { type: 'error', error: { type: 'billing_error', message: 'Your credit balance is too low.' } } }));
    const { response } = await ask('pair');
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
    expect(a.requests).toHaveLength(1);
  });

  it('never retries the client mistakes: 400 from the upstream, unknown model, bad key', async () => {
    a.setHandler(() => replay(f('error-400-unsupported-value')));
    expect((await fail('pair'))!.status).toBe(400);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(0);
    expect((await fail('nope'))!.status).toBe(404);
    const bad = await failureOf(t.client('sk-not-a-key-000').chat.completions.create({ model: 'pair', messages: [{ role: 'user', content: 'x' }] }));
    expect(bad.status).toBe(401);
    expect(a.requests).toHaveLength(1);
  });
});

describe('timeouts', () => {
  // undici checks its headers timeout (firstByteMs) on a coarse clock, up to about a second late:
  // the slow target answers after 5 s, which no busy machine turns into an answer in time.
  it('first byte: a target slower than firstByteMs is abandoned for the next one', async () => {
    a.setHandler(() => ({ ...ok(), delayMs: 5000 }));
    const { response } = await ask('slow-headers');
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line.attemptLog[0]).toMatchObject({ provider: 'a', outcome: 'error', error: 'a: no response within 150 ms (timeout.firstByteMs)' });
  });

  it('a timeout on the last target is a 504 timeout', async () => {
    a.setHandler(() => ({ ...ok(), delayMs: 5000 }));
    const err = await fail('all-slow');
    expect(err!.status).toBe(504);
    expect(err!.code).toBe('timeout');
    expectValid('ErrorResponse', { error: err!.error });
  });

  it('total: an attempt that does not complete in totalMs fails over', async () => {
    a.setHandler(() => ({ status: 200, chunks: ['{"id":"x",', '"choices":[]}'], gapMs: 1000, headers: { 'content-type': 'application/json' } }));
    const { response } = await ask('total');
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
  });

  it('idle gap: a stream stalling before its first chunk fails over; after it, the client gets an in-stream error', async () => {
    const chunks = splitStream(f('stream-tool-call'));
    a.setHandler(() => ({ status: 200, chunks, gapMs: 1000 }));
    // The first chunk arrives at once, the second after 1 s > idleMs: committed, so in-stream.
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stalls', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(res.status).toBe(200);
    expect(events).toHaveLength(3);
    const error = JSON.parse(events[1].slice('data: '.length));
    expect(error.error).toMatchObject({ code: 'timeout', message: 'a: the answer stalled for 150 ms (timeout.idleMs)' });
    expect(events[2]).toBe('data: [DONE]');

    a.setHandler(() => ({ status: 200, chunks: [': keep-alive comment\n\n', ...chunks], gapMs: 1000 }));
    b.setHandler(() => replay(f('stream-tool-call')));
    const stream = await t
      .client()
      .chat.completions.create({ model: 'stalls', stream: true, messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(stream.response.headers.get('x-switchyard-provider')).toBe('b');
  });

  it('budget: retries and fallbacks stop at budgetMs, attempts cut to fit', async () => {
    a.setHandler(() => ({ ...ok(), delayMs: 2000 }));
    b.setHandler(() => ({ ...ok(), delayMs: 2000 }));
    const err = await fail('budget');
    expect(err!.status).toBe(504);
    expect(err!.code).toBe('timeout');
    // One cut attempt used the whole budget: no retry and no fallback started after it.
    expect(a.requests.length + b.requests.length).toBe(1);
  });
});
