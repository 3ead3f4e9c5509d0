/**
 * Gemini embeddings, `POST /{apiVersion}/models/{model}:batchEmbedContents`
 * (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents): one EmbedContentRequest
 * per text (`content.parts[{text}]`, `outputDimensionality` from `dimensions`, an optional
 * `taskType`), answered by `embeddings[].values` in the same order. A batch takes at most 100
 * requests, so a longer input is split into several batches (the HTTP core sends them and joins
 * the answers).
 *
 * Gemini reports no token counts for embeddings, so usage is estimated: a token is about 4
 * characters for Gemini models (https://ai.google.dev/gemini-api/docs/tokens), so each text counts
 * ceil(characters / 4). Cost and token limits then count roughly what Google bills.
 */
import type { EmbeddingCall, EmbeddingResponse } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';

/** "at most 100 requests can be in one batch" (BatchEmbedContentsRequest.requests). */
export const MAX_BATCH = 100;

/** Gemini's TaskType values (https://ai.google.dev/api/embeddings#tasktype). */
export const TASK_TYPES = [
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
] as const;

export interface EmbedContentRequest {
  model: string;
  content: { parts: Array<{ text: string }> };
  taskType?: string;
  outputDimensionality?: number;
}

export interface BatchEmbedContentsRequest {
  requests: EmbedContentRequest[];
}

/**
 * The batches for one call. `taskType` is the request's `task_type` (an extension field, so one
 * provider serves queries and documents alike), else the provider's `embeddingTaskType`, else
 * unset (the model's default).
 */
export function buildBatchEmbedRequests(call: EmbeddingCall, settings: { taskType?: string } = {}): BatchEmbedContentsRequest[] {
  const texts = textInputs(call);
  const model = resourceName(call.model);
  const requested = call.embedding.task_type;
  const taskType = typeof requested === 'string' && requested ? requested : settings.taskType;
  const dimensions = call.embedding.dimensions;
  const one = (text: string): EmbedContentRequest => {
    const request: EmbedContentRequest = { model, content: { parts: [{ text }] } };
    if (taskType) request.taskType = taskType;
    if (typeof dimensions === 'number') request.outputDimensionality = dimensions;
    return request;
  };
  const batches: BatchEmbedContentsRequest[] = [];
  for (let i = 0; i < texts.length; i += MAX_BATCH) batches.push({ requests: texts.slice(i, i + MAX_BATCH).map(one) });
  return batches;
}

/** One batch's answer → the OpenAI list for its texts, usage estimated from them. */
export function toEmbeddings(body: unknown, call: EmbeddingCall, batch: BatchEmbedContentsRequest): EmbeddingResponse {
  const embeddings = (body as { embeddings?: unknown } | null)?.embeddings;
  if (!Array.isArray(embeddings)) throw new SyntaxError('the batchEmbedContents answer has no embeddings array');
  if (embeddings.length !== batch.requests.length) throw new SyntaxError(`batchEmbedContents answered ${embeddings.length} embeddings for ${batch.requests.length} texts`);
  const data = embeddings.map((e, index) => {
    const values = (e as { values?: unknown } | null)?.values;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) throw new SyntaxError(`embeddings[${index}] has no values array`);
    return { object: 'embedding' as const, index, embedding: values as number[] };
  });
  const tokens = batch.requests.reduce((sum, r) => sum + estimateTokens(r.content.parts[0].text), 0);
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** Google's rule of thumb: about 4 characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The texts to embed. Gemini embeds text only: token arrays (valid OpenAI input, tokenized for
 * OpenAI's models) mean nothing to it, so they are refused rather than sent as numbers.
 */
function textInputs(call: EmbeddingCall): string[] {
  const input = call.embedding.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((x) => typeof x === 'string')) return input as string[];
  throw new GatewayError('unsupported_parameter', `${call.provider}: model ${call.model} embeds text only; token arrays in 'input' are not supported. Send the text instead.`, { param: 'input' });
}

/** The model's resource name in a request body: `models/x` (or a tuned model's own name). */
function resourceName(model: string): string {
  return model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
}
