/** Azure OpenAI embeddings: OpenAI's body and answer behind Azure's two URL forms. */
import { describe, expect, it } from 'vitest';
import type { EmbeddingCall } from 'switchyard-gateway';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { azureEmbeddingsPath } from './embeddings.ts';
import { buildEmbeddingsBody, toEmbeddings } from '../openai/embeddings.ts';

/** Constructed from Azure's documentation (see test/fixtures/README.md). */
const FIXTURES = new URL('../../test/fixtures/azure/', import.meta.url);

describe('URL', () => {
  it('names the deployment and the api-version in the deployments form', () => {
    expect(azureEmbeddingsPath({ apiVersion: '2024-10-21' }, 'my-embeddings')).toBe('/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21');
    expect(azureEmbeddingsPath({ mode: 'deployments', apiVersion: '2025-01-01 preview' }, 'a/b')).toBe('/openai/deployments/a%2Fb/embeddings?api-version=2025-01-01%20preview');
  });

  it('is /openai/v1/embeddings in the v1 form (the deployment rides in the body)', () => {
    expect(azureEmbeddingsPath({ mode: 'v1', apiVersion: 'ignored' }, 'my-embeddings')).toBe('/openai/v1/embeddings');
  });
});

describe('body and answer', () => {
  it('sends the documented request and reads the documented answer', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-basic');
    const call = { provider: 'az', model: 'text-embedding-3-small', embedding: { model: 'alias', input: fixture.request.input } } as EmbeddingCall;
    expect(buildEmbeddingsBody(call)).toEqual(fixture.request);
    expect(toEmbeddings(structuredClone(fixture.json), call)).toEqual(fixture.json);
  });
});
