/** `transform-response`: after the inner stages, the attempt's native answer is translated, so outer stages see OpenAI's. */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../kit/testing/clock.ts';
import { Attempt } from '../pipeline/attempt.ts';
import { answering, chatBody, exchangeFor, fakeProvider, runtimeOf, sessionOf, stageEnv, targetOf, TIMEOUTS } from '../pipeline/testing.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import transformResponse from './transform-response.ts';

const stage = () => transformResponse.create({}, stageEnv(runtimeOf([]), new FakeClock()));

describe('transform-response', () => {
  it("translates the attempt's native answer after the inner stages sent it", async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const attempt = new Attempt(x, targetOf(answering('translated')), TIMEOUTS);
    let responseInside: unknown = 'unset';
    await (await stage()).handle!(x.ctx, async () => {
      await attempt.send();
      responseInside = attempt.response;
    });
    expect(responseInside).toBeUndefined();
    expect(attempt.native?.kind).toBe('json');
    expect(attempt.response).toMatchObject({ kind: 'completion', body: { choices: [{ message: { content: 'translated' } }] } });
  });

  it('does nothing when no attempt was started (an inner stage answered)', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const next = vi.fn(async () => {});
    await (await stage()).handle!(x.ctx, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(x.attempt).toBeUndefined();
  });

  it('lets a failed send through untranslated', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const attempt = new Attempt(x, targetOf(answering('x')), TIMEOUTS);
    const failure = UpstreamError.http('acme', 500, { message: 'down' });
    await expect((await stage()).handle!(x.ctx, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(attempt.response).toBeUndefined();
  });

  it("a native answer the provider cannot translate is the provider's fault (an UpstreamError, 502 for the client)", async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const attempt = new Attempt(x, targetOf(fakeProvider(async () => ({ kind: 'json', body: { not: 'a completion' }, headers: {} }))), TIMEOUTS);
    const err = await (await stage()).handle!(x.ctx, () => attempt.send()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'protocol' });
    expect((err as UpstreamError).toClientError().status).toBe(502);
  });
});
