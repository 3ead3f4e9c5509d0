/**
 * Vertex AI text embeddings, `POST .../publishers/google/models/{model}:predict`
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 * `instances[{content, task_type?}]` and `parameters.outputDimensionality` from `dimensions`,
 * answered by `predictions[].embeddings.{values, statistics.token_count}` in the same order.
 * The text-embedding and multilingual models take up to 250 instances a request;
 * gemini-embedding-001 takes one, so a longer input is split (the HTTP core sends the requests
 * and joins the answers). Token counts are Vertex's own (`statistics.token_count`).
 */
import type { EmbeddingCall, EmbeddingResponse } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';

/** Vertex's task types (the same names as the Gemini API's). */
export const TASK_TYPES = ['RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY'] as const;

export interface PredictInstance {
  content: string;
  task_type?: string;
}

export interface PredictRequest {
  instances: PredictInstance[];
  parameters?: { outputDimensionality?: number; autoTruncate?: boolean };
}

/** Instances one request may carry for this model. */
export function batchSize(model: string): number {
  return /^gemini-embedding/.test(model) ? 1 : 250;
}

/** The `:predict` bodies for one call, in input order. */
export function buildPredictRequests(call: EmbeddingCall, settings: { taskType?: string } = {}): PredictRequest[] {
  const input = call.embedding.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : undefined;
  if (!texts)
    throw new GatewayError('unsupported_parameter', `${call.provider}: model ${call.model} embeds text only; token arrays in 'input' are not supported. Send the text instead.`, { param: 'input' });
  const requested = call.embedding.task_type;
  const taskType = typeof requested === 'string' && requested ? requested : settings.taskType;
  const dimensions = call.embedding.dimensions;
  const size = batchSize(call.model);
  const requests: PredictRequest[] = [];
  for (let i = 0; i < texts.length; i += size) {
    const request: PredictRequest = { instances: texts.slice(i, i + size).map((content) => (taskType ? { content, task_type: taskType } : { content })) };
    if (typeof dimensions === 'number') request.parameters = { outputDimensionality: dimensions };
    requests.push(request);
  }
  return requests;
}

/** One `:predict` answer → the OpenAI list for its instances, usage from Vertex's token counts. */
export function toEmbeddings(body: unknown, call: EmbeddingCall, request: PredictRequest): EmbeddingResponse {
  const predictions = (body as { predictions?: unknown } | null)?.predictions;
  if (!Array.isArray(predictions)) throw new SyntaxError('the :predict answer has no predictions array');
  if (predictions.length !== request.instances.length) throw new SyntaxError(`:predict answered ${predictions.length} predictions for ${request.instances.length} texts`);
  let tokens = 0;
  const data = predictions.map((p, index) => {
    const embeddings = (p as { embeddings?: { values?: unknown; statistics?: { token_count?: unknown } } } | null)?.embeddings;
    const values = embeddings?.values;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) throw new SyntaxError(`predictions[${index}] has no embeddings.values array`);
    const count = embeddings?.statistics?.token_count;
    tokens += typeof count === 'number' ? count : Math.ceil(request.instances[index].content.length / 4);
    return { object: 'embedding' as const, index, embedding: values as number[] };
  });
  return { object: 'list', data, model: call.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
