/** What the scripted model's wire formats share: SSE framing, text of a content field, usage figures. */
import { streamAnswer, type ScriptedResponse } from '../../../src/kit/testing/index.ts';

/** An SSE answer, one event per item (`data` objects as JSON, a string as is). */
export function sse(events: Array<{ event?: string; data: unknown }>): ScriptedResponse {
  return streamAnswer(events.map(({ event, data }) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`));
}

/** The text of a content field: a string, or the text parts of an array of parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : JSON.stringify(p))).join('');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** Small, fixed usage in each provider's shape. */
export const usage = {
  chat: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  responses: { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 },
  messages: { input_tokens: 20, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  gemini: { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 },
};
