/** Routing strategies, cooldowns with half-open probes, and failure-specific fallbacks. */
import { describe, expect, it } from 'vitest';
import { failureOf, FakeClock, fakeUpstream, loadFixture, logLineFor, replay, useTestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
const ok = () => replay(f('chat-basic'));
const serverError = () => replay(f('error-500-server-error'));

const clock = new FakeClock(2024);
const a = fakeUpstream(ok);
const b = fakeUpstream(ok);
const t = useTestGateway(
  () =>
    configYaml({
      providers: `  a: { plugin: openai, baseUrl: "${a.url}/v1" }\n  b: { plugin: openai, baseUrl: "${b.url}/v1" }\n  mock: { plugin: mock }`,
      models: [
        '  weighted: { strategy: weighted, targets: [{ provider: mock, model: heavy, weight: 3 }, { provider: mock, model: light, weight: 1 }] }',
        '  fastest: { strategy: least-latency, retry: { attempts: 1 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  idlest: { strategy: least-busy, retry: { attempts: 1 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  breaker: { retry: { attempts: 1 }, cooldown: { failures: 2, windowMs: 10000, durationMs: 5000 }, targets: [{ provider: a, model: m }, { provider: b, model: m }] }',
        '  lonely: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 10000, durationMs: 7000 }, targets: [{ provider: a, model: m }] }',
        '  small: { retry: { attempts: 1 }, fallbacks: { contextWindow: [big], contentPolicy: [lenient] }, targets: [{ provider: a, model: small-ctx }] }',
        '  big: { targets: [{ provider: b, model: big-ctx }] }',
        '  lenient: { targets: [{ provider: mock, model: lenient-1 }] }',
      ].join('\n'),
    }),
  { upstreams: [a, b], clock },
);

const ask = (model: string) =>
  t
    .client()
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
    .withResponse();
const providerOf = async (model: string) => (await ask(model)).response.headers.get('x-switchyard-provider');

describe('strategies', () => {
  it('weighted: traffic follows the weights (seeded, 800 requests)', async () => {
    const counts: Record<string, number> = { heavy: 0, light: 0 };
    for (let i = 0; i < 800; i++) counts[(await ask('weighted')).data.model]++;
    expect(counts.heavy + counts.light).toBe(800);
    expect(Math.abs(counts.heavy / 800 - 0.75)).toBeLessThan(0.04);
  });

  it('least-latency: after measuring both, the faster target takes the traffic', async () => {
    a.setHandler(() => ({ ...ok(), delayMs: 80 }));
    b.setHandler(() => ({ ...ok(), delayMs: 5 }));
    const served: string[] = [];
    for (let i = 0; i < 12; i++) served.push((await providerOf('fastest'))!);
    expect(served.slice(0, 2)).toEqual(['a', 'b']); // unmeasured targets are tried first
    expect(served.slice(2).every((p) => p === 'b')).toBe(true);
  });

  it('least-busy: concurrent requests spread over the targets', async () => {
    a.setHandler(() => ({ ...ok(), delayMs: 150 }));
    b.setHandler(() => ({ ...ok(), delayMs: 150 }));
    const served = await Promise.all([0, 1, 2, 3].map(() => providerOf('idlest')));
    expect(served.filter((p) => p === 'a')).toHaveLength(2);
    expect(served.filter((p) => p === 'b')).toHaveLength(2);
  });
});

describe('cooldown', () => {
  it('takes a failing target out of rotation, probes it once after the cooldown, then restores it', async () => {
    a.setHandler(serverError);
    expect(await providerOf('breaker')).toBe('b');
    expect(await providerOf('breaker')).toBe('b');
    expect(a.requests).toHaveLength(2);

    // Open: a is skipped without a request reaching it.
    a.setHandler(ok);
    const cooled = await ask('breaker');
    expect(cooled.response.headers.get('x-switchyard-provider')).toBe('b');
    expect(a.requests).toHaveLength(2);
    const line = await logLineFor(t, cooled.response.headers.get('x-request-id')!);
    expect(line.attemptLog[0]).toMatchObject({ provider: 'a', outcome: 'skipped' });
    expect(line.attemptLog[0].error).toMatch(/^cooling down for \d+ ms$/);

    // Half-open: exactly one probe reaches a; a concurrent request goes to b meanwhile.
    clock.advance(5_001);
    a.setHandler(() => ({ ...ok(), delayMs: 150 }));
    const [first, second] = await Promise.all([providerOf('breaker'), new Promise((r) => setTimeout(r, 30)).then(() => providerOf('breaker'))]);
    expect([first, second]).toEqual(['a', 'b']);
    expect(a.requests).toHaveLength(3);

    // The probe succeeded: a is back in rotation.
    a.setHandler(ok);
    expect(await providerOf('breaker')).toBe('a');
  });

  it('a failed probe starts another cooldown', async () => {
    clock.advance(60_000);
    a.setHandler(serverError);
    await providerOf('breaker');
    await providerOf('breaker');
    clock.advance(5_001);
    expect(await providerOf('breaker')).toBe('b'); // the probe failed and fell back to b
    expect(a.requests).toHaveLength(3);
    expect(await providerOf('breaker')).toBe('b');
    expect(a.requests).toHaveLength(3);
    clock.advance(60_000);
    a.setHandler(ok);
    expect(await providerOf('breaker')).toBe('a');
  });

  it('when every target cools down the client gets 503 with Retry-After', async () => {
    a.setHandler(serverError);
    const first = await failureOf(t.client().chat.completions.create({ model: 'lonely', messages: [{ role: 'user', content: 'x' }] }));
    expect(first.status).toBe(502);
    const second = await failureOf(t.client().chat.completions.create({ model: 'lonely', messages: [{ role: 'user', content: 'x' }] }));
    expect(second.status).toBe(503);
    expect(second.code).toBe('provider_unavailable');
    expect(Number(second.headers?.get('retry-after'))).toBe(7);
    expect(a.requests).toHaveLength(1);
    clock.advance(7_001);
  });

  it('a 429 with retry-after takes the target out for that long at once', async () => {
    clock.advance(60_000);
    a.setHandler(() => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '20' } }));
    expect(await providerOf('breaker')).toBe('b');
    a.setHandler(ok);
    expect(await providerOf('breaker')).toBe('b');
    expect(a.requests).toHaveLength(1);
    clock.advance(20_001);
    expect(await providerOf('breaker')).toBe('a');
  });
});

describe('fallbacks on specific failures', () => {
  it('contextWindow: a prompt too long for the model goes to the larger-window alias', async () => {
    a.setHandler(() => ({
      status: 400,
      body: {
        error: {
          message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      },
    }));
    const { response } = await ask('small');
    expect(response.headers.get('x-switchyard-provider')).toBe('b');
    expect(b.requests[0].body.model).toBe('big-ctx');
  });

  it('contentPolicy: a policy refusal goes to the alias named for it', async () => {
    a.setHandler(() => ({
      status: 400,
      body: { error: { message: 'Your request was rejected as a result of our safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } },
    }));
    const { data } = await ask('small');
    expect(data.model).toBe('lenient-1');
  });

  it('other client errors are still returned as they are', async () => {
    a.setHandler(() => replay(f('error-400-unsupported-value')));
    const err = await failureOf(t.client().chat.completions.create({ model: 'small', messages: [{ role: 'user', content: 'x' }] }));
    expect(err.status).toBe(400);
    expect(b.requests).toHaveLength(0);
  });
});
