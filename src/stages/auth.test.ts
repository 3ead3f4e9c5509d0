/** `auth`: the bearer (or x-api-key) key → its identity; 401 for a missing, malformed, unknown or expired key; 403 outside its models. */
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import { FakeClock } from '../kit/testing/clock.ts';
import { answering, chatBody, exchangeFor, keyOf, routeOf, runtimeOf, sessionOf, stageEnv, targetOf } from '../pipeline/testing.ts';
import type { IncomingHttpHeaders } from 'node:http';
import auth from './auth.ts';

const clock = new FakeClock();
const ALICE = keyOf('alice', { models: ['m'] });
const runtime = runtimeOf([routeOf('m', [targetOf(answering('m'))]), routeOf('other', [targetOf(answering('o'))])], {
  'sk-alice-secret': ALICE,
  'sk-old-secret': keyOf('old', { expiresAt: clock.now() - 1 }),
  'sk-soon-secret': keyOf('soon', { expiresAt: clock.now() + 3_600_000 }),
});

/** Runs auth for these headers and model; the key it set, or what it threw. */
async function authenticate(headers: IncomingHttpHeaders, model = 'm') {
  const stage = await auth.create({}, stageEnv(runtime, clock));
  const x = exchangeFor({ headers, session: sessionOf(chatBody({ model })) });
  const next = vi.fn(async () => {});
  const error = await stage.handle!(x.ctx, next).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { key: x.ctx.key, next, error };
}

describe('auth', () => {
  it('identifies a bearer key, sets ctx.key and goes on', async () => {
    const r = await authenticate({ authorization: 'Bearer sk-alice-secret' });
    expect(r.error).toBeUndefined();
    expect(r.key).toBe(ALICE);
    expect(r.next).toHaveBeenCalledTimes(1);
  });

  it('accepts the scheme in any case and an x-api-key header (Anthropic SDKs)', async () => {
    expect((await authenticate({ authorization: 'bearer   sk-alice-secret ' })).key).toBe(ALICE);
    expect((await authenticate({ 'x-api-key': 'sk-alice-secret' })).key).toBe(ALICE);
  });

  it.each([
    ['missing', {}, 'Missing API key'],
    ['malformed', { authorization: 'Basic c2stYWxpY2U=' }, 'Malformed Authorization header'],
    ['unknown', { authorization: 'Bearer sk-wrong-secret' }, 'Incorrect API key provided.'],
    ['expired', { authorization: 'Bearer sk-old-secret' }, 'The API key "old" expired at'],
  ])('a %s key is a 401 that never echoes the key', async (_what, headers: IncomingHttpHeaders, message) => {
    const r = await authenticate(headers);
    expect(r.error).toBeInstanceOf(GatewayError);
    expect(r.error).toMatchObject({ code: 'invalid_api_key', status: 401 });
    expect(String((r.error as Error).message)).toContain(message);
    expect(String((r.error as Error).message)).not.toContain('secret');
    expect(r.next).not.toHaveBeenCalled();
  });

  it('a key before its expiry passes', async () => {
    expect((await authenticate({ authorization: 'Bearer sk-soon-secret' })).key?.name).toBe('soon');
  });

  it('a known model outside the key globs is a 403 on `model`', async () => {
    const r = await authenticate({ authorization: 'Bearer sk-alice-secret' }, 'other');
    expect(r.error).toMatchObject({ code: 'model_not_allowed', status: 403, param: 'model', message: 'The key "alice" may not use the model "other".' });
    expect(r.next).not.toHaveBeenCalled();
  });

  it("an unknown model is left to route's 404", async () => {
    const r = await authenticate({ authorization: 'Bearer sk-alice-secret' }, 'nonexistent');
    expect(r.error).toBeUndefined();
    expect(r.next).toHaveBeenCalledTimes(1);
  });

  it('identify() guards the routes outside the pipeline the same way', async () => {
    const stage = await auth.create({}, stageEnv(runtime, clock));
    expect(stage.identify?.({ authorization: 'Bearer sk-alice-secret' })).toBe(ALICE);
    expect(() => stage.identify?.({ authorization: 'Bearer sk-old-secret' })).toThrow(GatewayError);
  });
});
