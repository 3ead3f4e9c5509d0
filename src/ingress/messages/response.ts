/**
 * A chat completion → Anthropic's `message` (https://docs.anthropic.com/en/api/messages#response).
 *
 * Content, in the order a stream of the same answer opens its blocks: the reasoning (the
 * gateway's `thinking_blocks`, each `thinking` with its provider's signature or
 * `redacted_thinking` with its data; else `reasoning_content` as one thinking block with an empty
 * signature, there being none to give), the searches the provider ran (web-search.ts), a `text`
 * block for the content (cut at its web citations) (or for the refusal, which Anthropic says with
 * stop_reason `refusal`), then one `tool_use` block per tool call with the call's own id (the
 * client sends it back as `tool_use_id`, and the provider must see its own id again).
 *
 * Tool-call arguments that are not a JSON object become `input: {}`: a tool_use block has no
 * place for raw text, and clients send `content` back verbatim, so a made-up field would make
 * Anthropic itself refuse the next turn. (A JSON value that is not an object keeps the gateway's
 * `{ value }` wrapping, as the providers' translations do.) Arguments cut by max_tokens are the
 * usual cause; stop_reason `max_tokens` says so. A stream of the same answer passes the raw
 * fragments on, as Anthropic does, and leaves the client's SDK to parse what it can.
 */
import type { ChatCompletion } from '../../openai-types.ts';
import { parseArguments } from '../../protocol/content.ts';
import { messageIdOf, reasoningOf, stopOf, usageOf } from './message-fields.ts';
import type { AnthropicMessage, ContentBlock, MessagesRequestInfo } from './types.ts';
import { citedTextBlocks, searchBlocks } from './web-search.ts';

export function chatToMessage(completion: ChatCompletion, request: MessagesRequestInfo): AnthropicMessage {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const content: ContentBlock[] = [];
  content.push(...thinkingOf(message));
  const refusal = typeof message?.refusal === 'string' && message.refusal ? message.refusal : '';
  const text = (typeof message?.content === 'string' ? message.content : '') + refusal;
  for (const search of message?.web_search_calls ?? []) content.push(...searchBlocks(search));
  content.push(...citedTextBlocks(text, refusal ? undefined : message?.annotations));
  const calls = message?.tool_calls ?? [];
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: inputOf(call.function?.arguments) });
  return {
    id: messageIdOf(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model || (typeof request.model === 'string' ? request.model : ''),
    content,
    ...stopOf({ finishReason: choice?.finish_reason, matchedStop: choice?.stop_reason, hasToolCalls: calls.length > 0, refused: refusal !== '' }, request),
    usage: usageOf(completion.usage),
  };
}

function thinkingOf(message: ChatCompletion['choices'][number]['message'] | undefined): ContentBlock[] {
  const blocks = Array.isArray(message?.thinking_blocks) ? message.thinking_blocks : [];
  if (blocks.length) {
    return blocks.map((b) => (b.type === 'redacted_thinking' ? { type: 'redacted_thinking', data: b.data } : { type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' }));
  }
  const reasoning = reasoningOf(message);
  return reasoning ? [{ type: 'thinking', thinking: reasoning, signature: '' }] : [];
}

function inputOf(args: string | undefined): Record<string, unknown> {
  try {
    return parseArguments(args);
  } catch {
    return {};
  }
}
