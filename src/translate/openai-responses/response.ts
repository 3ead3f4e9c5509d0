/**
 * An OpenAI Responses answer → chat.completion, for a provider that passed a Responses request
 * through natively: the client gets the upstream's own answer, and this translation is what the
 * gateway reads of it (usage for cost and limits, the model, the text for the log's view).
 *
 *   output message           output_text parts → content, refusal parts → refusal
 *   output function_call     a tool call (call_id as its id)
 *   output reasoning         its summary (or reasoning text) → reasoning_content
 *   any other item           passed over (hosted tool calls are the upstream's business)
 *   status incomplete        finish_reason length (max_output_tokens) or content_filter
 *   status failed            an UpstreamError with the response's error
 *   usage                    prompt/completion tokens, cached and reasoning details
 */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import type { ResponsesBody, ResponsesOutputItem, ResponsesUsage } from './native.ts';

type Item<T extends string> = Extract<ResponsesOutputItem, { type: T }>;

export function responsesToCompletion(body: unknown, call: Pick<ProviderCall, 'provider' | 'model' | 'requestId'>): ChatCompletion {
  if (!body || typeof body !== 'object' || !Array.isArray((body as ResponsesBody).output)) throw new SyntaxError('the response has no output array');
  const response = body as ResponsesBody;
  if (response.status === 'failed') throw failedResponse(call.provider, response);
  let content: string | null = null;
  let refusal: string | null = null;
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const item of response.output ?? []) {
    if (isItem(item, 'message')) {
      for (const part of item.content ?? []) {
        if (part.type === 'output_text') content = (content ?? '') + ((part as { text?: string }).text ?? '');
        else if (part.type === 'refusal') refusal = (refusal ?? '') + ((part as { refusal?: string }).refusal ?? '');
      }
    } else if (isItem(item, 'function_call')) {
      toolCalls.push({ id: item.call_id ?? item.id ?? `call_${toolCalls.length}`, type: 'function', function: { name: item.name ?? '', arguments: item.arguments ?? '' } });
    } else if (isItem(item, 'reasoning')) {
      reasoning += reasoningText(item);
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  const completion: ChatCompletion = {
    id: response.id ?? `chatcmpl-${call.requestId}`,
    object: 'chat.completion',
    created: response.created_at ?? Math.floor(Date.now() / 1000),
    model: response.model ?? call.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(response, toolCalls.length > 0), logprobs: null }],
  };
  if (response.usage) completion.usage = usageOf(response.usage);
  return completion;
}

/** Responses usage → chat usage; cached input and reasoning output keep their details (priced apart). */
export function usageOf(usage: ResponsesUsage): Usage {
  const prompt = usage.input_tokens ?? 0;
  const completion = usage.output_tokens ?? 0;
  const out: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage.total_tokens ?? prompt + completion };
  const cached = usage.input_tokens_details?.cached_tokens;
  if (typeof cached === 'number') out.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') out.completion_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

export function finishReasonOf(response: ResponsesBody, calledTools: boolean): FinishReason {
  if (response.status === 'incomplete') return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  return calledTools ? 'tool_calls' : 'stop';
}

/** A response that failed (in a 200 body, or `response.failed` in a stream): the upstream's failure. */
export function failedResponse(provider: string, response: ResponsesBody | undefined): UpstreamError {
  const error = response?.error;
  return UpstreamError.http(provider, statusOfCode(error?.code), { message: error?.message || 'the response failed', code: error?.code ?? null });
}

/** The HTTP status OpenAI answers the same failure with, when it names one (rate limits and quota: 429). */
export function statusOfCode(code: string | null | undefined): number {
  if (code === 'rate_limit_exceeded' || code === 'insufficient_quota') return 429;
  if (code === 'server_is_overloaded' || code === 'slow_down') return 503;
  return 500;
}

function reasoningText(item: Item<'reasoning'>): string {
  const parts = item.summary?.length ? item.summary : (item.content ?? []);
  return parts.map((p) => p.text ?? '').join('\n\n');
}

function isItem<T extends string>(item: ResponsesOutputItem, type: T): item is Item<T> {
  return item.type === type;
}
