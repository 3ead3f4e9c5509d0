/**
 * Bedrock's own token counter (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html):
 * `POST /model/{modelId}/count-tokens` with the Converse request's messages, system, toolConfig and
 * additionalModelRequestFields under `input.converse`, answered with `inputTokens`. Free, and it
 * generates nothing; models that cannot count answer an error (a fallback target, or the client, sees it).
 */
import type { ProviderCall } from '../../plugin-api.ts';
import type { HttpRequestSpec } from '../../providers/http-provider.ts';
import { buildConverseBody, type ConverseRequestSettings } from './request.ts';

/** The Converse fields CountTokens takes (ConverseTokensRequest). */
const COUNTED = ['messages', 'system', 'toolConfig', 'additionalModelRequestFields'] as const;

export function buildConverseCountTokensRequest(call: ProviderCall, settings: ConverseRequestSettings = {}): HttpRequestSpec {
  const body = buildConverseBody(call, settings);
  const converse: Record<string, unknown> = {};
  for (const name of COUNTED) if (body[name] !== undefined) converse[name] = body[name];
  return { path: `/model/${encodeURIComponent(call.model)}/count-tokens`, body: { input: { converse } } };
}

export function converseTokenCount(body: unknown): number {
  const n = body && typeof body === 'object' ? (body as { inputTokens?: unknown }).inputTokens : undefined;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new SyntaxError('the CountTokens answer has no inputTokens number');
  return n;
}
