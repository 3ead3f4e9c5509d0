/** Gemini GenerateContentResponse → OpenAI chat completion. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../src/openai-types.ts';
import type { ProviderCall } from '../../src/plugin-api.ts';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: unknown; id?: string };
}

export interface GeminiCandidate {
  content?: { parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
}

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
}

const BLOCKED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

export function finishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason | null {
  if (!reason || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (hasToolCalls) return 'tool_calls';
  if (reason === 'MAX_TOKENS') return 'length';
  if (BLOCKED.has(reason)) return 'content_filter';
  return 'stop';
}

/** Thinking tokens are completion tokens in OpenAI terms, itemised as reasoning tokens. */
export function usageOf(u: GeminiUsage | undefined): Usage {
  const prompt = u?.promptTokenCount ?? 0;
  const thoughts = u?.thoughtsTokenCount ?? 0;
  const completion = (u?.candidatesTokenCount ?? 0) + thoughts;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (u?.cachedContentTokenCount) usage.prompt_tokens_details = { cached_tokens: u.cachedContentTokenCount };
  if (thoughts) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

/** Text, thinking text and function calls of one candidate. Gemini calls have no ids: we make them. */
export function partsContent(parts: GeminiPart[] | undefined, nextCallId: () => string): { text: string; reasoning: string; toolCalls: ToolCall[] } {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const p of parts ?? []) {
    if (p.functionCall) toolCalls.push({ id: p.functionCall.id ?? nextCallId(), type: 'function', function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } });
    else if (p.thought) reasoning += p.text ?? '';
    else if (typeof p.text === 'string') text += p.text;
  }
  return { text, reasoning, toolCalls };
}

export function toCompletion(body: unknown, call: ProviderCall): ChatCompletion {
  const r = body as GeminiResponse;
  if (!r || typeof r !== 'object' || (!Array.isArray(r.candidates) && !r.promptFeedback)) throw new SyntaxError('the answer has neither candidates nor promptFeedback');
  let n = 0;
  const nextCallId = () => `call_${call.requestId}_${n++}`;
  const choices: ChatCompletion['choices'] = (r.candidates ?? []).map((c, i) => {
    const { text, reasoning, toolCalls } = partsContent(c.content?.parts, nextCallId);
    const message: ChatCompletion['choices'][0]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : ''), refusal: null };
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning_content = reasoning;
    return { index: c.index ?? i, message, logprobs: null, finish_reason: finishReason(c.finishReason, toolCalls.length > 0) ?? 'stop' };
  });
  // A prompt blocked before generation has no candidates: an empty, filtered answer.
  if (!choices.length) choices.push({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' });
  return {
    id: r.responseId ? `chatcmpl-${r.responseId}` : `chatcmpl-${call.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.modelVersion || call.model,
    choices,
    usage: usageOf(r.usageMetadata),
  };
}
