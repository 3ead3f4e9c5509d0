/**
 * OpenAI Responses stream events → chat.completion.chunk objects, stateful per attempt: what the
 * gateway reads of a Responses stream it passes through untranslated (usage for cost and limits,
 * the model, and one chunk per event once the answer has begun, which paces the pass-through).
 *
 *   response.created / in_progress / queued   id and model remembered; no chunk (see below)
 *   response.output_item.added                function_call → a tool-call chunk with id and name;
 *                                             any other item → an empty chunk
 *   response.output_text.delta                content
 *   response.refusal.delta                    refusal
 *   response.reasoning_*_text.delta           reasoning_content
 *   response.function_call_arguments.delta    argument fragments of its tool call
 *   response.completed / incomplete           the finish chunk, then a usage-only chunk
 *   response.failed, error                    throws an UpstreamError (rate limits as 429)
 *   anything else                             an empty chunk once the answer began, else nothing
 *
 * Nothing is emitted before the first output item: until the first chunk exists the core can
 * still fail over (an `error` event right after response.created is a failure, not an answer).
 * A stream that ends without response.completed (or incomplete) is a protocol failure.
 */
import type { ChatCompletionChunk, Usage } from '../../openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { ChunkBuilder, type ChunkDelta } from '../../protocol/chunks.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { failedResponse, finishReasonOf, statusOfCode, usageOf } from './response.ts';
import type { ResponsesBody, ResponsesStreamEvent } from './native.ts';

/** The event variant whose `type` includes T (variants that share a shape list several types). */
type EventOf<T extends string, E = ResponsesStreamEvent> = E extends { type: infer K } ? (T extends K ? (string extends K ? never : E) : never) : never;

export function createResponsesStreamTranslator(call: Pick<ProviderCall, 'provider' | 'model' | 'requestId'>): StreamTranslator {
  const chunks = new ChunkBuilder(call);
  /** output_index of a function_call item → its index among the chat tool calls. */
  const toolIndex = new Map<number, number>();
  let begun = false;
  let ended = false;

  const chunk = (delta: ChunkDelta): ChatCompletionChunk => {
    begun = true;
    return chunks.delta(delta);
  };

  const remember = (response: ResponsesBody | undefined): void => {
    if (typeof response?.model === 'string' && response.model) chunks.model = response.model;
    if (typeof response?.id === 'string' && response.id) chunks.id = response.id;
  };

  const itemAdded = (data: EventOf<'response.output_item.added'>): ChatCompletionChunk => {
    const item = data.item;
    if (item?.type !== 'function_call') return chunk({});
    const index = toolIndex.size;
    toolIndex.set(data.output_index ?? index, index);
    const fn = item as { call_id?: string; id?: string; name?: string };
    const start = { index, id: fn.call_id ?? fn.id ?? `call_${index}`, type: 'function' as const, function: { name: fn.name ?? '', arguments: '' } };
    return chunk(chunks.started() ? { tool_calls: [start] } : { content: null, tool_calls: [start] });
  };

  const finish = (response: ResponsesBody | undefined): ChatCompletionChunk[] => {
    ended = true;
    remember(response);
    const reason = finishReasonOf(response ?? {}, toolIndex.size > 0);
    const out = [chunks.delta({}, reason)];
    const usage: Usage | undefined = response?.usage ? usageOf(response.usage) : undefined;
    if (usage) out.push(chunks.usage(usage));
    return out;
  };

  return {
    push(event) {
      const data = (event as SseJsonEvent).data as ResponsesStreamEvent | undefined;
      if (!data || typeof data !== 'object') return undefined;
      switch (data.type) {
        case 'response.created':
        case 'response.in_progress':
        case 'response.queued':
          remember((data as EventOf<'response.created'>).response);
          return begun ? chunk({}) : undefined;
        case 'response.output_item.added':
          return itemAdded(data as EventOf<'response.output_item.added'>);
        case 'response.output_text.delta':
          return chunk({ content: (data as EventOf<'response.output_text.delta'>).delta ?? '' });
        case 'response.refusal.delta':
          return chunk({ refusal: (data as EventOf<'response.refusal.delta'>).delta ?? '' });
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          return chunk({ reasoning_content: (data as EventOf<'response.reasoning_text.delta'>).delta ?? '' });
        case 'response.function_call_arguments.delta': {
          const d = data as EventOf<'response.function_call_arguments.delta'>;
          const index = toolIndex.get(d.output_index ?? -1);
          if (index === undefined) return begun ? chunk({}) : undefined;
          return chunk({ tool_calls: [{ index, function: { arguments: d.delta ?? '' } }] });
        }
        case 'response.completed':
        case 'response.incomplete':
          return finish((data as EventOf<'response.completed'>).response);
        case 'response.failed':
          throw failedResponse(call.provider, (data as EventOf<'response.failed'>).response);
        case 'error': {
          const e = data as EventOf<'error'>;
          const code = e.code ?? e.error?.code ?? null;
          throw UpstreamError.http(call.provider, statusOfCode(code), { message: e.message || e.error?.message || 'the stream reported an error', code, param: e.param ?? e.error?.param ?? null });
        }
        default:
          return begun ? chunk({}) : undefined;
      }
    },
    end() {
      if (!ended) throw UpstreamError.protocol(call.provider, 'the stream ended before response.completed');
      return undefined;
    },
  };
}
