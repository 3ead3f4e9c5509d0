/**
 * The message-level fields the JSON answer (response.ts) and the stream (stream.ts) derive alike
 * from a chat answer: the id, the stop reason and the usage. One place, so a streamed answer and
 * the same answer unstreamed say the same thing.
 */
import { randomUUID } from 'node:crypto';
import type { FinishReason, Usage } from '../../openai-types.ts';
import type { MessagesRequestInfo, MessagesUsage, StopReason } from './types.ts';

/**
 * `msg_` + the chat id without its `chatcmpl-` prefix (an id that already is a Messages id, from
 * the anthropic plugin, stays as it is); a random one when the provider gave none.
 */
export function messageIdOf(chatId: unknown): string {
  if (typeof chatId !== 'string' || !chatId) return `msg_${randomUUID().replaceAll('-', '')}`;
  if (chatId.startsWith('msg_')) return chatId;
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}

/** What the chat answer said about how it ended. */
export interface ChatEnding {
  finishReason: FinishReason | string | null | undefined;
  /**
   * The choice's `stop_reason` where the server reports which stop string matched (vLLM and
   * SGLang do; OpenAI does not), else undefined.
   */
  matchedStop?: unknown;
  hasToolCalls: boolean;
  refused: boolean;
}

/**
 * finish_reason → stop_reason (https://docs.anthropic.com/en/api/handling-stop-reasons):
 * length → max_tokens; tool_calls (and the legacy function_call) → tool_use; content_filter or a
 * refusal → refusal; stop → stop_sequence when the server named one of the request's stop
 * sequences, else end_turn. A `stop` that came with tool calls (some servers say so) is tool_use.
 */
export function stopOf(ending: ChatEnding, request: MessagesRequestInfo): { stop_reason: StopReason; stop_sequence: string | null } {
  const f = ending.finishReason;
  if (f === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (f === 'content_filter' || ending.refused) return { stop_reason: 'refusal', stop_sequence: null };
  if (f === 'tool_calls' || f === 'function_call' || ending.hasToolCalls) return { stop_reason: 'tool_use', stop_sequence: null };
  const stops = Array.isArray(request.stop_sequences) ? request.stop_sequences : [];
  if (typeof ending.matchedStop === 'string' && stops.includes(ending.matchedStop)) return { stop_reason: 'stop_sequence', stop_sequence: ending.matchedStop };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Chat usage → Anthropic usage. OpenAI's prompt_tokens include the cached tokens
 * (prompt_tokens_details.cached_tokens) and, where a provider reports them, the tokens written to
 * the cache (cache_write_tokens, a gateway extension); Anthropic's input_tokens are only what is
 * left after both. https://platform.openai.com/docs/guides/prompt-caching,
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance
 */
export function usageOf(usage: Usage | null | undefined): MessagesUsage {
  const details = usage?.prompt_tokens_details;
  const cacheRead = count(details?.cached_tokens);
  const cacheWrite = count(details?.cache_write_tokens);
  const out: MessagesUsage = {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: count(usage?.completion_tokens),
  };
  // The searches the target's own web search ran, as Anthropic counts its server tool's.
  const searches = count(usage?.server_tool_use?.web_search_requests);
  if (searches) out.server_tool_use = { web_search_requests: searches };
  return out;
}

/** The answer's reasoning, under the field OpenAI-compatible servers use: `reasoning_content` (DeepSeek, the gateway's plugins) or `reasoning` (OpenRouter, Ollama). */
export function reasoningOf(message: Record<string, unknown> | undefined): string {
  if (!message) return '';
  if (typeof message.reasoning_content === 'string') return message.reasoning_content;
  if (typeof message.reasoning === 'string') return message.reasoning;
  return '';
}
