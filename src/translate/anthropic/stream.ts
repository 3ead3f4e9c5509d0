/**
 * Anthropic's named SSE events → chat.completion.chunk objects, stateful per attempt.
 *
 *   message_start            id, model and prompt usage remembered (no chunk yet, see below)
 *   content_block_start      tool_use → a tool-call chunk with id and name (tool calls are numbered
 *                            among tool_use blocks only); text with initial text → content
 *   content_block_delta      text_delta → content; input_json_delta → argument fragments;
 *                            thinking_delta → `reasoning_content`; signature_delta → the
 *                            gateway's `thinking_blocks` (the signature); citations_delta →
 *                            remembered for its text block; redacted_thinking (at its start) →
 *                            `thinking_blocks`; server_tool_use (web_search) → its input
 *                            remembered; web_search_tool_result (whole at its start) → one
 *                            `web_search_calls` entry (web-search.ts)
 *   content_block_stop       a text block that cited web pages → `annotations` over the block
 *   message_delta            the finish chunk (stop_reason mapped); usage updated
 *   message_stop             a usage-only chunk (choices: []); the core strips it unless asked
 *   ping                     nothing
 *   error                    throws an UpstreamError (overloaded_error → 529, retryable)
 *
 * The `role: assistant` delta rides on the first chunk that carries something, not on a chunk of
 * its own at message_start: Anthropic's overloaded errors usually come right after message_start,
 * and until the first chunk exists the core can still retry, fall back or answer a proper HTTP
 * error. A stream that ends without message_stop is a protocol failure.
 */
import type { ChatCompletionChunk, FinishReason } from '../../openai-types.ts';
import { urlCitation } from '../chat/web-search.ts';
import { citedPages, searchCallOf } from './web-search.ts';
import type { AnthropicCitation } from './native.ts';
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
  /** The content streamed so far, in UTF-16 units: where a text block's citation starts. */
  let written = 0;
  /** Open text blocks (by block index): where each began and the citations it carries. */
  const texts = new Map<number, { start: number; citations: AnthropicCitation[] }>();
  /** Server tool calls (by their id): the name and the input as it streams. */
  const serverCalls = new Map<string, { name?: string; input: string }>();
  /** Block index → server tool call id. */
  const serverIndex = new Map<number, string>();

  const text = (value: string): ChatCompletionChunk => {
    written += value.length;
    return chunk({ content: value });
  };

  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null): ChatCompletionChunk => chunks.delta(delta, finish);

  const blockStart = (data: EventOf<'content_block_start'>): ChatCompletionChunk | undefined => {
    const block = data.content_block;
    if (block?.type === 'tool_use') {
      const index = toolIndex.size;
      toolIndex.set(data.index, index);
      const start = { index, id: block.id, type: 'function' as const, function: { name: block.name, arguments: '' } };
      return chunk(chunks.started() ? { tool_calls: [start] } : { content: null, tool_calls: [start] });
    }
    if (block?.type === 'text') {
      texts.set(data.index, { start: written, citations: [...(block.citations ?? [])] });
      return block.text ? text(block.text) : undefined;
    }
    if (block?.type === 'server_tool_use') {
      const id = block.id ?? String(data.index);
      serverIndex.set(data.index, id);
      const input = block.input && typeof block.input === 'object' && Object.keys(block.input).length ? JSON.stringify(block.input) : '';
      serverCalls.set(id, { name: block.name, input });
      return undefined;
    }
    if (block?.type === 'web_search_tool_result') {
      const use = serverCalls.get(block.tool_use_id ?? '');
      const search = use && searchCallOf({ type: 'server_tool_use', id: block.tool_use_id, name: use.name, input: parsed(use.input) }, block);
      return search ? chunk({ web_search_calls: [search] }) : undefined;
    }
    if (block?.type === 'redacted_thinking' && block.data) return chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: block.data }] });
    return undefined; // text starts empty; thinking, server tools: nothing yet
  };

  const blockDelta = (data: EventOf<'content_block_delta'>): ChatCompletionChunk | undefined => {
    const delta = data.delta;
    switch (delta?.type) {
      case 'text_delta':
        return delta.text ? text(delta.text) : undefined;
      case 'input_json_delta': {
        // A server tool's input is kept for its result; the first fragment is often empty.
        const server = serverCalls.get(serverIndex.get(data.index) ?? '');
        if (server) server.input += delta.partial_json ?? '';
        const index = toolIndex.get(data.index);
        if (index === undefined || !delta.partial_json) return undefined;
        return chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
      }
      case 'thinking_delta':
        return delta.thinking ? chunk({ reasoning_content: delta.thinking }) : undefined;
      case 'signature_delta':
        return delta.signature ? chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: delta.signature }] }) : undefined;
      case 'citations_delta':
        if (delta.citation) texts.get(data.index)?.citations.push(delta.citation);
        return undefined;
      default:
        return undefined;
    }
  };

  /** A text block's end: its web citations, over the whole block. */
  const blockStop = (index: number): ChatCompletionChunk | undefined => {
    const block = texts.get(index);
    texts.delete(index);
    const pages = citedPages(block?.citations);
    if (!block || !pages.length) return undefined;
    return chunk({ annotations: pages.map((p) => urlCitation(block.start, written, p.url, p.title)) });
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
        case 'content_block_stop':
          return blockStop(data.index);
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
          return undefined; // ping, event types added later
      }
    },
    end() {
      if (!stopped) throw UpstreamError.protocol(call.provider, 'the stream ended early (no message_stop)');
      return undefined;
    },
  };
}

/** A server tool's streamed input, as the object it spells (an empty one when it is not JSON). */
function parsed(input: string): unknown {
  try {
    return JSON.parse(input || '{}');
  } catch {
    return {};
  }
}
