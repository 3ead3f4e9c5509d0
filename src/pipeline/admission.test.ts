/** One place decides whether a request may use a target: configured, capable, within limits. */
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { EmbeddingRequest } from '../openai-types.ts';
import type { Operation, RouteTarget } from '../plugin-api.ts';
import { admitTarget, notEmbedding, unavailableError } from './admission.ts';
import type { Limits, TargetSkip } from './exchange.ts';
import { answering, chatBody, exchangeFor, fakeProvider, sessionOf, targetOf } from './testing.ts';

const EMBEDDING: EmbeddingRequest = { model: 'alias', input: 'text' };

const embedder = (): RouteTarget =>
  targetOf(
    fakeProvider(async () => ({ kind: 'json', body: {}, headers: {} }), {
      embed: async () => ({ object: 'list', data: [], model: 'e', usage: { prompt_tokens: 0, total_tokens: 0 } }),
    }),
    { capabilities: { embeddings: true } },
  );

function limitsAnswering(answer: () => Promise<TargetSkip | undefined>) {
  const admit = vi.fn<Limits['admit']>(answer);
  const limits: Limits = { admit, finish: async () => {} };
  return { admit, limits };
}

const request = (operation: Operation, limits?: Limits) => exchangeFor({ operation, session: sessionOf(operation === 'embeddings' ? EMBEDDING : chatBody()), services: { limits } });

describe('admitTarget', () => {
  it("skips a target whose provider is not configured, with a 503 that names the provider (not the reason) and tells SDKs not to retry; limits aren't asked", async () => {
    const { admit, limits } = limitsAnswering(async () => undefined);
    const target = targetOf(answering('x'), { provider: 'acme', unavailable: 'ACME_API_KEY is not set' });
    const skip = await admitTarget(request('chat', limits), target);
    expect(skip?.reason).toBe('ACME_API_KEY is not set');
    expect(skip?.error).toMatchObject({ code: 'provider_unavailable', status: 503, headers: { 'x-should-retry': 'false' } });
    expect(skip?.error.message).toContain('"acme"');
    expect(skip?.error.message).not.toContain('ACME_API_KEY');
    expect(admit).not.toHaveBeenCalled();
  });

  it('skips a target that does not embed for an embeddings request (a 400 on `model`)', async () => {
    const declaresOnly = targetOf(answering('x'), { capabilities: { embeddings: true } });
    for (const target of [targetOf(answering('x')), declaresOnly]) {
      const skip = await admitTarget(request('embeddings'), target);
      expect(skip).toMatchObject({ reason: 'does not do embeddings', error: { code: 'invalid_request', status: 400, param: 'model' } });
    }
  });

  it('admits a target that embeds, and every target for chat and count_tokens', async () => {
    expect(await admitTarget(request('embeddings'), embedder())).toBeUndefined();
    expect(await admitTarget(request('chat'), targetOf(answering('x')))).toBeUndefined();
    expect(await admitTarget(request('count_tokens'), targetOf(answering('x')))).toBeUndefined();
  });

  it("asks the generation's limits last, and answers what they answer", async () => {
    const skip: TargetSkip = { reason: 'target full', error: new GatewayError('rate_limit_exceeded', 'full') };
    const { admit, limits } = limitsAnswering(async () => skip);
    const x = request('chat', limits);
    const target = targetOf(answering('x'));
    expect(await admitTarget(x, target)).toBe(skip);
    expect(admit).toHaveBeenCalledWith(x, target);
    const refusal = new GatewayError('rate_limit_exceeded', 'key over');
    const refusing = limitsAnswering(async () => {
      throw refusal;
    });
    await expect(admitTarget(request('chat', refusing.limits), target)).rejects.toBe(refusal);
  });
});

describe('the errors of a skip', () => {
  it('unavailableError and notEmbedding name the provider and model', () => {
    const target = targetOf(answering('x'), { provider: 'acme', model: 'acme-9' });
    expect(unavailableError(target).message).toBe('The model is temporarily unavailable: its provider "acme" is not configured on this gateway.');
    expect(notEmbedding(target).message).toBe('This model is served by "acme" (acme-9), which does not do embeddings.');
  });
});
