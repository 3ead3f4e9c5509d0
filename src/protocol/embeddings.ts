/**
 * Provider-agnostic fix-ups of an embeddings answer: the `model` that answered, indexes, usage
 * totals, and the client's `encoding_format`. Providers return float vectors; a client that asked
 * for base64 gets OpenAI's encoding (little-endian float32, base64), which the official SDKs
 * decode (the openai SDK asks for base64 by default).
 */
import type { EmbeddingRequest, EmbeddingResponse } from '../openai-types.ts';
import type { RouteTarget } from '../plugin-api.ts';

export function normalizeEmbeddings(body: EmbeddingResponse, request: EmbeddingRequest, target: Pick<RouteTarget, 'model'>): EmbeddingResponse {
  body.object = 'list';
  if (!body.model) body.model = target.model;
  const base64 = request.encoding_format === 'base64';
  body.data.forEach((item, i) => {
    item.object = 'embedding';
    if (typeof item.index !== 'number') item.index = i;
    if (base64 && Array.isArray(item.embedding)) item.embedding = toBase64(item.embedding);
    else if (!base64 && typeof item.embedding === 'string') item.embedding = fromBase64(item.embedding);
  });
  const usage = (body.usage ??= { prompt_tokens: 0, total_tokens: 0 });
  if (typeof usage.total_tokens !== 'number') usage.total_tokens = usage.prompt_tokens;
  return body;
}

/** Float vector → base64 of its little-endian float32 bytes. */
export function toBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

/** base64 of little-endian float32 bytes → float vector. */
export function fromBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
