/** Gemini embeddings: batchEmbedContents bodies as documented, answers → the OpenAI list with estimated usage. */
import { describe, expect, it } from 'vitest';
import type { EmbeddingCall, EmbeddingRequest } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { buildBatchEmbedRequests, estimateTokens, MAX_BATCH, toEmbeddings } from './embeddings.ts';

/** Constructed from Gemini's documentation (see test/fixtures/README.md). */
const FIXTURES = new URL('../../test/fixtures/gemini/', import.meta.url);

const callOf = (embedding: Partial<EmbeddingRequest>, model = 'gemini-embedding-001'): EmbeddingCall =>
  ({ provider: 'g', model, embedding: { model: 'alias', input: 'hi', ...embedding } }) as EmbeddingCall;

describe('request', () => {
  it('is one EmbedContentRequest per text, outputDimensionality from dimensions', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-batch');
    expect(buildBatchEmbedRequests(callOf({ input: ['What is the meaning of life?', 'How does the brain work?'], dimensions: 4 }))).toEqual([fixture.request]);
  });

  it('sends one string as a batch of one, without optional fields it was not given', () => {
    expect(buildBatchEmbedRequests(callOf({ input: 'hello' }))).toEqual([{ requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello' }] } }] }]);
  });

  it('keeps models/ and tunedModels/ names whole', () => {
    expect(buildBatchEmbedRequests(callOf({}, 'models/text-embedding-004'))[0].requests[0].model).toBe('models/text-embedding-004');
    expect(buildBatchEmbedRequests(callOf({}, 'tunedModels/mine'))[0].requests[0].model).toBe('tunedModels/mine');
  });

  it('takes the task type from the request (task_type), else from the provider option', () => {
    expect(buildBatchEmbedRequests(callOf({}), { taskType: 'RETRIEVAL_DOCUMENT' })[0].requests[0].taskType).toBe('RETRIEVAL_DOCUMENT');
    expect(buildBatchEmbedRequests(callOf({ task_type: 'RETRIEVAL_QUERY' }), { taskType: 'RETRIEVAL_DOCUMENT' })[0].requests[0].taskType).toBe('RETRIEVAL_QUERY');
  });

  it(`splits more than ${MAX_BATCH} texts into batches of at most ${MAX_BATCH}, in order`, () => {
    const input = Array.from({ length: 250 }, (_, i) => `text ${i}`);
    const batches = buildBatchEmbedRequests(callOf({ input }));
    expect(batches.map((b) => b.requests.length)).toEqual([100, 100, 50]);
    expect(batches[2].requests[49].content.parts[0].text).toBe('text 249');
  });

  it('refuses token arrays: 400 unsupported_parameter naming input', () => {
    for (const input of [
      [1, 2, 3],
      [[1, 2], [3]],
    ]) {
      const err = (() => {
        try {
          buildBatchEmbedRequests(callOf({ input }));
        } catch (e) {
          return e;
        }
      })() as GatewayError;
      expect(err).toBeInstanceOf(GatewayError);
      expect(err.code).toBe('unsupported_parameter');
      expect(err.status).toBe(400);
      expect(err.param).toBe('input');
    }
  });
});

describe('answer', () => {
  it('maps embeddings[].values to data in order; usage is estimated at 4 characters a token', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-batch');
    const r = toEmbeddings(fixture.json, callOf({}), fixture.request);
    expect(r).toEqual({
      object: 'list',
      model: 'gemini-embedding-001',
      data: [
        { object: 'embedding', index: 0, embedding: fixture.json.embeddings[0].values },
        { object: 'embedding', index: 1, embedding: fixture.json.embeddings[1].values },
      ],
      // "What is the meaning of life?" is 28 characters (7), "How does the brain work?" 24 (6).
      usage: { prompt_tokens: 13, total_tokens: 13 },
    });
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('refuses answers that do not match the batch', () => {
    const batch = buildBatchEmbedRequests(callOf({ input: ['a', 'b'] }))[0];
    expect(() => toEmbeddings({}, callOf({}), batch)).toThrow(/no embeddings array/);
    expect(() => toEmbeddings({ embeddings: [{ values: [1] }] }, callOf({}), batch)).toThrow(/1 embeddings for 2 texts/);
    expect(() => toEmbeddings({ embeddings: [{ values: [1] }, {}] }, callOf({}), batch)).toThrow(/embeddings\[1\] has no values/);
  });
});
