/** Vertex text embeddings: :predict bodies as documented, answers → the OpenAI list with Vertex's token counts. */
import { describe, expect, it } from 'vitest';
import type { EmbeddingCall, EmbeddingRequest } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';
import { batchSize, buildPredictRequests, toEmbeddings } from './embeddings.ts';

const callOf = (embedding: Partial<EmbeddingRequest>, model = 'text-embedding-005'): EmbeddingCall =>
  ({ provider: 'v', model, embedding: { model: 'alias', input: 'hi', ...embedding } }) as EmbeddingCall;

describe('request', () => {
  it('is instances[{content}], outputDimensionality from dimensions, task_type from the request or the provider', () => {
    expect(buildPredictRequests(callOf({ input: ['a', 'b'], dimensions: 256 }))).toEqual([{ instances: [{ content: 'a' }, { content: 'b' }], parameters: { outputDimensionality: 256 } }]);
    expect(buildPredictRequests(callOf({ input: 'q' }), { taskType: 'RETRIEVAL_DOCUMENT' })).toEqual([{ instances: [{ content: 'q', task_type: 'RETRIEVAL_DOCUMENT' }] }]);
    expect(buildPredictRequests(callOf({ input: 'q', task_type: 'RETRIEVAL_QUERY' }), { taskType: 'RETRIEVAL_DOCUMENT' })[0].instances[0].task_type).toBe('RETRIEVAL_QUERY');
  });

  it('splits at 250 instances, and at one for gemini-embedding models', () => {
    expect(batchSize('text-embedding-005')).toBe(250);
    expect(batchSize('gemini-embedding-001')).toBe(1);
    const texts = Array.from({ length: 501 }, (_, i) => `t${i}`);
    expect(buildPredictRequests(callOf({ input: texts })).map((r) => r.instances.length)).toEqual([250, 250, 1]);
    expect(buildPredictRequests(callOf({ input: ['a', 'b', 'c'] }, 'gemini-embedding-001')).map((r) => r.instances.length)).toEqual([1, 1, 1]);
  });

  it('refuses token arrays (400 unsupported_parameter), which mean nothing to Vertex', () => {
    expect(() => buildPredictRequests(callOf({ input: [1, 2, 3] }))).toThrow(GatewayError);
  });
});

describe('answer', () => {
  const request = { instances: [{ content: 'one two' }, { content: 'three' }] };

  it('is the OpenAI list in order, usage from statistics.token_count', () => {
    const body = {
      predictions: [{ embeddings: { statistics: { truncated: false, token_count: 2 }, values: [0.1, 0.2] } }, { embeddings: { statistics: { truncated: false, token_count: 1 }, values: [0.3, 0.4] } }],
      metadata: { billableCharacterCount: 11 },
    };
    expect(toEmbeddings(body, callOf({}), request)).toEqual({
      object: 'list',
      model: 'text-embedding-005',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
        { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
  });

  it('throws a SyntaxError (a 502) on an answer that does not match the request', () => {
    expect(() => toEmbeddings({}, callOf({}), request)).toThrow(SyntaxError);
    expect(() => toEmbeddings({ predictions: [{ embeddings: { values: [1] } }] }, callOf({}), request)).toThrow(/1 predictions for 2 texts/);
    expect(() => toEmbeddings({ predictions: [{ embeddings: {} }, { embeddings: {} }] }, callOf({}), request)).toThrow(/no embeddings.values/);
  });
});
