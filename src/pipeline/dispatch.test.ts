/** The innermost step: sends the current attempt, or without `retry` starts the only one on the route's first target. */
import { describe, expect, it } from 'vitest';
import { Attempt } from './attempt.ts';
import { dispatch } from './dispatch.ts';
import type { Limits } from './exchange.ts';
import { answering, chatBody, exchangeFor, routeOf, sessionOf, targetOf, TIMEOUTS } from './testing.ts';

describe('dispatch', () => {
  it("sends the attempt retry started, on that attempt's target", async () => {
    const first = answering('first');
    const chosen = answering('chosen');
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    x.ctx.route = routeOf('m', [targetOf(first), targetOf(chosen)]);
    const attempt = new Attempt(x, x.ctx.route.targets[1]!, TIMEOUTS);
    await dispatch(x.ctx);
    expect(x.attempt).toBe(attempt);
    expect(chosen.calls).toHaveLength(1);
    expect(first.calls).toHaveLength(0);
  });

  it("without retry, admits and sends the only attempt on the route's first target, with its own time limits", async () => {
    const first = answering('first');
    const admitted: string[] = [];
    const limits: Limits = { admit: async (_x, t) => void admitted.push(t.model), finish: async () => {} };
    const x = exchangeFor({ session: sessionOf(chatBody()), services: { limits } });
    const timeouts = { ...TIMEOUTS, totalMs: 1234 };
    x.ctx.route = routeOf('m', [targetOf(first, { model: 'one', timeouts }), targetOf(answering('second'), { model: 'two' })]);
    await dispatch(x.ctx);
    expect(admitted).toEqual(['one']);
    expect(first.calls).toHaveLength(1);
    expect(x.attempt?.timeouts).toBe(timeouts);
    expect(x.attempt?.native?.kind).toBe('json');
  });

  it("answers a skip of the first target with the skip's error (no failover without retry)", async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    x.ctx.route = routeOf('m', [targetOf(answering('a'), { unavailable: 'no key' }), targetOf(answering('b'))]);
    await expect(dispatch(x.ctx)).rejects.toMatchObject({ code: 'provider_unavailable' });
    expect(x.attempt).toBeUndefined();
  });

  it('without a route is an internal error that names the missing stage', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    await expect(dispatch(x.ctx)).rejects.toMatchObject({ code: 'internal_error', message: expect.stringContaining('"route"') });
  });
});
