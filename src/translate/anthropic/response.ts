/**
 * Anthropic Messages response → OpenAI chat completion. Text blocks are joined into `content`,
 * `tool_use` blocks become `tool_calls` (input re-serialised as the arguments string), extended
 * thinking is exposed as `reasoning_content` (the field OpenAI-compatible servers use for it), and
 * with its signature, like redacted thinking, as the gateway's `thinking_blocks` (sent back on the
 * next turn); citations and server-tool blocks are left out.
 */
import type { ChatCompletion, FinishReason, ThinkingBlock, ToolCall, Usage } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { failureOf, statusOf } from './errors.ts';
import type { AnthropicErrorBody, AnthropicResponse, AnthropicUsage } from './native.ts';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReason(stop: string | null | undefined): FinishReason | null {
  return stop ? (FINISH[stop] ?? 'stop') : null;
}

/** Cached and cache-written prompt tokens are prompt tokens too; the cached ones are also itemised. */
export function usageOf(u: AnthropicUsage): Usage {
  const cached = u.cache_read_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + cached + (u.cache_creation_input_tokens ?? 0);
  const completion = u.output_tokens ?? 0;
  // Cache writes are billed at their own rate: itemised (a gateway extension) when there are any.
  const written = u.cache_creation_input_tokens ?? 0;
  const details = written > 0 ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached };
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: details };
}

export function anthropicToCompletion(body: unknown, call: ProviderCall): ChatCompletion {
  // The wire's word for it, checked below before it is read.
  const r = body as AnthropicResponse | AnthropicErrorBody | null;
  if (r && typeof r === 'object' && r.type === 'error') throw UpstreamError.http(call.provider, statusOf(r.error?.type), failureOf(r));
  if (!r || typeof r !== 'object' || !('content' in r) || !Array.isArray(r.content)) throw new SyntaxError('the answer has no content array');
  let text = '';
  let reasoning = '';
  const thinking: ThinkingBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of r.content) {
    if (block.type === 'text') text += block.text ?? '';
    else if (block.type === 'thinking') {
      reasoning += block.thinking ?? '';
      thinking.push(block.signature ? { type: 'thinking', thinking: block.thinking ?? '', signature: block.signature } : { type: 'thinking', thinking: block.thinking ?? '' });
    } else if (block.type === 'redacted_thinking' && block.data) thinking.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use') toolCalls.push({ id: block.id ?? '', type: 'function', function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) } });
  }
  const message: ChatCompletion['choices'][0]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : ''), refusal: null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  // Extended thinking, under the field name OpenAI-compatible servers use for it.
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length) message.thinking_blocks = thinking;
  return {
    id: r.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.model || call.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(r.stop_reason) }],
    usage: usageOf(r.usage ?? {}),
  };
}
