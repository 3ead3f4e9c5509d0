/**
 * Gemini's own token counter (https://ai.google.dev/api/tokens#method:-models.counttokens):
 * `POST models/{model}:countTokens` with the whole generateContent request under
 * `generateContentRequest` (so the system instruction, tools and settings count as they would),
 * answered with `totalTokens`. Free, and it generates nothing.
 */
import type { ProviderCall } from '../../plugin-api.ts';
import { buildGeminiRequest, type GeminiRequestSettings } from './request.ts';

/** The countTokens body; `model` is the resource name the request names (`models/x`, `tunedModels/x`). */
export function buildGeminiCountTokensBody(call: ProviderCall, model: string, settings: GeminiRequestSettings = {}): Record<string, unknown> {
  return { generateContentRequest: { model, ...buildGeminiRequest(call, settings) } };
}

/** `totalTokens` of a countTokens answer (proto3 JSON leaves a zero out). */
export function geminiTokenCount(body: unknown): number {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new SyntaxError('the countTokens answer is not an object');
  const total = (body as { totalTokens?: unknown }).totalTokens;
  if (total === undefined) return 0;
  if (typeof total !== 'number' || !Number.isFinite(total)) throw new SyntaxError('the countTokens answer has no totalTokens number');
  return total;
}

/** The native protocol of a Gemini API `:countTokens` request (the Gemini way in, src/ingress/gemini). */
export const GEMINI_COUNT_TOKENS = 'gemini-count-tokens';

/**
 * A client's own countTokens request, passed through to the Gemini API: its generateContent body
 * (what it sent as `{contents}` or under `generateContentRequest`) under `generateContentRequest`
 * with the target's model (`models/x`), so its system instruction, tools and settings count as
 * they would be sent, untranslated.
 */
export function geminiCountTokensPassthrough(body: Readonly<Record<string, unknown>>, model: string): Record<string, unknown> {
  return { generateContentRequest: { ...body, model } };
}

/** The generateContent fields Vertex's countTokens counts, taken at its top level (it refuses the others). */
export function vertexCountTokensFields(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { contents, systemInstruction, tools, generationConfig } = body;
  return { contents, systemInstruction, tools, generationConfig };
}
