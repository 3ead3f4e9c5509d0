/**
 * Anthropic's named SSE events → chat.completion.chunk objects, stateful per attempt.
 *
 *   message_start            id, model and prompt usage remembered (no chunk yet, see below)
 *   content_block_start      tool_use → a tool-call chunk with id and name (tool calls are numbered
 *                            among tool_use blocks only); text with initial text → content
 *   content_block_delta      text_delta → content; input_json_delta → argument fragments;
 *                            thinking_delta → `reasoning_content`; signature_delta → the
 *                            gateway's `thinking_blocks` (the signature); citations → nothing;
 *                            redacted_thinking (at its start) → `thinking_blocks`
 *   message_delta            the finish chunk (stop_reason mapped); usage updated
 *   message_stop             a usage-only chunk (choices: []); the core strips it unless asked
 *   ping, content_block_stop nothing
 *   error                    throws an UpstreamError (overloaded_error → 529, retryable)
 *
 * The `role: assistant` delta rides on the first chunk that carries something, not on a chunk of
 * its own at message_start: Anthropic's overloaded errors usually come right after message_start,
 * and until the first chunk exists the core can still retry, fall back or answer a proper HTTP
 * error. A stream that ends without message_stop is a protocol failure.
 */
import type { ChatCompletionChunk, FinishReason } from '../../openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { ChunkBuilder, type ChunkDelta } from '../../protocol/chunks.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { finishReason, usageOf } from './response.ts';
import { failureOf, statusOf } from './errors.ts';
import type { AnthropicStreamEvent, AnthropicUsage } from './native.ts';

type EventOf<T extends AnthropicStreamEvent['type']> = Extract<AnthropicStreamEvent, { type: T }>;

export function createAnthropicStreamTranslator(call: ProviderCall): StreamTranslator {
  const chunks = new ChunkBuilder(call);
  const usage: AnthropicUsage = {};
  /** Anthropic content block index → OpenAI tool_calls index. */
  const toolIndex = new Map<number, number>();
  let finished = false;
  let stopped = false;

  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null): ChatCompletionChunk => chunks.delta(delta, finish);

  const blockStart = (data: EventOf<'content_block_start'>): ChatCompletionChunk | undefined => {
    const block = data.content_block;
    if (block?.type === 'tool_use') {
      const index = toolIndex.size;
      toolIndex.set(data.index, index);
      const start = { index, id: block.id, type: 'function' as const, function: { name: block.name, arguments: '' } };
      return chunk(chunks.started() ? { tool_calls: [start] } : { content: null, tool_calls: [start] });
    }
    if (block?.type === 'text' && block.text) return chunk({ content: block.text });
    if (block?.type === 'redacted_thinking' && block.data) return chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: block.data }] });
    return undefined; // text starts empty; thinking, server tools: nothing yet
  };

  const blockDelta = (data: EventOf<'content_block_delta'>): ChatCompletionChunk | undefined => {
    const delta = data.delta;
    switch (delta?.type) {
      case 'text_delta':
        return delta.text ? chunk({ content: delta.text }) : undefined;
      case 'input_json_delta': {
        // Only for function tools (server tools stream their input too); the first fragment is often empty.
        const index = toolIndex.get(data.index);
        if (index === undefined || !delta.partial_json) return undefined;
        return chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
      }
      case 'thinking_delta':
        return delta.thinking ? chunk({ reasoning_content: delta.thinking }) : undefined;
      case 'signature_delta':
        return delta.signature ? chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: delta.signature }] }) : undefined;
      default:
        return undefined; // citations_delta: nothing an OpenAI client can use
    }
  };

  return {
    push(event) {
      // The wire's word for it: the cases below guard what they read.
      const data = (event as SseJsonEvent | undefined)?.data as AnthropicStreamEvent | undefined;
      switch (data?.type) {
        case 'message_start': {
          const message = data.message;
          if (typeof message?.id === 'string' && message.id) chunks.id = message.id;
          if (typeof message?.model === 'string' && message.model) chunks.model = message.model;
          Object.assign(usage, message?.usage);
          return undefined;
        }
        case 'content_block_start':
          return blockStart(data);
        case 'content_block_delta':
          return blockDelta(data);
        case 'message_delta':
          // Newer API versions repeat the (cumulative) input and cache counts here.
          Object.assign(usage, data.usage);
          if (finished) return undefined;
          finished = true;
          return chunk({}, finishReason(data.delta?.stop_reason) ?? 'stop');
        case 'message_stop':
          stopped = true;
          return chunks.usage(usageOf(usage));
        case 'error':
          throw UpstreamError.http(call.provider, statusOf(data.error?.type), failureOf(data));
        default:
          return undefined; // ping, content_block_stop, event types added later
      }
    },
    end() {
      if (!stopped) throw UpstreamError.protocol(call.provider, 'the stream ended early (no message_stop)');
      return undefined;
    },
  };
}
