/** The mock's embeddings: deterministic unit vectors of the asked length, usage from its token counter. */
import { describe, expect, it } from 'vitest';
import { isProviderUnavailable, type EmbeddingCall } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';
import mock from './index.ts';
import { DEFAULT_EMBEDDING_DIMENSIONS, mockEmbeddings, vectorOf } from './embeddings.ts';

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
const floats = (r: ReturnType<typeof mockEmbeddings>) => r.data.map((d) => d.embedding as number[]);

describe('vectors', () => {
  it('are unit length, of the default length, equal for equal texts and far apart for different ones', () => {
    const r = mockEmbeddings({ model: 'alias', input: ['the cat', 'the dog', 'the cat'] }, 'mock-embed');
    const [cat, dog, again] = floats(r);
    expect(cat).toHaveLength(DEFAULT_EMBEDDING_DIMENSIONS);
    for (const v of [cat, dog]) expect(norm(v)).toBeCloseTo(1, 12);
    expect(again).toEqual(cat);
    expect(Math.abs(dot(cat, dog))).toBeLessThan(0.3);
    expect(r.data.map((d) => d.index)).toEqual([0, 1, 2]);
  });

  it('are the same in every run (the seed is a hash of the text)', () => {
    expect(vectorOf('hello', 4)).toEqual(vectorOf('hello', 4));
    expect(vectorOf('hello', 4).map((x) => Number(x.toFixed(6)))).toMatchInlineSnapshot(`
      [
        -0.636798,
        0.615329,
        0.10735,
        -0.452034,
      ]
    `);
  });

  it('dimensions: the request overrides the provider; a shorter vector is the longer one cut and renormalised', () => {
    const long = floats(mockEmbeddings({ model: 'a', input: 'x' }, 'm', 64))[0];
    const short = floats(mockEmbeddings({ model: 'a', input: 'x', dimensions: 8 }, 'm', 64))[0];
    expect(long).toHaveLength(64);
    expect(short).toHaveLength(8);
    const head = long.slice(0, 8);
    head.forEach((x, i) => expect(short[i]).toBeCloseTo(x / norm(head), 12));
  });

  it('refuses dimensions that are not a positive integer within bounds', () => {
    for (const dimensions of [0, 1.5, 100_000]) {
      expect(() => mockEmbeddings({ model: 'a', input: 'x', dimensions }, 'm')).toThrow(GatewayError);
    }
  });

  it('takes token arrays too (the tokens seed the vector; they count as tokens)', () => {
    const one = mockEmbeddings({ model: 'a', input: [1, 2, 3] }, 'm');
    const two = mockEmbeddings({ model: 'a', input: [[1, 2, 3], [4]] }, 'm');
    expect(one.data).toHaveLength(1);
    expect(two.data[0].embedding).toEqual(one.data[0].embedding);
    expect(two.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(floats(mockEmbeddings({ model: 'a', input: '1,2,3' }, 'm'))[0]).not.toEqual(one.data[0].embedding);
  });

  it('usage counts words and punctuation runs, as the mock does for chat', () => {
    expect(mockEmbeddings({ model: 'a', input: ['Hello, world!', 'one two'] }, 'm').usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
  });
});

describe('provider', () => {
  it('declares embeddings and serves them through embed() with embeddingDimensions', async () => {
    expect(mock.capabilities?.embeddings).toBe(true);
    // Cast on purpose: the mock never logs.
    const instance = await mock.create({ embeddingDimensions: 16 }, { name: 'mock', configDir: '.', log: undefined as never });
    if (isProviderUnavailable(instance)) throw new Error(instance.unavailable);
    // Cast on purpose: only the fields the embeddings path reads.
    const call = { provider: 'mock', model: 'mock-embed', signal: new AbortController().signal, embedding: { model: 'alias', input: 'hi' } } as unknown as EmbeddingCall;
    const r = await instance.embed!(call);
    expect(r).toMatchObject({ object: 'list', model: 'mock-embed', usage: { prompt_tokens: 1, total_tokens: 1 } });
    expect(r.data[0].embedding).toHaveLength(16);
  });
});
