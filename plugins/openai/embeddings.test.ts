/** OpenAI embeddings: the request passes through with floats asked for; answers come back as float vectors. */
import { describe, expect, it } from 'vitest';
import type { EmbeddingCall, EmbeddingRequest } from 'switchyard-gateway';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { buildEmbeddingsBody, decodeFloat32Base64, estimateInputTokens, toEmbeddings } from './embeddings.ts';

/** Constructed from OpenAI's documentation (see test/fixtures/README.md). */
const FIXTURES = new URL('../../test/fixtures/openai/', import.meta.url);

const callOf = (embedding: Partial<EmbeddingRequest>): EmbeddingCall =>
  ({ provider: 'oa', model: 'text-embedding-3-small', embedding: { model: 'alias', input: 'hi', ...embedding } }) as EmbeddingCall;

describe('request', () => {
  it('is the documented request: the client fields with the target model, floats asked for', () => {
    const fixture = loadFixture(FIXTURES, 'embeddings-basic');
    const { input, dimensions } = fixture.request;
    expect(buildEmbeddingsBody(callOf({ input, dimensions }))).toEqual(fixture.request);
  });

  it('asks for floats even when the client wants base64 (the core encodes it)', () => {
    expect(buildEmbeddingsBody(callOf({ encoding_format: 'base64' })).encoding_format).toBe('float');
  });

  it('passes token arrays, user and extra fields through', () => {
    const body = buildEmbeddingsBody(callOf({ input: [[1, 2, 3], [4]], user: 'u-1', input_type: 'query' }));
    expect(body).toEqual({ model: 'text-embedding-3-small', input: [[1, 2, 3], [4]], user: 'u-1', input_type: 'query', encoding_format: 'float' });
  });
});

describe('answer', () => {
  it('keeps the documented list as it is', () => {
    const body = loadFixture(FIXTURES, 'embeddings-basic').json;
    const r = toEmbeddings(structuredClone(body), callOf({}));
    expect(r).toEqual(body);
  });

  it('decodes a base64 answer to floats (little-endian float32)', () => {
    const r = toEmbeddings(loadFixture(FIXTURES, 'embeddings-base64').json, callOf({}));
    expect(r.data[0].embedding).toEqual([1, -0.5, 0.25, 0]);
    expect(decodeFloat32Base64(Buffer.from(new Float32Array([0.5, -2]).buffer).toString('base64'))).toEqual([0.5, -2]);
  });

  it('orders data by index and fills what a lax server leaves out', () => {
    const r = toEmbeddings(
      {
        data: [
          { index: 1, embedding: [2] },
          { index: 0, embedding: [1] },
        ],
      },
      callOf({ input: ['abcd', 'abcdefgh'] }),
    );
    expect(r).toEqual({
      object: 'list',
      model: 'text-embedding-3-small',
      data: [
        { object: 'embedding', index: 0, embedding: [1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
  });

  it('refuses answers that are not an embeddings list', () => {
    expect(() => toEmbeddings({ object: 'list' }, callOf({}))).toThrow(/no data array/);
    expect(() => toEmbeddings({ data: [{ index: 0, embedding: { x: 1 } }] }, callOf({}))).toThrow(/neither a float array nor base64/);
    expect(() => toEmbeddings({ data: [{ index: 0, embedding: 'AAA=' }] }, callOf({}))).toThrow(/not float32/);
  });
});

describe('token estimate (servers without usage)', () => {
  it('is a quarter of the characters per text, rounded up; token arrays count as given', () => {
    expect(estimateInputTokens('hello')).toBe(2);
    expect(estimateInputTokens(['abcd', 'e'])).toBe(2);
    expect(estimateInputTokens([1, 2, 3])).toBe(3);
    expect(estimateInputTokens([[1, 2], [3]])).toBe(3);
  });
});
