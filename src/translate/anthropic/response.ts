/**
 * Anthropic Messages response → OpenAI chat completion. Text blocks are joined into `content`,
 * `tool_use` blocks become `tool_calls` (input re-serialised as the arguments string), extended
 * thinking is exposed as `reasoning_content` (the field OpenAI-compatible servers use for it), and
 * with its signature, like redacted thinking, as the gateway's `thinking_blocks` (sent back on the
 * next turn). Web search (server_tool_use with its web_search_tool_result, text citations) →
 * the gateway's `web_search_calls` and `annotations` (web-search.ts); other server tools' blocks
 * are left out.
 */
import type { ChatCompletion, FinishReason, ThinkingBlock, ToolCall, UrlCitation, Usage, WebSearchCall } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { failureOf, statusOf } from './errors.ts';
import type { AnthropicContentBlock, AnthropicErrorBody, AnthropicResponse, AnthropicUsage } from './native.ts';
import { urlCitation } from '../chat/web-search.ts';
import { citedPages, searchCallOf } from './web-search.ts';

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
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: details };
  const searches = u.server_tool_use?.web_search_requests;
  if (typeof searches === 'number' && searches > 0) usage.server_tool_use = { web_search_requests: searches };
  return usage;
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
  const searches: WebSearchCall[] = [];
  const annotations: UrlCitation[] = [];
  for (const block of r.content) {
    if (block.type === 'text') {
      const start = text.length;
      text += block.text ?? '';
      for (const page of citedPages(block.citations)) annotations.push(urlCitation(start, text.length, page.url, page.title));
    } else if (block.type === 'server_tool_use') {
      const search = searchCallOf(block, resultOf(r.content, block.id));
      if (search) searches.push(search);
    } else if (block.type === 'thinking') {
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
  if (searches.length) message.web_search_calls = searches;
  if (annotations.length) message.annotations = annotations;
  return {
    id: r.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.model || call.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(r.stop_reason) }],
    usage: usageOf(r.usage ?? {}),
  };
}

/** The web_search_tool_result block that answers a server_tool_use. */
function resultOf(blocks: AnthropicContentBlock[], id: string | undefined): Extract<AnthropicContentBlock, { type: 'web_search_tool_result' }> | undefined {
  return blocks.find((b): b is Extract<AnthropicContentBlock, { type: 'web_search_tool_result' }> => b.type === 'web_search_tool_result' && b.tool_use_id === id);
}
