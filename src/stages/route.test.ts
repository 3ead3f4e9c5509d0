/** `route`: the model the client asked for → its alias's route; 404 when there is none. */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../kit/testing/clock.ts';
import { answering, chatBody, exchangeFor, routeOf, runtimeOf, stageEnv, targetOf } from '../pipeline/testing.ts';
import route from './route.ts';

const M = routeOf('m', [targetOf(answering('m'))]);

async function routeFor(body: unknown) {
  const stage = await route.create({}, stageEnv(runtimeOf([M]), new FakeClock()));
  const x = exchangeFor({ body });
  let routeInNext: unknown;
  const next = vi.fn(async () => {
    routeInNext = x.ctx.route;
  });
  const error = await stage.handle!(x.ctx, next).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { route: x.ctx.route, routeInNext, next, error };
}

describe('route', () => {
  it("sets the alias's route before the inner stages run", async () => {
    const r = await routeFor(chatBody({ model: 'm' }));
    expect(r.error).toBeUndefined();
    expect(r.routeInNext).toBe(M);
    expect(r.route).toBe(M);
  });

  it('answers an unknown model with 404 model_not_found on `model`, naming it', async () => {
    const r = await routeFor(chatBody({ model: 'gpt-unknown' }));
    expect(r.error).toMatchObject({ code: 'model_not_found', status: 404, param: 'model' });
    expect(String((r.error as Error).message)).toContain('The model `gpt-unknown` does not exist');
    expect(r.next).not.toHaveBeenCalled();
    expect(r.route).toBeUndefined();
  });

  it('a model that is not a string is not found either', async () => {
    const r = await routeFor({ model: 42, messages: [] });
    expect(r.error).toMatchObject({ code: 'model_not_found' });
    expect(String((r.error as Error).message)).toContain('`42`');
  });
});
