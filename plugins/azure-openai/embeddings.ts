/**
 * Azure OpenAI embeddings: OpenAI's request and answer (plugins/openai/embeddings.ts) behind
 * Azure's URLs, the same two forms as chat
 * (https://learn.microsoft.com/azure/ai-services/openai/reference#embeddings):
 *
 * - `deployments`: `POST /openai/deployments/{deployment}/embeddings?api-version=...`, the
 *   target's model naming the deployment;
 * - `v1`: `POST /openai/v1/embeddings`, the deployment in the body's `model`.
 *
 * Token arrays, `dimensions` (text-embedding-3 deployments) and `user` pass through; floats are
 * asked for as with OpenAI.
 */
import type { AzureOptions } from './index.ts';

/** The path for one embeddings request; `apiVersion` already defaulted by the caller. */
export function azureEmbeddingsPath(options: Pick<AzureOptions, 'mode'> & { apiVersion: string }, deployment: string): string {
  if (options.mode === 'v1') return '/openai/v1/embeddings';
  return `/openai/deployments/${encodeURIComponent(deployment)}/embeddings?api-version=${encodeURIComponent(options.apiVersion)}`;
}
