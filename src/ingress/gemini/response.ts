/**
 * The chat answer → Gemini's GenerateContentResponse (https://ai.google.dev/api/generate-content#generatecontentresponse),
 * the inverse of the gemini provider's src/translate/gemini/response.ts:
 *
 * - choices → candidates (`index` kept); `reasoning_content` → a `thought: true` text part first
 *   (only when the request set `includeThoughts`, as Gemini does), `content` → a text part,
 *   `tool_calls` → `functionCall` parts with the tool call's id and parsed arguments and, when
 *   the call carried one, its `thoughtSignature`.
 * - `web_search_calls` and `annotations` (the target's own web search, asked for by a googleSearch
 *   tool) → the candidate's `groundingMetadata` (search.ts).
 * - finish_reason: stop and tool_calls → STOP, length → MAX_TOKENS, content_filter → SAFETY.
 * - usage → usageMetadata: reasoning tokens are `thoughtsTokenCount`, apart from
 *   `candidatesTokenCount` (Gemini counts them apart); cached prompt tokens
 *   `cachedContentTokenCount`.
 * - model → modelVersion (the model that really answered), id → responseId.
 */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../openai-types.ts';
import { signatureOf } from '../../translate/gemini/contents.ts';
import { isObject } from './fields.ts';
import { groundingMetadataOf } from './search.ts';
import type { GeminiCandidate, GeminiPart, GeminiResponse, GeminiUsage } from './types.ts';

const FINISH: Record<FinishReason, string> = { stop: 'STOP', tool_calls: 'STOP', function_call: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY' };

export function finishReasonOf(reason: FinishReason | null | undefined): string | undefined {
  return reason ? (FINISH[reason] ?? 'OTHER') : undefined;
}

export function usageMetadataOf(usage: Usage): GeminiUsage {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const out: GeminiUsage = { promptTokenCount: usage.prompt_tokens, candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts), totalTokenCount: usage.total_tokens };
  if (thoughts) out.thoughtsTokenCount = thoughts;
  if (cached) out.cachedContentTokenCount = cached;
  return out;
}

/** A tool call → a functionCall part; arguments that are not a JSON object are kept under `arguments`. */
export function functionCallPart(call: ToolCall): GeminiPart {
  const part: GeminiPart = { functionCall: { id: call.id, name: call.function.name, args: argsOf(call.function.arguments) } };
  const signature = signatureOf(call);
  if (signature) part.thoughtSignature = signature;
  return part;
}

function argsOf(text: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {
    // not JSON: kept as the text it is
  }
  return { arguments: text };
}

export function completionToGemini(completion: ChatCompletion, includeThoughts: boolean): GeminiResponse {
  const candidates = completion.choices.map((choice) => {
    const m = choice.message;
    const parts: GeminiPart[] = [];
    const reasoning = m.reasoning_content ?? m.reasoning;
    if (includeThoughts && typeof reasoning === 'string' && reasoning) parts.push({ text: reasoning, thought: true });
    const text = typeof m.content === 'string' ? m.content : '';
    // The citations' offsets count in the text part, after a thought part when there is one.
    const textPart = parts.length;
    if (text) parts.push({ text });
    for (const call of m.tool_calls ?? []) parts.push(functionCallPart(call));
    const candidate: GeminiCandidate = { content: { role: 'model', parts }, index: choice.index };
    const finish = finishReasonOf(choice.finish_reason);
    if (finish) candidate.finishReason = finish;
    const grounding = groundingMetadataOf(text, m.web_search_calls, m.annotations, textPart);
    if (grounding) candidate.groundingMetadata = grounding;
    return candidate;
  });
  const out: GeminiResponse = { candidates };
  if (completion.usage) out.usageMetadata = usageMetadataOf(completion.usage);
  out.modelVersion = completion.model;
  out.responseId = completion.id;
  return out;
}
