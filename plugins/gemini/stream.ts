/**
 * Gemini `streamGenerateContent?alt=sse` chunks → chat.completion.chunk objects. Each event is
 * a whole GenerateContentResponse: text parts become content deltas, function calls arrive
 * whole (one complete tool-call delta each), `finishReason` only on the last chunk, and
 * `usageMetadata` is cumulative, so only the last one is reported, in a final usage chunk.
 */
import type { ChatCompletionChunk } from '../../src/openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../src/plugin-api.ts';
import type { SseJsonEvent } from '../../src/providers/http-provider.ts';
import { UpstreamError } from '../../src/providers/upstream-error.ts';
import { finishReason, partsContent, usageOf, type GeminiResponse, type GeminiUsage } from './response.ts';
import { readGoogleError } from './errors.ts';

export function createStreamTranslator(call: ProviderCall): StreamTranslator {
  let id = `chatcmpl-${call.requestId}`;
  let model = call.model;
  const created = Math.floor(Date.now() / 1000);
  let usage: GeminiUsage | undefined;
  let started = false;
  let finished = false;
  const toolCount = new Map<number, number>();
  let n = 0;
  const nextCallId = () => `call_${call.requestId}_${n++}`;

  return {
    push(event) {
      const data = (event as SseJsonEvent).data as GeminiResponse & { error?: unknown };
      if (data && typeof data === 'object' && 'error' in data && data.error) {
        throw new UpstreamError(call.provider, 'http', Number((data.error as { code?: number }).code) || 500, readGoogleError(500, data));
      }
      if (data.responseId && !started) id = `chatcmpl-${data.responseId}`;
      if (data.modelVersion) model = data.modelVersion;
      if (data.usageMetadata) usage = data.usageMetadata;
      const out: ChatCompletionChunk[] = [];
      const chunk = (index: number, delta: ChatCompletionChunk['choices'][0]['delta'], finish: ChatCompletionChunk['choices'][0]['finish_reason'] = null): ChatCompletionChunk => ({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index, delta, logprobs: null, finish_reason: finish }],
      });
      if (!started) {
        started = true;
        out.push(chunk(0, { role: 'assistant', content: '' }));
      }
      (data.candidates ?? []).forEach((c, i) => {
        const index = c.index ?? i;
        const { text, reasoning, toolCalls } = partsContent(c.content?.parts, nextCallId);
        if (reasoning) out.push(chunk(index, { reasoning_content: reasoning }));
        if (text) out.push(chunk(index, { content: text }));
        for (const tc of toolCalls) {
          const k = toolCount.get(index) ?? 0;
          toolCount.set(index, k + 1);
          out.push(chunk(index, { tool_calls: [{ index: k, id: tc.id, type: 'function', function: tc.function }] }));
        }
        const finish = finishReason(c.finishReason, (toolCount.get(index) ?? 0) > 0);
        if (finish) {
          finished = true;
          out.push(chunk(index, {}, finish));
        }
      });
      if (data.promptFeedback?.blockReason && !data.candidates?.length) {
        finished = true;
        out.push(chunk(0, {}, 'content_filter'));
      }
      return out;
    },
    end() {
      if (!finished) throw new UpstreamError(call.provider, 'protocol', 200, { message: 'the stream ended before a finishReason' });
      return { id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(usage) };
    },
  };
}
