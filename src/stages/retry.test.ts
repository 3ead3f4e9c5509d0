/**
 * `retry` with a fake `next` (what dispatch and transform-response do: send, translate, or fail
 * as scripted) over real TargetStates and a fake clock: every branch that gives back a probe,
 * cooldowns, the retry budget, Retry-After, backoff, fallbacks and admission skips.
 */
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import { FakeClock, mulberry32 } from '../kit/testing/clock.ts';
import type { EmbeddingRequest } from '../openai-types.ts';
import type { Limits } from '../pipeline/exchange.ts';
import { answering, chatBody, exchangeFor, fakeProvider, routeOf, runtimeOf, sessionOf, silentLog, targetOf } from '../pipeline/testing.ts';
import type { ModelRoute, RouteTarget } from '../plugin-api.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { backoffDelay, DEFAULT_RETRY } from '../routing/policy.ts';
import { TargetState } from '../routing/target-state.ts';
import retry from './retry.ts';

const COOLDOWN = { failures: 1, windowMs: 60_000, durationMs: 1_000 };

type Step = 'ok' | Error | ((x: ReturnType<typeof exchangeFor>) => Error);

interface Run {
  x: ReturnType<typeof exchangeFor>;
  clock: FakeClock;
  /** The target of each call of next(), in order. */
  tried: RouteTarget[];
  next: ReturnType<typeof vi.fn>;
  result: Promise<unknown>;
}

/**
 * Runs `retry` for a request to `route` (`others`: more aliases, for fallbacks). Each call of
 * next() takes the next step: 'ok' sends and translates the attempt, an error is thrown.
 */
async function run(route: ModelRoute, steps: Step[], options: { others?: ModelRoute[]; clock?: FakeClock; limits?: Limits; embeddings?: boolean } = {}): Promise<Run> {
  const clock = options.clock ?? new FakeClock();
  const stage = await retry.create({}, { log: silentLog(), configDir: '.', clock, runtime: runtimeOf([route, ...(options.others ?? [])]) });
  const body: EmbeddingRequest | undefined = options.embeddings ? { model: route.name, input: 'text' } : undefined;
  const x = exchangeFor({ operation: options.embeddings ? 'embeddings' : 'chat', session: sessionOf(body ?? chatBody({ model: route.name })), services: { limits: options.limits } });
  x.ctx.route = route;
  const tried: RouteTarget[] = [];
  const next = vi.fn(async () => {
    const attempt = x.attempt!;
    tried.push(attempt.target);
    const step = steps.shift() ?? 'ok';
    if (step instanceof Error) throw step;
    if (typeof step === 'function') throw step(x);
    await attempt.send();
    attempt.translate();
  });
  const result = stage.handle!(x.ctx, next).then(
    () => 'answered',
    (err: unknown) => err,
  );
  await result;
  return { x, clock, tried, next, result };
}

/** A target whose breaker opened and whose cooldown is over: the next request gets the probe. */
function probeReady(name: string, clock: FakeClock, instance = answering(name)): RouteTarget {
  const state = new TargetState(COOLDOWN);
  state.recordFailure(clock.now());
  clock.advance(COOLDOWN.durationMs);
  return targetOf(instance, { provider: name, state });
}

/** A target cooling down for `ms` more. */
function cooling(name: string, clock: FakeClock, ms: number): RouteTarget {
  const state = new TargetState({ ...COOLDOWN, durationMs: ms });
  state.recordFailure(clock.now());
  return targetOf(answering(name), { provider: name, state });
}

const http = (status: number, message = `status ${status}`, retryAfterMs?: number) => UpstreamError.http('acme', status, { message }, retryAfterMs);

/** Limits that admit everything (the calls are kept). */
function admitting(): Limits & { admitted: RouteTarget[] } {
  const admitted: RouteTarget[] = [];
  return {
    admitted,
    admit: async (_x, target) => {
      admitted.push(target);
      return undefined;
    },
    finish: async () => {},
  };
}

