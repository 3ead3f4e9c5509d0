/**
 * ConverseStream events (decoded by eventstream.ts) → chat.completion.chunk objects, stateful
 * per attempt.
 *
 *   messageStart          nothing yet (the role rides on the first chunk that carries something)
 *   contentBlockStart     start.toolUse → a tool-call chunk with id and name (tool calls are
 *                         numbered among toolUse blocks only); Nova sends none for text blocks
 *   contentBlockDelta     text → content; toolUse.input (a JSON string fragment) → arguments;
 *                         reasoningContent.text → `reasoning_content`; its signature and
 *                         redactedContent → the gateway's `thinking_blocks` delta
 *   contentBlockStop      nothing
 *   messageStop           the finish chunk (stopReason mapped)
 *   metadata              a usage-only chunk (choices: []); the core strips it unless asked
 *   exception / error     throws an UpstreamError with the exception's status
 *
 * Every payload's random `p` padding field is ignored. Holding the role back means an exception
 * right after messageStart still leaves the core free to retry, fall back or answer a proper
 * HTTP error. A stream that ends without messageStop ended early.
 */
import type { ChatCompletionChunk, FinishReason } from '../../openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { ChunkBuilder, type ChunkDelta } from '../../protocol/chunks.ts';
import type { AwsStreamEvent } from './eventstream.ts';
import { finishReason, usageOf } from './response.ts';
import { streamFailure } from './errors.ts';
import type { ConverseBlockDelta, ConverseBlockStart, ConverseStreamEvent } from './native.ts';

export function createConverseStreamTranslator(call: ProviderCall): StreamTranslator {
  const chunks = new ChunkBuilder(call);
  /** Converse content block index → OpenAI tool_calls index. */
  const toolIndex = new Map<number, number>();
  let finished = false;
  let stopped = false;

  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null): ChatCompletionChunk => chunks.delta(delta, finish);

  const blockStart = (data: ConverseBlockStart): ChatCompletionChunk | undefined => {
    const tool = data.start?.toolUse;
    if (!tool || typeof tool !== 'object') return undefined;
    const index = toolIndex.size;
    toolIndex.set(data.contentBlockIndex, index);
    const start = { index, id: String(tool.toolUseId ?? ''), type: 'function' as const, function: { name: String(tool.name ?? ''), arguments: '' } };
    return chunk(chunks.started() ? { tool_calls: [start] } : { content: null, tool_calls: [start] });
  };

  const blockDelta = (data: ConverseBlockDelta): ChatCompletionChunk | undefined => {
    const delta = data.delta ?? {};
    if (typeof delta.text === 'string') return delta.text ? chunk({ content: delta.text }) : undefined;
    if (delta.toolUse && typeof delta.toolUse === 'object') {
      const index = toolIndex.get(data.contentBlockIndex);
      const input = delta.toolUse.input;
      if (index === undefined || typeof input !== 'string' || !input) return undefined;
      return chunk({ tool_calls: [{ index, function: { arguments: input } }] });
    }
    const reasoning = delta.reasoningContent;
    if (reasoning && typeof reasoning === 'object') {
      if (typeof reasoning.text === 'string' && reasoning.text) return chunk({ reasoning_content: reasoning.text });
      if (typeof reasoning.signature === 'string' && reasoning.signature) return chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: reasoning.signature }] });
      if (typeof reasoning.redactedContent === 'string' && reasoning.redactedContent) return chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: reasoning.redactedContent }] });
    }
    return undefined; // citations: nothing an OpenAI client can use
  };

  return {
    push(raw) {
      const decoded = raw as AwsStreamEvent;
      if (decoded.kind === 'exception' || decoded.kind === 'error') {
        const { status, failure } = streamFailure(decoded.type, decoded.payload);
        throw UpstreamError.http(call.provider, status, failure);
      }
      // The wire's word for it: the cases below guard what they read.
      const event = decoded as ConverseStreamEvent;
      switch (event.type) {
        case 'contentBlockStart':
          return blockStart(event.payload);
        case 'contentBlockDelta':
          return blockDelta(event.payload);
        case 'messageStop':
          stopped = true;
          if (finished) return undefined;
          finished = true;
          return chunk({}, finishReason(event.payload.stopReason) ?? 'stop');
        case 'metadata': {
          const usage = event.payload.usage;
          if (!usage || typeof usage !== 'object') return undefined;
          return chunks.usage(usageOf(usage));
        }
        default:
          return undefined; // messageStart, contentBlockStop, event types added later
      }
    },
    end() {
      if (!stopped) throw UpstreamError.protocol(call.provider, 'the stream ended early (no messageStop)');
      return undefined;
    },
  };
}
