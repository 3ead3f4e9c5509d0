/** Bedrock embeddings: InvokeModel bodies for Titan and Cohere as documented, answers → the OpenAI list. */
import { describe, expect, it, vi } from 'vitest';
import type { EmbeddingCall, EmbeddingRequest } from 'switchyard-gateway';
import type { GatewayError } from 'switchyard-gateway/kit';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { buildEmbeddingBodies, COHERE_MAX_TEXTS, embeddingFamilyOf, invokePath, toEmbeddings, type CohereRequest, type TitanRequest } from './embeddings.ts';

/** Constructed from the Bedrock model parameter pages (see test/fixtures/README.md). */
const FIXTURES = new URL('../../test/fixtures/bedrock/', import.meta.url);
const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';

const callOf = (model: string, embedding: Partial<EmbeddingRequest>, extra: Partial<EmbeddingCall> = {}): EmbeddingCall =>
  ({
    provider: 'aws',
    model,
    requestId: 'req_test',
    dropUnsupportedParams: false,
    log: { info: vi.fn() },
    embedding: { model: 'alias', input: 'hi', ...embedding },
    ...extra,
    // Cast on purpose: only the fields the embeddings path reads.
  }) as unknown as EmbeddingCall;

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('model families', () => {
  it('knows Titan and Cohere by id, ARN or cross-region profile', () => {
    expect(embeddingFamilyOf(TITAN)).toBe('titan-v2');
    expect(embeddingFamilyOf('arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0')).toBe('titan-v2');
    expect(embeddingFamilyOf('amazon.titan-embed-text-v1')).toBe('titan-v1');
    expect(embeddingFamilyOf('amazon.titan-embed-g1-text-02')).toBe('titan-v1');
    expect(embeddingFamilyOf(COHERE)).toBe('cohere-v3');
    expect(embeddingFamilyOf('cohere.embed-multilingual-v3')).toBe('cohere-v3');
    expect(embeddingFamilyOf('us.cohere.embed-v4:0')).toBe('cohere-v4');
    expect(embeddingFamilyOf('us.amazon.nova-micro-v1:0')).toBeUndefined();
  });

  it('refuses a model it cannot embed with (400 naming model)', () => {
    const err = refusal(() => buildEmbeddingBodies(callOf('us.amazon.nova-micro-v1:0', {})));
    expect(err).toMatchObject({ code: 'unsupported_parameter', status: 400, param: 'model' });
  });

  it('invokes /model/{id}/invoke with the id as one encoded segment', () => {
    expect(invokePath(TITAN)).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
  });
});

describe('Titan Text Embeddings', () => {
  it('V2: the documented body {inputText, dimensions, normalize}', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-titan-v2');
    expect(buildEmbeddingBodies(callOf(TITAN, { input: 'What is the meaning of life?', dimensions: 256 }))).toEqual([fixture.request]);
  });

  it('one call per text, in input order; no dimensions unless asked', () => {
    expect(buildEmbeddingBodies(callOf(TITAN, { input: ['a', 'b', 'c'] }))).toEqual([
      { inputText: 'a', normalize: true },
      { inputText: 'b', normalize: true },
      { inputText: 'c', normalize: true },
    ]);
  });

  it('G1 takes only inputText: dimensions refused, or dropped with dropUnsupportedParams', () => {
    expect(buildEmbeddingBodies(callOf('amazon.titan-embed-text-v1', { input: 'a' }))).toEqual([{ inputText: 'a' }]);
    expect(refusal(() => buildEmbeddingBodies(callOf('amazon.titan-embed-text-v1', { dimensions: 256 })))).toMatchObject({ code: 'unsupported_parameter', param: 'dimensions' });
    const lenient = callOf('amazon.titan-embed-text-v1', { input: 'a', dimensions: 256 }, { dropUnsupportedParams: true });
    expect(buildEmbeddingBodies(lenient)).toEqual([{ inputText: 'a' }]);
    expect(lenient.log.info).toHaveBeenCalledWith(expect.objectContaining({ param: 'dimensions' }), "dropped unsupported parameter 'dimensions'");
  });

  it('answer: the embedding, with Titan’s own token count', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-titan-v2');
    const r = toEmbeddings(fixture.json, callOf(TITAN, {}), fixture.request, {});
    expect(r).toEqual({ object: 'list', model: TITAN, data: [{ object: 'embedding', index: 0, embedding: fixture.json.embedding }], usage: { prompt_tokens: 8, total_tokens: 8 } });
  });

  it('answer: embeddingsByType.float when embedding is absent; the header count, else an estimate', () => {
    const request: TitanRequest = { inputText: 'abcdefgh' };
    expect(toEmbeddings({ embeddingsByType: { float: [1, 2] } }, callOf(TITAN, {}), request, { 'x-amzn-bedrock-input-token-count': '5' })).toMatchObject({
      data: [{ embedding: [1, 2] }],
      usage: { prompt_tokens: 5 },
    });
    expect(toEmbeddings({ embedding: [1] }, callOf(TITAN, {}), request, {}).usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    expect(() => toEmbeddings({ inputTextTokenCount: 3 }, callOf(TITAN, {}), request, {})).toThrow(/not a float array/);
  });
});

