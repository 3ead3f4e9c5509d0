/**
 * Converse response → OpenAI chat completion. Text blocks are joined into `content`, `toolUse`
 * blocks become `tool_calls` (input re-serialised as the arguments string), reasoning text is
 * exposed as `reasoning_content` (the field OpenAI-compatible servers use), and each reasoning
 * block with its signature, or redacted, as the gateway's `thinking_blocks` (sent back on the
 * next turn). Bedrock does not echo the model, so the answer names the target's model id.
 */
import type { ChatCompletion, FinishReason, ThinkingBlock, ToolCall, Usage } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import type { ConverseResponse, ConverseUsage } from './native.ts';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function finishReason(stop: string | null | undefined): FinishReason | null {
  return stop ? (FINISH[stop] ?? 'stop') : null;
}

/**
 * Bedrock's inputTokens leave out the cache reads and writes; OpenAI's prompt_tokens include
 * them (and itemise the reads as cached_tokens).
 */
export function usageOf(u: ConverseUsage): Usage {
  const cacheRead = u.cacheReadInputTokens ?? u.cacheReadInputTokenCount ?? 0;
  const cacheWrite = u.cacheWriteInputTokens ?? u.cacheWriteInputTokenCount ?? 0;
  const prompt = (u.inputTokens ?? 0) + cacheRead + cacheWrite;
  const completion = u.outputTokens ?? 0;
  // Cache writes are billed at their own rate: itemised (a gateway extension) when there are any.
  const details = cacheWrite > 0 ? { cached_tokens: cacheRead, cache_write_tokens: cacheWrite } : { cached_tokens: cacheRead };
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: details };
}

export function converseToCompletion(body: unknown, call: ProviderCall): ChatCompletion {
  const r = body as ConverseResponse;
  const content = r && typeof r === 'object' ? r.output?.message?.content : undefined;
  if (!Array.isArray(content)) throw new SyntaxError('the answer has no output.message.content array');
  let text = '';
  let reasoning = '';
  const thinking: ThinkingBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (!block || typeof block !== 'object') continue;
    if (typeof block.text === 'string') text += block.text;
    else if (block.toolUse) {
      const t = block.toolUse;
      toolCalls.push({ id: t.toolUseId ?? '', type: 'function', function: { name: t.name ?? '', arguments: JSON.stringify(t.input ?? {}) } });
    } else if (block.reasoningContent) {
      const r = block.reasoningContent;
      if (typeof r.redactedContent === 'string' && r.redactedContent) thinking.push({ type: 'redacted_thinking', data: r.redactedContent });
      else if (typeof r.reasoningText?.text === 'string') {
        reasoning += r.reasoningText.text;
        const signature = r.reasoningText.signature;
        thinking.push(typeof signature === 'string' && signature ? { type: 'thinking', thinking: r.reasoningText.text, signature } : { type: 'thinking', thinking: r.reasoningText.text });
      }
    }
  }
  const message: ChatCompletion['choices'][0]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : ''), refusal: null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length) message.thinking_blocks = thinking;
  return {
    id: `chatcmpl-${call.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(r.stopReason) ?? 'stop' }],
    usage: usageOf(r.usage ?? {}),
  };
}
