/**
 * A chat completion → the Responses API `response` object
 * (https://platform.openai.com/docs/api-reference/responses/object).
 *
 *   choices[0].message.reasoning_content   a `reasoning` item whose `content` is that text as
 *                                          reasoning_text (the raw reasoning, as open-weight models
 *                                          return it through the Responses API), `summary: []`: the
 *                                          gateway writes no summaries
 *   thinking_blocks (the gateway's)        that item's `encrypted_content` when `include` names
 *                                          `reasoning.encrypted_content` (reasoning.ts); the item is
 *                                          there for it even when the reasoning has no text
 *   web_search_calls (the gateway's)       `web_search_call` items, ahead of the message (searches.ts)
 *   content, refusal                       a `message` item: output_text (`annotations` from the
 *                                          message's url_citation annotations, logprobs from
 *                                          choices[0].logprobs.content), then a refusal part
 *   tool_calls                             `function_call` items (call_id = the chat tool call id),
 *                                          named as the client named the tool (its `namespace` too);
 *                                          a custom tool's call is a `custom_tool_call` item whose
 *                                          `input` is the function's one string argument (tools.ts);
 *                                          client tool search's a `tool_search_call`
 *   nothing of the above                   an empty message, so a client always finds the answer
 *   finish_reason length                   status incomplete, incomplete_details max_output_tokens
 *   finish_reason content_filter           status incomplete, incomplete_details content_filter
 *   usage                                  input/output tokens, cached, cache writes and reasoning
 *                                          tokens; the gateway's `cost` carried over
 *   model                                  the model that answered (the completion's), not the alias
 *
 * Output items are in the order the model produced them: reasoning, text, calls. In an
 * incomplete response the last item (the one cut short) is `incomplete`, as OpenAI marks it.
 * The rest of the object echoes the request as OpenAI does, with null where the request left a
 * sampling setting to the provider's default (which is not always OpenAI's).
 */
import type { ChatCompletion, FinishReason, Usage } from '../../openai-types.ts';
import { textOf } from '../../protocol/content.ts';
import type { ResponseIds } from './ids.ts';
import { callItemOf, customInputOf, searchArgumentsOf } from './calls.ts';
import { encodeReasoning } from './reasoning.ts';
import { annotationOf, searchItemOf } from './searches.ts';
import type { LogProb, MessageItem, OutputItem, ReasoningItem, ResponseObject, ResponseStatus, ResponseUsage, ResponsesRequest, UrlCitationAnnotation } from './types.ts';

/** What a client asks for to get the provider's signed reasoning back as `encrypted_content`. */
export const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

export function chatToResponse(completion: ChatCompletion, request: ResponsesRequest, ids: ResponseIds): ResponseObject {
  const choice = completion.choices.find((c) => c.index === 0) ?? completion.choices[0];
  const message = choice?.message;
  const output: OutputItem[] = [];
  const reasoning = typeof message?.reasoning_content === 'string' ? message.reasoning_content : '';
  const encrypted = request.include.includes(ENCRYPTED_REASONING) ? encodeReasoning(message?.thinking_blocks) : undefined;
  if (reasoning || encrypted) {
    const item: ReasoningItem = { type: 'reasoning', id: ids.itemId('rs', output.length), summary: [], content: reasoning ? [{ type: 'reasoning_text', text: reasoning }] : [], status: 'completed' };
    if (encrypted) item.encrypted_content = encrypted;
    output.push(item);
  }
  for (const search of message?.web_search_calls ?? []) output.push(searchItemOf(search, ids.itemId('ws', output.length), request.include));
  const text = textOf(message?.content ?? null);
  const refusal = typeof message?.refusal === 'string' ? message.refusal : '';
  const calls = message?.tool_calls ?? [];
  if (text || refusal || calls.length === 0) {
    const item: MessageItem = { type: 'message', id: ids.itemId('msg', output.length), role: 'assistant', status: 'completed', content: [] };
    const annotations = (message?.annotations ?? []).map((a) => annotationOf(a, 0, text.length)).filter((a): a is UrlCitationAnnotation => a !== undefined);
    if (text || !refusal) item.content.push({ type: 'output_text', text, annotations, logprobs: logprobsOf((choice?.logprobs as { content?: unknown } | null)?.content) });
    if (refusal) item.content.push({ type: 'refusal', refusal });
    output.push(item);
  }
  for (const call of calls) {
    const item = callItemOf(request.callables, call.function.name, ids, output.length, call.id);
    const args = call.function.arguments ?? '';
    if (item.type === 'custom_tool_call') item.input = customInputOf(args);
    else if (item.type === 'tool_search_call') item.arguments = searchArgumentsOf(args);
    else item.arguments = args;
    item.status = 'completed';
    output.push(item);
  }
  const response = responseSkeleton(request, ids, completion.model);
  finishResponse(response, { output, finishReason: choice?.finish_reason ?? null, usage: completion.usage, serviceTier: completion.service_tier, completedAt: ids.now() });
  return response;
}