describe('Cohere Embed', () => {
  it('v3: the documented body {texts, input_type: search_document, embedding_types: [float]}', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-cohere-v3');
    expect(buildEmbeddingBodies(callOf(COHERE, { input: ['What is the meaning of life?', 'How does the brain work?'] }))).toEqual([fixture.request]);
  });

  it('input_type from the request, else the provider option', () => {
    expect((buildEmbeddingBodies(callOf(COHERE, {}), { cohereInputType: 'clustering' })[0] as CohereRequest).input_type).toBe('clustering');
    expect((buildEmbeddingBodies(callOf(COHERE, { input_type: 'search_query' }), { cohereInputType: 'clustering' })[0] as CohereRequest).input_type).toBe('search_query');
  });

  it(`splits more than ${COHERE_MAX_TEXTS} texts into calls of at most ${COHERE_MAX_TEXTS}`, () => {
    const input = Array.from({ length: 200 }, (_, i) => `t${i}`);
    const bodies = buildEmbeddingBodies(callOf(COHERE, { input })) as CohereRequest[];
    expect(bodies.map((b) => b.texts.length)).toEqual([96, 96, 8]);
    expect(bodies[2].texts.at(-1)).toBe('t199');
  });

  it('dimensions: output_dimension on v4, refused on v3', () => {
    expect(buildEmbeddingBodies(callOf('cohere.embed-v4:0', { input: 'a', dimensions: 512 }))).toEqual([
      { texts: ['a'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 512 },
    ]);
    expect(refusal(() => buildEmbeddingBodies(callOf(COHERE, { dimensions: 512 })))).toMatchObject({ code: 'unsupported_parameter', param: 'dimensions' });
  });

  it('answer by type: embeddings.float, tokens from x-amzn-bedrock-input-token-count', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-cohere-v3');
    const r = toEmbeddings(fixture.json, callOf(COHERE, {}), fixture.request, fixture.headers);
    expect(r).toEqual({
      object: 'list',
      model: COHERE,
      data: fixture.json.embeddings.float.map((embedding: number[], index: number) => ({ object: 'embedding', index, embedding })),
      usage: { prompt_tokens: 14, total_tokens: 14 },
    });
  });

  it('answer in the older embeddings_floats shape; an estimate when the header is missing', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-cohere-v3-floats');
    const r = toEmbeddings(fixture.json, callOf(COHERE, {}), fixture.request, {});
    expect(r.data).toEqual([{ object: 'embedding', index: 0, embedding: fixture.json.embeddings[0] }]);
    // "What is the meaning of life?": 28 characters, about 4 a token.
    expect(r.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
  });

  it('refuses answers that do not match the texts', () => {
    const request: CohereRequest = { texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'] };
    expect(() => toEmbeddings({ id: 'x' }, callOf(COHERE, {}), request, {})).toThrow(/no float embeddings/);
    expect(() => toEmbeddings({ embeddings: { float: [[1]] } }, callOf(COHERE, {}), request, {})).toThrow(/1 embeddings for 2 texts/);
  });
});

describe('input', () => {
  it('refuses token arrays for every family (400 unsupported_parameter, input)', () => {
    for (const model of [TITAN, COHERE]) {
      for (const input of [
        [1, 2],
        [[1], [2]],
      ])
        expect(refusal(() => buildEmbeddingBodies(callOf(model, { input })))).toMatchObject({ code: 'unsupported_parameter', status: 400, param: 'input' });
    }
  });
});
