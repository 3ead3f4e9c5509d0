/**
 * `embedContent` and `batchEmbedContents` (https://ai.google.dev/api/embeddings) ↔ the gateway's
 * embeddings request and answer: each request's text parts (joined) are one input,
 * `outputDimensionality` is `dimensions`, `taskType` rides as `task_type` (the gemini provider
 * sends it on; others ignore it). A batch must ask for one model and one set of options, as a
 * single embeddings request carries them; `title` has no chat-side form and is dropped.
 */
import type { EmbeddingRequest, EmbeddingResponse } from '../../openai-types.ts';
import type { Drops } from './drops.ts';
import { arrayAt, integerAt, invalid, isObject, type Json, objectAt, stringAt } from './fields.ts';

export function embeddingRequestOf(body: unknown, model: string, batch: boolean, drops: Drops): EmbeddingRequest {
  if (!isObject(body)) throw invalid('body', 'expected a JSON object');
  const requests = batch ? arrayAt(body.requests, 'requests').map((r, i) => objectAt(r, `requests[${i}]`)) : [body];
  if (!requests.length) throw invalid('requests', 'expected at least one request');
  const at = (i: number, field: string) => (batch ? `requests[${i}].${field}` : field);
  const input = requests.map((r, i) => textOf(objectAt(r.content, at(i, 'content')), at(i, 'content')));
  const request: EmbeddingRequest = { model, input };
  const first = requests[0];
  if (first.outputDimensionality != null) request.dimensions = integerAt(first.outputDimensionality, at(0, 'outputDimensionality'));
  if (first.taskType != null) request.task_type = stringAt(first.taskType, at(0, 'taskType'));
  requests.forEach((r, i) => {
    for (const field of ['outputDimensionality', 'taskType'] as const) {
      if (r[field] !== first[field]) throw invalid(at(i, field), `every request of a batch must ask for the same ${field}`);
    }
    if (r.title != null) drops.add(at(i, 'title'), 'embeddings requests have no title');
  });
  return request;
}

function textOf(content: Json, param: string): string {
  return arrayAt(content.parts, `${param}.parts`)
    .map((p, j) => {
      const part = objectAt(p, `${param}.parts[${j}]`);
      if (typeof part.text !== 'string') throw invalid(`${param}.parts[${j}]`, 'only text parts can be embedded');
      return part.text;
    })
    .join('');
}

/** The embeddings answer in Gemini's shape: one `embedding`, or `embeddings` in request order. */
export function embeddingsToGemini(response: EmbeddingResponse, batch: boolean): Json {
  const values = [...response.data].sort((a, b) => a.index - b.index).map((d) => ({ values: d.embedding }));
  return batch ? { embeddings: values } : { embedding: values[0] };
}