/**
 * The response as it stands before any output: `in_progress`, the request echoed. The stream's
 * `response.created` carries it with the model the client named (the one that answers is only
 * known from its first chunk); the final object names the one that answered.
 */
export function responseSkeleton(r: ResponsesRequest, ids: ResponseIds, model: string): ResponseObject {
  const response: ResponseObject = {
    id: ids.responseId,
    object: 'response',
    created_at: ids.createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    model,
    output: [],
    instructions: r.instructions ?? null,
    tools: r.tools.map((t) => (t.type === 'function' ? { type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null } : t)),
    tool_choice: r.tool_choice ?? 'auto',
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    text: { format: r.text?.format ?? { type: 'text' }, ...(r.text?.verbosity ? { verbosity: r.text.verbosity } : {}) },
    temperature: r.temperature ?? null,
    top_p: r.top_p ?? null,
    top_logprobs: r.top_logprobs ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    metadata: r.metadata ?? {},
    // Nothing runs in the background, nothing is truncated.
    store: r.store ?? false,
    background: false,
    previous_response_id: r.previous_response_id ?? null,
    truncation: 'disabled',
  };
  for (const key of ['service_tier', 'user', 'safety_identifier', 'prompt_cache_key'] as const) if (r[key] !== undefined) response[key] = r[key];
  if (r.conversation !== undefined) response.conversation = { id: r.conversation };
  return response;
}

export interface Outcome {
  output: OutputItem[];
  finishReason: FinishReason | null;
  usage?: Usage | null;
  /** The tier the provider says it served the request at (chat's `service_tier`). */
  serviceTier?: unknown;
  completedAt: number;
}

/** Fills in how the response ended: status, output, usage. The last item of an incomplete response is marked incomplete. */
export function finishResponse(response: ResponseObject, outcome: Outcome): void {
  const { status, reason } = statusOf(outcome.finishReason);
  response.status = status;
  response.incomplete_details = reason ? { reason } : null;
  response.completed_at = status === 'completed' ? outcome.completedAt : null;
  response.output = outcome.output;
  const last = outcome.output.at(-1);
  if (status === 'incomplete' && last) last.status = 'incomplete';
  if (outcome.usage) response.usage = usageOf(outcome.usage);
  if (typeof outcome.serviceTier === 'string') response.service_tier = outcome.serviceTier;
}

/** finish_reason → the response's status: cut short by the token limit or a filter is `incomplete`. */
export function statusOf(finish: FinishReason | null): { status: ResponseStatus; reason?: 'max_output_tokens' | 'content_filter' } {
  if (finish === 'length') return { status: 'incomplete', reason: 'max_output_tokens' };
  if (finish === 'content_filter') return { status: 'incomplete', reason: 'content_filter' };
  return { status: 'completed' };
}

/** Chat usage → Responses usage (same counts, other names); completion tokens include reasoning tokens in both. */
export function usageOf(u: Usage): ResponseUsage {
  const usage: ResponseUsage = {
    input_tokens: u.prompt_tokens ?? 0,
    input_tokens_details: { cached_tokens: count(u.prompt_tokens_details?.cached_tokens), cache_write_tokens: count(u.prompt_tokens_details?.cache_write_tokens) },
    output_tokens: u.completion_tokens ?? 0,
    output_tokens_details: { reasoning_tokens: count(u.completion_tokens_details?.reasoning_tokens) },
    total_tokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0),
  };
  if (typeof u.cost === 'number') usage.cost = u.cost;
  return usage;
}

const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/**
 * Chat logprobs (`choices[].logprobs.content`) → output_text logprobs: the same fields; `bytes`
 * and `top_logprobs` required there, so an upstream that leaves them null gets empty arrays.
 */
export function logprobsOf(content: unknown): LogProb[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null && typeof t.token === 'string' && typeof t.logprob === 'number')
    .map((t) => ({
      token: t.token as string,
      logprob: t.logprob as number,
      bytes: Array.isArray(t.bytes) ? (t.bytes as number[]) : [],
      top_logprobs: (Array.isArray(t.top_logprobs) ? (t.top_logprobs as Array<Record<string, unknown>>) : []).map((top) => ({
        token: String(top.token),
        logprob: Number(top.logprob),
        bytes: Array.isArray(top.bytes) ? (top.bytes as number[]) : [],
      })),
    }));
}
