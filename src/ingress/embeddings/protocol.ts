/** POST /v1/embeddings: routed by model alias like chat, served by the providers that embed. */
import { GatewayError } from '../../errors.ts';
import type { EmbeddingRequest } from '../../openai-types.ts';
import { defineProtocol, openAiError } from '../protocol.ts';

export const embeddingsProtocol = defineProtocol<EmbeddingRequest>({
  name: 'embeddings',
  operation: 'embeddings',
  paths: ['/v1/embeddings', '/embeddings'],
  parse(body) {
    if (!isEmbeddingObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
    return body;
  },
  begin: (request) => ({ body: request, answer: (response) => response.body }),
  error: openAiError,
});

/** A JSON object; its fields are checked by the `validate` stage against the embeddings schema. */
function isEmbeddingObject(value: unknown): value is EmbeddingRequest {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
