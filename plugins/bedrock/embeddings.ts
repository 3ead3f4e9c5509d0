/**
 * Bedrock embeddings through InvokeModel (`POST /model/{modelId}/invoke`), whose body is the
 * model's own format. Two families, told apart by the model id:
 *
 * - Amazon Titan Text Embeddings
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
 *   ONE text per call. V2 takes `{inputText, dimensions (256 | 512 | 1024), normalize}`, G1/v1 only
 *   `{inputText}`; the answer is `{embedding, inputTextTokenCount}`. Several inputs become several
 *   calls, sent in parallel (bounded by the provider's concurrency) and joined in order.
 * - Cohere Embed v3 and v4
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v3.html, -v4.html):
 *   `{texts (at most 96), input_type, embedding_types: ["float"]}` (v4 also `output_dimension`);
 *   the answer is `{embeddings: {float: [...]}}`, or `{embeddings: [...]}` in the older
 *   `embeddings_floats` shape. The body carries no token count: Bedrock reports it in the
 *   `x-amzn-bedrock-input-token-count` response header, which is read for every family.
 *
 * Vectors are asked for as floats and normalised (`normalize: true`, Titan's default), like
 * OpenAI's. Both families embed text only: token arrays are refused.
 */
import type { EmbeddingCall, EmbeddingResponse, Headers } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';

export type EmbeddingFamily = 'titan-v2' | 'titan-v1' | 'cohere-v3' | 'cohere-v4';

/** Cohere's limit of texts per call. */
export const COHERE_MAX_TEXTS = 96;
/** Titan calls of one request in flight at once (one call per input). */
export const EMBEDDING_CONCURRENCY = 8;
/** Cohere's `input_type` when neither the request nor the provider names one: the corpus side of search. */
export const DEFAULT_COHERE_INPUT_TYPE = 'search_document';

export interface TitanRequest {
  inputText: string;
  dimensions?: number;
  normalize?: boolean;
}

export interface CohereRequest {
  texts: string[];
  input_type: string;
  embedding_types: ['float'];
  output_dimension?: number;
}

/**
 * The family of a model id, foundation-model ARN or cross-region profile id
 * (`us.cohere.embed-v4:0`); undefined for anything else (an application inference profile ARN
 * does not name its model).
 */
export function embeddingFamilyOf(model: string): EmbeddingFamily | undefined {
  const id = model.toLowerCase();
  if (id.includes('amazon.titan-embed-text-v2')) return 'titan-v2';
  if (id.includes('amazon.titan-embed-text-v1') || id.includes('amazon.titan-embed-g1-text')) return 'titan-v1';
  if (id.includes('cohere.embed-v4')) return 'cohere-v4';
  if (/cohere\.embed-(english|multilingual)-v3/.test(id)) return 'cohere-v3';
  return undefined;
}

/** The InvokeModel path: the model id is one path segment, fully encoded (as for Converse). */
export function invokePath(model: string): string {
  return `/model/${encodeURIComponent(model)}/invoke`;
}

/**
 * The InvokeModel bodies for one call, in input order. Cohere's `input_type` is the request's
 * `input_type` (an extension field: queries and documents through one provider), else the
 * provider's `cohereInputType`, else `search_document`.
 */
export function buildEmbeddingBodies(call: EmbeddingCall, settings: { cohereInputType?: string } = {}): Array<TitanRequest | CohereRequest> {
  const family = familyOrRefuse(call);
  const texts = textInputs(call);
  const dimensions = call.embedding.dimensions;
  if (family === 'titan-v2') return texts.map((inputText) => (typeof dimensions === 'number' ? { inputText, dimensions, normalize: true } : { inputText, normalize: true }));
  if (family === 'titan-v1') {
    if (typeof dimensions === 'number') unsupportedParam(call, 'dimensions');
    return texts.map((inputText) => ({ inputText }));
  }
  if (family === 'cohere-v3' && typeof dimensions === 'number') unsupportedParam(call, 'dimensions');
  const requested = call.embedding.input_type;
  const inputType = typeof requested === 'string' && requested ? requested : (settings.cohereInputType ?? DEFAULT_COHERE_INPUT_TYPE);
  const bodies: CohereRequest[] = [];
  for (let i = 0; i < texts.length; i += COHERE_MAX_TEXTS) {
    const body: CohereRequest = { texts: texts.slice(i, i + COHERE_MAX_TEXTS), input_type: inputType, embedding_types: ['float'] };
    if (family === 'cohere-v4' && typeof dimensions === 'number') body.output_dimension = dimensions;
    bodies.push(body);
  }
  return bodies;
}

/** One InvokeModel answer → the OpenAI list for the texts of the request it answers. */
export function toEmbeddings(body: unknown, call: EmbeddingCall, request: TitanRequest | CohereRequest, headers: Headers): EmbeddingResponse {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const texts = 'texts' in request ? request.texts : [request.inputText];
  let vectors: unknown[];
  let reported: number | undefined;
  if ('texts' in request) {
    const embeddings = b.embeddings;
    const floats = Array.isArray(embeddings) ? embeddings : (embeddings as { float?: unknown } | undefined)?.float;
    if (!Array.isArray(floats)) throw new SyntaxError('the Cohere Embed answer has no float embeddings');
    if (floats.length !== texts.length) throw new SyntaxError(`Cohere Embed answered ${floats.length} embeddings for ${texts.length} texts`);
    vectors = floats;
  } else {
    const vector = b.embedding ?? (b.embeddingsByType as { float?: unknown } | undefined)?.float;
    vectors = [vector];
    if (typeof b.inputTextTokenCount === 'number') reported = b.inputTextTokenCount;
  }
  const data = vectors.map((v, index) => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new SyntaxError(`embedding ${index} of the answer is not a float array`);
    return { object: 'embedding' as const, index, embedding: v as number[] };
  });
  const tokens = reported ?? headerCount(headers) ?? texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/**
 * Bedrock's own count of the call's input tokens. When it is missing too, the estimate is
 * Cohere's and Amazon's rule of thumb: about 4 characters a token.
 */
function headerCount(headers: Headers): number | undefined {
  const raw = headers['x-amzn-bedrock-input-token-count'];
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  return raw !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined;
}

function familyOrRefuse(call: EmbeddingCall): EmbeddingFamily {
  const family = embeddingFamilyOf(call.model);
  if (family) return family;
  throw new GatewayError(
    'unsupported_parameter',
    `${call.provider}: model ${call.model} is not an embeddings model the bedrock provider knows (Amazon Titan Text Embeddings, Cohere Embed v3/v4); name one by its model id.`,
    { param: 'model' },
  );
}

/** Titan and Cohere embed text only; token arrays (OpenAI's tokenizer) mean nothing to them. */
function textInputs(call: EmbeddingCall): string[] {
  const input = call.embedding.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((x) => typeof x === 'string')) return input as string[];
  throw new GatewayError('unsupported_parameter', `${call.provider}: model ${call.model} embeds text only; token arrays in 'input' are not supported. Send the text instead.`, { param: 'input' });
}

/** 400 naming the parameter, or (dropUnsupportedParams) dropped with a log line, as for chat. */
function unsupportedParam(call: EmbeddingCall, param: string): void {
  if (!call.dropUnsupportedParams) {
    throw new GatewayError(
      'unsupported_parameter',
      `${call.provider}: the parameter '${param}' is not supported by model ${call.model}. Remove it, or set dropUnsupportedParams: true for this model in gateway.yaml.`,
      { param },
    );
  }
  call.log.info({ reqId: call.requestId, provider: call.provider, param }, `dropped unsupported parameter '${param}'`);
}