describe('retry: every way a probe is given back', () => {
  it('a key or team over its limits while holding the probe: the refusal is thrown, the probe released, nothing sent', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const refusal = new GatewayError('rate_limit_exceeded', 'key over its rpm');
    const limits: Limits = {
      admit: async () => {
        throw refusal;
      },
      finish: async () => {},
    };
    const r = await run(routeOf('m', [t]), [], { clock, limits });
    expect(await r.result).toBe(refusal);
    expect(r.next).not.toHaveBeenCalled();
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('a target skipped by admission while holding the probe: released, the skip recorded and answered', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const skip = { reason: 'target:a is at its rpm limit', error: new GatewayError('rate_limit_exceeded', 'target full') };
    const limits: Limits = { admit: async () => skip, finish: async () => {} };
    const r = await run(routeOf('m', [t]), [], { clock, limits });
    expect(await r.result).toBe(skip.error);
    expect(r.x.attempts).toEqual([expect.objectContaining({ provider: 'a', outcome: 'skipped', error: skip.reason })]);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('a failure that is not an upstream one: thrown at once, the probe released', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const bug = new GatewayError('internal_error', 'a stage broke');
    const r = await run(routeOf('m', [t, targetOf(answering('b'), { provider: 'b' })]), [bug], { clock });
    expect(await r.result).toBe(bug);
    expect(r.next).toHaveBeenCalledTimes(1);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('the client leaving: thrown at once, the probe released, no verdict on the target', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const leave = (x: ReturnType<typeof exchangeFor>) => {
      x.res.emit('close');
      return UpstreamError.connect('a', 'socket closed');
    };
    const r = await run(routeOf('m', [t, targetOf(answering('b'), { provider: 'b' })]), [leave], { clock });
    expect(await r.result).toBeInstanceOf(UpstreamError);
    expect(r.next).toHaveBeenCalledTimes(1);
    expect(t.state.coolingFor(clock.now())).toBe(0);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('a client-fault error without fallbacks: thrown, the probe released', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const bad = http(400, 'messages[0].content is required');
    const r = await run(routeOf('m', [t, targetOf(answering('b'), { provider: 'b' })]), [bad], { clock });
    expect(await r.result).toBe(bad);
    expect(r.tried).toEqual([t]);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it("a client-fault error with fallbacks for its category: the probe released, the fallback alias's target serves", async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const big = targetOf(answering('big'), { provider: 'big' });
    const route = routeOf('m', [t], { fallbacks: { context_window: ['large'] } });
    const r = await run(route, [http(400, "This model's maximum context length is 8192 tokens")], { clock, others: [routeOf('large', [big])] });
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([t, big]);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('an upstream error that is not the target fault (404): the probe released, the next target tried', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const b = targetOf(answering('b'), { provider: 'b' });
    const r = await run(routeOf('m', [t, b]), [http(404, 'no such model')], { clock });
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([t, b]);
    expect(t.state.admit(clock.now())).toBe('probe');
  });

  it('a target-fault error on the probe is a verdict: the target cools down again', async () => {
    const clock = new FakeClock();
    const t = probeReady('a', clock);
    const b = targetOf(answering('b'), { provider: 'b' });
    const r = await run(routeOf('m', [t, b], {}), [http(500)], { clock });
    expect(await r.result).toBe('answered');
    expect(t.state.coolingFor(clock.now())).toBeGreaterThan(0);
    expect(t.state.admit(clock.now())).toBe('no');
  });
});

describe('retry: cooling targets', () => {
  it('skips a cooling target (recorded as skipped) and serves from the next', async () => {
    const clock = new FakeClock();
    const a = cooling('a', clock, 5_000);
    const b = targetOf(answering('b'), { provider: 'b' });
    const r = await run(routeOf('m', [a, b]), [], { clock });
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([b]);
    expect(r.x.attempts).toEqual([
      expect.objectContaining({ provider: 'a', outcome: 'skipped', status: 0, error: expect.stringMatching(/^cooling down for \d+ ms$/) }),
      expect.objectContaining({ provider: 'b', outcome: 'ok' }),
    ]);
    const wait = Number(/\d+/.exec(String(r.x.attempts[0]?.error))?.[0]);
    expect(wait).toBeGreaterThan(4_000);
    expect(wait).toBeLessThanOrEqual(5_000);
  });

  it('every target cooling: 503 with retry-after for the soonest one, in whole seconds', async () => {
    const clock = new FakeClock();
    const r = await run(routeOf('m', [cooling('a', clock, 4_500), cooling('b', clock, 2_500)]), [], { clock });
    const err = await r.result;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'provider_unavailable', status: 503, headers: { 'retry-after': '3' } });
    expect(String((err as Error).message)).toContain('every target of "m" is cooling down');
    expect(r.next).not.toHaveBeenCalled();
  });
});

describe('retry: the retry budget', () => {
  it('starts no attempt once the budget is spent: the last failure is answered, a probe on the next target released', async () => {
    const clock = new FakeClock();
    const a = targetOf(answering('a'), { provider: 'a' });
    const b = probeReady('b', clock);
    const slow503 = () => {
      clock.advance(2_000);
      return http(503);
    };
    const r = await run(routeOf('m', [a, b], { retry: { ...DEFAULT_RETRY, budgetMs: 1_000 } }), [slow503], { clock });
    const err = await r.result;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 503 });
    expect(r.tried).toEqual([a]);
    expect(clock.sleeps).toEqual([]);
    expect(b.state.admit(clock.now())).toBe('probe');
  });

  it('a budget spent before any attempt: a timeout naming the budget', async () => {
    const r = await run(routeOf('m', [targetOf(answering('a'))], { retry: { ...DEFAULT_RETRY, budgetMs: 0 } }), []);
    expect(await r.result).toMatchObject({ code: 'timeout', message: expect.stringContaining('retry budget of 0 ms') });
  });

  it("cuts an attempt's time limits to what is left of the budget", async () => {
    const clock = new FakeClock();
    const stage = await retry.create({}, { log: silentLog(), configDir: '.', clock, runtime: runtimeOf([]) });
    const target = targetOf(answering('a'), { timeouts: { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, totalMs: 5_000 } });
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    x.ctx.route = routeOf('m', [target], { retry: { ...DEFAULT_RETRY, budgetMs: 300 } });
    let totalMs = 0;
    await stage.handle!(x.ctx, async () => {
      totalMs = x.attempt!.timeouts.totalMs;
      await x.attempt!.send();
      x.attempt!.translate();
    });
    expect(totalMs).toBeGreaterThan(0);
    expect(totalMs).toBeLessThanOrEqual(300);
  });
});

describe('retry: waits between tries', () => {
  const policy = { ...DEFAULT_RETRY, attempts: 3 };

  it('honours Retry-After up to maxRetryAfterMs, then retries the same target', async () => {
    const a = targetOf(answering('a'), { provider: 'a', retry: policy });
    const r = await run(routeOf('m', [a]), [http(429, 'slow down', 3_000)]);
    expect(await r.result).toBe('answered');
    expect(r.clock.sleeps).toEqual([3_000]);
    expect(r.tried).toEqual([a, a]);
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs: the next target is tried at once', async () => {
    const a = targetOf(answering('a'), { provider: 'a', retry: policy });
    const b = targetOf(answering('b'), { provider: 'b', retry: policy });
    const r = await run(routeOf('m', [a, b]), [http(429, 'slow down', policy.maxRetryAfterMs + 1)]);
    expect(await r.result).toBe('answered');
    expect(r.clock.sleeps).toEqual([]);
    expect(r.tried).toEqual([a, b]);
  });

  it('backs off with full jitter between retryable failures on one target', async () => {
    const a = targetOf(answering('a'), { provider: 'a', retry: policy });
    const r = await run(routeOf('m', [a]), [http(503), http(503)]);
    expect(await r.result).toBe('answered');
    const random = mulberry32(42);
    expect(r.clock.sleeps).toEqual([backoffDelay(policy, 1, random), backoffDelay(policy, 2, random)]);
    expect(r.tried).toEqual([a, a, a]);
    expect(r.x.attempts.map((x) => x.outcome)).toEqual(['error', 'error', 'ok']);
  });

  it('does not retry what the policy does not retry (401): the next target serves', async () => {
    const a = targetOf(answering('a'), { provider: 'a', retry: policy });
    const b = targetOf(answering('b'), { provider: 'b' });
    const r = await run(routeOf('m', [a, b]), [http(401, 'bad credentials')]);
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([a, b]);
    expect(r.clock.sleeps).toEqual([]);
  });

  it('answers the last failure when every try of every target failed', async () => {
    const last = http(502, 'second');
    const r = await run(routeOf('m', [targetOf(answering('a'), { retry: { ...DEFAULT_RETRY, attempts: 1 } }), targetOf(answering('b'), { retry: { ...DEFAULT_RETRY, attempts: 1 } })]), [
      http(502, 'first'),
      last,
    ]);
    expect(await r.result).toBe(last);
  });
});

describe('retry: fallbacks and admission', () => {
  it('falls back by category without revisiting a target already in the queue', async () => {
    const shared = targetOf(answering('shared'), { provider: 'shared' });
    const other = targetOf(answering('other'), { provider: 'other' });
    const route = routeOf('small', [shared], { fallbacks: { context_window: ['large'] } });
    const r = await run(route, [http(400, 'prompt is too long')], { others: [routeOf('large', [shared, other])] });
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([shared, other]);
  });

  it('skips a target whose provider is unavailable, and answers its 503 when no other serves', async () => {
    const down = targetOf(answering('a'), { provider: 'a', unavailable: 'ACME_API_KEY is not set' });
    const r1 = await run(routeOf('m', [down, targetOf(answering('b'), { provider: 'b' })]), []);
    expect(await r1.result).toBe('answered');
    expect(r1.x.attempts[0]).toMatchObject({ provider: 'a', outcome: 'skipped', error: 'ACME_API_KEY is not set' });
    const r2 = await run(routeOf('m', [down]), []);
    expect(await r2.result).toMatchObject({ code: 'provider_unavailable', headers: { 'x-should-retry': 'false' } });
    expect(r2.next).not.toHaveBeenCalled();
  });

  it('skips targets that do not embed for an embeddings request, and admits the one that does (limits asked once per target)', async () => {
    const chatOnly = targetOf(answering('a'), { provider: 'a' });
    const embed = vi.fn(async () => ({
      object: 'list' as const,
      data: [{ object: 'embedding' as const, index: 0, embedding: [0.5, 0.25] }],
      model: 'e-1',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    }));
    const embedder = targetOf(
      fakeProvider(async () => ({ kind: 'json', body: {}, headers: {} }), { embed }),
      { provider: 'e', capabilities: { embeddings: true } },
    );
    const limits = admitting();
    const r = await run(routeOf('m', [chatOnly, embedder]), [], { embeddings: true, limits });
    expect(await r.result).toBe('answered');
    expect(r.tried).toEqual([embedder]);
    expect(r.x.attempts[0]).toMatchObject({ provider: 'a', outcome: 'skipped', error: 'does not do embeddings' });
    expect(limits.admitted).toEqual([embedder]);
    expect(embed).toHaveBeenCalledTimes(1);
  });

  it('without a route runs the inner stages once, untouched', async () => {
    const stage = await retry.create({}, { log: silentLog(), configDir: '.', clock: new FakeClock(), runtime: runtimeOf([]) });
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const next = vi.fn(async () => {});
    await stage.handle!(x.ctx, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(x.attempt).toBeUndefined();
  });
});
