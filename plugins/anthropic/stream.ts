/**
 * Anthropic's named SSE events → chat.completion.chunk objects, stateful per attempt:
 * message_start (id, model, prompt usage) → a role chunk; text and tool-input deltas → content
 * and tool-call argument chunks (tool calls numbered among tool blocks only); message_delta →
 * the finish chunk; message_stop → a usage-only chunk. `ping` is ignored; an `error` event
 * fails the attempt.
 */
import type { ChatCompletionChunk, FinishReason } from '../../src/openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../src/plugin-api.ts';
import type { SseJsonEvent } from '../../src/providers/http-provider.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { finishReason, usageOf, type AnthropicUsage } from './response.ts';
import { failureOf, statusOf } from './errors.ts';

type Delta = ChatCompletionChunk['choices'][0]['delta'];

export function createStreamTranslator(call: ProviderCall): StreamTranslator {
  let id = `chatcmpl-${call.requestId}`;
  let model = call.model;
  const created = Math.floor(Date.now() / 1000);
  const usage: AnthropicUsage = {};
  /** Anthropic content block index → OpenAI tool_calls index. */
  const toolIndex = new Map<number, number>();
  let stopped = false;

  const chunk = (delta: Delta, finish: FinishReason | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });

  return {
    push(event) {
      const data = (event as SseJsonEvent).data as Record<string, any>;
      switch (data?.type) {
        case 'message_start': {
          const message = data.message ?? {};
          id = message.id ?? id;
          model = message.model ?? model;
          Object.assign(usage, message.usage);
          return chunk({ role: 'assistant', content: '' });
        }
        case 'content_block_start': {
          const block = data.content_block ?? {};
          if (block.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(data.index, index);
            return chunk({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] });
          }
          if (block.type === 'text' && block.text) return chunk({ content: block.text });
          return undefined;
        }
        case 'content_block_delta': {
          const delta = data.delta ?? {};
          if (delta.type === 'text_delta') return chunk({ content: delta.text });
          if (delta.type === 'input_json_delta') {
            if (!delta.partial_json) return undefined;
            return chunk({ tool_calls: [{ index: toolIndex.get(data.index) ?? 0, function: { arguments: delta.partial_json } }] });
          }
          if (delta.type === 'thinking_delta') return chunk({ reasoning_content: delta.thinking });
          return undefined; // signature_delta, citations: nothing for an OpenAI client
        }
        case 'message_delta':
          Object.assign(usage, data.usage);
          return chunk({}, finishReason(data.delta?.stop_reason) ?? 'stop');
        case 'message_stop':
          stopped = true;
          return { id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(usage) };
        case 'error': {
          const failure = failureOf(data);
          throw new UpstreamError(call.provider, 'http', statusOf(data.error?.type), failure);
        }
        default:
          return undefined; // ping, content_block_stop, future event types
      }
    },
    end() {
      if (!stopped) throw new UpstreamError(call.provider, 'protocol', 200, { message: 'the stream ended before message_stop' });
      return undefined;
    },
  };
}
