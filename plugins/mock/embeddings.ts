/**
 * Deterministic fake embeddings: each input seeds a PRNG from a hash of its text (or its token
 * array), whose draws, L2-normalised, are the vector. Equal inputs give equal vectors in every
 * process and run, different ones almost orthogonal vectors, as a real model's unrelated texts.
 * `dimensions` keeps the first n draws (then normalises), the way OpenAI's text-embedding-3
 * shortens a vector. Usage counts tokens with the mock's own counter.
 */
import { createHash } from 'node:crypto';
import type { EmbeddingRequest, EmbeddingResponse } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';
import { countTokens } from './generate.ts';
import { mulberry32 } from 'switchyard-gateway/kit';

export const DEFAULT_EMBEDDING_DIMENSIONS = 256;
/** The most dimensions the mock makes (text-embedding-3-large has 3072): a bound on the work one request can ask for. */
export const MAX_EMBEDDING_DIMENSIONS = 8192;

/** Floats for the request's inputs, `request.dimensions` overriding the provider's `dimensions`. */
export function mockEmbeddings(request: EmbeddingRequest, model: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): EmbeddingResponse {
  const size = request.dimensions ?? dimensions;
  if (!Number.isInteger(size) || size < 1 || size > MAX_EMBEDDING_DIMENSIONS) {
    throw new GatewayError('invalid_request', `dimensions must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS} for the mock provider; got ${String(size)}.`, { param: 'dimensions' });
  }
  const inputs = inputsOf(request.input);
  const data = inputs.map((input, index) => ({ object: 'embedding' as const, index, embedding: vectorOf(input, size) }));
  const tokens = inputs.reduce((sum, x) => sum + (typeof x === 'string' ? countTokens(x) : x.length), 0);
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** One string, strings, one token array or token arrays → the list of inputs. */
function inputsOf(input: EmbeddingRequest['input']): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) return [input as number[]];
  return input as Array<string | number[]>;
}

/** The unit vector of one input: seeded draws in [-1, 1), divided by their length. */
export function vectorOf(input: string | number[], dimensions: number): number[] {
  const next = mulberry32(seedOf(input));
  const v = new Array<number>(dimensions);
  let sumSquares = 0;
  for (let i = 0; i < dimensions; i++) {
    v[i] = next() * 2 - 1;
    sumSquares += v[i] * v[i];
  }
  const norm = Math.sqrt(sumSquares) || 1;
  for (let i = 0; i < dimensions; i++) v[i] /= norm;
  return v;
}

/** 32 bits of SHA-256 over the text, or over the token array (prefixed, so "1,2" and [1, 2] differ). */
function seedOf(input: string | number[]): number {
  const key = typeof input === 'string' ? `t:${input}` : `n:${input.join(',')}`;
  return createHash('sha256').update(key).digest().readUInt32LE(0);
}
