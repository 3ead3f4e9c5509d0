/**
 * OpenAI embeddings, `POST {baseUrl}/embeddings` (https://platform.openai.com/docs/api-reference/embeddings/create):
 * the wire format is already ours, so the request passes through with the target's model, and
 * the answer is checked and brought to float vectors. Every OpenAI-compatible server that serves
 * /embeddings (vLLM, Ollama, LM Studio, Together, Mistral...) goes through here, and Azure too.
 */
import type { Embedding, EmbeddingCall, EmbeddingRequest, EmbeddingResponse } from 'switchyard-gateway';

/**
 * The client's request with the target's model. Floats are always asked for: the provider
 * contract answers floats and the core encodes base64 for the clients that want it, in one place.
 * Token arrays, `dimensions`, `user` and any extra field pass through as sent.
 */
export function buildEmbeddingsBody(call: EmbeddingCall): EmbeddingRequest {
  return { ...call.embedding, model: call.model, encoding_format: 'float' };
}

/**
 * The upstream list with float vectors. A server that answers base64 anyway (some ignore
 * `encoding_format`) is decoded: OpenAI's base64 is the vector's little-endian float32 bytes.
 * Servers that report no usage get an estimate (see `estimateInputTokens`) so cost and token
 * limits still count something.
 */
export function toEmbeddings(body: unknown, call: EmbeddingCall): EmbeddingResponse {
  const b = body as Partial<EmbeddingResponse> | null;
  if (!b || typeof b !== 'object' || !Array.isArray(b.data)) throw new SyntaxError('the embeddings answer has no data array');
  const data: Embedding[] = b.data.map((item, position) => {
    if (!item || typeof item !== 'object') throw new SyntaxError(`embeddings data[${position}] is not an object`);
    return { object: 'embedding', index: typeof item.index === 'number' ? item.index : position, embedding: floatsOf(item.embedding, position) };
  });
  data.sort((x, y) => x.index - y.index);
  const usage = validUsage(b.usage) ?? { prompt_tokens: estimateInputTokens(call.embedding.input), total_tokens: estimateInputTokens(call.embedding.input) };
  return { ...b, object: 'list', data, model: typeof b.model === 'string' && b.model ? b.model : call.model, usage };
}

function floatsOf(embedding: unknown, position: number): number[] {
  if (Array.isArray(embedding) && embedding.every((x) => typeof x === 'number')) return embedding;
  if (typeof embedding === 'string') return decodeFloat32Base64(embedding);
  throw new SyntaxError(`embeddings data[${position}].embedding is neither a float array nor base64`);
}

/** Base64 of little-endian float32 values (OpenAI's `encoding_format: "base64"`) → numbers. */
export function decodeFloat32Base64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw new SyntaxError(`a base64 embedding of ${bytes.length} bytes is not float32 values`);
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

function validUsage(usage: unknown): EmbeddingResponse['usage'] | undefined {
  const u = usage as EmbeddingResponse['usage'] | undefined;
  if (!u || typeof u !== 'object' || typeof u.prompt_tokens !== 'number') return undefined;
  return { ...u, total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens };
}

/**
 * Tokens of an `input` when the server does not say: a token is about 4 characters of English
 * text (OpenAI's rule of thumb, https://help.openai.com/en/articles/4936856), rounded up per
 * text; token arrays count as given.
 */
export function estimateInputTokens(input: EmbeddingRequest['input']): number {
  const one = (x: unknown): number => (typeof x === 'string' ? Math.ceil(x.length / 4) : Array.isArray(x) ? x.length : 0);
  if (!Array.isArray(input)) return one(input);
  if (input.every((x) => typeof x === 'number')) return input.length;
  return (input as unknown[]).reduce<number>((sum, x) => sum + one(x), 0);
}
