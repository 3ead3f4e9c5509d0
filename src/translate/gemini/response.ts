/**
 * Gemini GenerateContentResponse → OpenAI chat completion, and the pieces the stream translator
 * shares with it.
 *
 * - Candidates → choices. Text parts are joined into `content`; thought-summary parts
 *   (`thought: true`, only sent with `includeThoughts`) go to `reasoning_content`, the field
 *   OpenAI-compatible servers use for it, never into `content`.
 * - Thought signatures → the gateway's `thinking_blocks`, tagged `gemini:<site>:` (see
 *   translate/chat/thinking.ts): a signed thought closes the thought text before it into one block;
 *   a signature on a function call or a text part signs the thought text before it (or an empty
 *   block), so a client that speaks only thinking blocks (the Messages API) still sends it back.
 * - `functionCall` parts → `tool_calls`. Gemini has no call ids: they are made up as
 *   `call_<request id>_<n>`, unique within the request. A part's `thoughtSignature` rides along as
 *   `extra_content.google.thought_signature` (where Google's own OpenAI endpoint puts it), so a
 *   client that sends the message back gets it replayed.
 * - finishReason: STOP → stop (tool_calls when the candidate called functions), MAX_TOKENS →
 *   length, safety/recitation/blocklist/PII/language → content_filter, anything else → stop.
 *   A prompt blocked before generation (`promptFeedback.blockReason`, no candidates) is one empty
 *   choice with finish_reason content_filter.
 * - groundingMetadata (Google Search grounding) → the gateway's `web_search_calls` and
 *   `annotations` (grounding.ts), and its queries as `usage.server_tool_use.web_search_requests`.
 * - usageMetadata → usage: thinking tokens count as completion tokens and are itemised as
 *   `reasoning_tokens`; cached content tokens as `cached_tokens`; tool-use prompt tokens as prompt.
 * - logprobsResult → `logprobs.content` (chosen tokens with their top alternatives).
 * - responseId → id (`chatcmpl-` prefixed), modelVersion → model, Vertex's createTime → created.
 */
import type { ChatCompletion, FinishReason, ThinkingBlock, ToolCall, Usage } from '../../openai-types.ts';
import { tagGeminiSignature } from '../chat/thinking.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { readGoogleError } from './errors.ts';
import { groundingOf } from './grounding.ts';
import type { GeminiCandidate, GeminiPart, GeminiResponse, GeminiUsage, GoogleStatus, LogprobsCandidate, LogprobsResult } from './native.ts';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/** Null while the candidate is still going (no reason, or FINISH_REASON_UNSPECIFIED). */
export function finishReason(reason: string | undefined, calledFunctions: boolean): FinishReason | null {
  if (!reason || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  // STOP, and OTHER / MALFORMED_FUNCTION_CALL / ... which OpenAI has no word for.
  return calledFunctions ? 'tool_calls' : 'stop';
}

export function usageOf(u: GeminiUsage | undefined): Usage {
  const prompt = (u?.promptTokenCount ?? 0) + (u?.toolUsePromptTokenCount ?? 0);
  const thoughts = u?.thoughtsTokenCount ?? 0;
  const completion = (u?.candidatesTokenCount ?? 0) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u?.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** Tool call ids for one request: Gemini sends none. */
export function callIds(call: ProviderCall): () => string {
  let n = 0;
  return () => `call_${call.requestId}_${n++}`;
}

export interface CandidateContent {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  /** The signed reasoning (and an unsigned rest after it); empty when nothing was signed. */
  thinking: ThinkingBlock[];
}

/** Text, thought summaries, function calls and thought signatures of one candidate's parts. */
export function contentOf(parts: GeminiPart[] | undefined, nextCallId: () => string): CandidateContent {
  let text = '';
  let reasoning = '';
  /** Thought text since the last signature. */
  let run = '';
  const toolCalls: ToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  const sign = (site: 'thought' | 'call' | 'text', signature: string) => {
    thinking.push({ type: 'thinking', thinking: run, signature: tagGeminiSignature(site, signature) });
    run = '';
  };
  for (const p of parts ?? []) {
    const signature = typeof p.thoughtSignature === 'string' && p.thoughtSignature ? p.thoughtSignature : undefined;
    if (p.functionCall) {
      const tc: ToolCall = { id: p.functionCall.id || nextCallId(), type: 'function', function: { name: p.functionCall.name ?? '', arguments: JSON.stringify(p.functionCall.args ?? {}) } };
      if (signature) {
        tc.extra_content = { google: { thought_signature: signature } };
        sign('call', signature);
      }
      toolCalls.push(tc);
    } else if (p.thought) {
      if (typeof p.text === 'string') {
        reasoning += p.text;
        run += p.text;
      }
      if (signature) sign('thought', signature);
    } else if (typeof p.text === 'string') {
      text += p.text;
      if (signature) sign('text', signature);
    }
  }
  if (run && thinking.length) thinking.push({ type: 'thinking', thinking: run });
  return { text, reasoning, toolCalls, thinking };
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

const encoder = new TextEncoder();

function tokenOf(c: LogprobsCandidate): { token: string; logprob: number; bytes: number[] } {
  const token = c.token ?? '';
  return { token, logprob: c.logProbability ?? 0, bytes: [...encoder.encode(token)] };
}

/** Gemini's per-step chosen and top candidates → OpenAI `logprobs`; null when none were asked for. */
export function logprobsOf(result: LogprobsResult | undefined): { content: TokenLogprob[]; refusal: null } | null {
  const chosen = result?.chosenCandidates;
  if (!Array.isArray(chosen)) return null;
  const content = chosen.map((c, i) => ({ ...tokenOf(c), top_logprobs: (result?.topCandidates?.[i]?.candidates ?? []).map(tokenOf) }));
  return { content, refusal: null };
}

/** Seconds since the epoch of an RFC 3339 time (Vertex's createTime). */
export function createdOf(time: string | undefined): number | undefined {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** A 200 answer that is really a google.rpc error. */
export function errorInBody(body: unknown, call: ProviderCall): UpstreamError | undefined {
  const error = body && typeof body === 'object' ? (body as { error?: GoogleStatus }).error : undefined;
  if (!error || typeof error !== 'object') return undefined;
  const status = Number(error.code) || 500;
  return UpstreamError.http(call.provider, status, readGoogleError(status, body));
}

/** Ids for the searches of one request's choice: Gemini names none. */
export function searchIds(call: ProviderCall, choice: number): (n: number) => string {
  return (n) => `ws_${call.requestId}_${choice}_${n}`;
}

/** Adds the searches a request's grounding ran to its usage (what Google bills grounding by). */
export function withSearches(usage: Usage, searches: number): Usage {
  if (searches > 0) usage.server_tool_use = { web_search_requests: searches };
  return usage;
}

function choiceOf(c: GeminiCandidate, i: number, nextCallId: () => string, call: ProviderCall): ChatCompletion['choices'][number] {
  const { text, reasoning, toolCalls, thinking } = contentOf(c.content?.parts, nextCallId);
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : ''), refusal: null };
  const grounding = groundingOf(c.groundingMetadata, text, searchIds(call, c.index ?? i));
  if (grounding?.searches.length) message.web_search_calls = grounding.searches;
  if (grounding?.annotations.length) message.annotations = grounding.annotations;
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length) message.thinking_blocks = thinking;
  return { index: c.index ?? i, message, logprobs: logprobsOf(c.logprobsResult), finish_reason: finishReason(c.finishReason, toolCalls.length > 0) ?? 'stop' };
}

export function geminiToCompletion(body: unknown, call: ProviderCall): ChatCompletion {
  const failure = errorInBody(body, call);
  if (failure) throw failure;
  const r = body as GeminiResponse;
  if (!r || typeof r !== 'object' || Array.isArray(r) || (!Array.isArray(r.candidates) && !r.promptFeedback)) {
    throw new SyntaxError('the answer has neither candidates nor promptFeedback');
  }
  const nextCallId = callIds(call);
  const choices = (r.candidates ?? []).map((c, i) => choiceOf(c, i, nextCallId, call)).sort((a, b) => a.index - b.index);
  if (!choices.length) {
    // Nothing generated: a blocked prompt (the usual case) is a filtered, empty answer.
    const finish: FinishReason = r.promptFeedback?.blockReason ? 'content_filter' : 'stop';
    choices.push({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: finish });
  }
  return {
    id: `chatcmpl-${r.responseId || call.requestId}`,
    object: 'chat.completion',
    created: createdOf(r.createTime) ?? Math.floor(Date.now() / 1000),
    model: r.modelVersion || call.model,
    choices,
    usage: withSearches(
      usageOf(r.usageMetadata),
      choices.reduce((n, c) => n + (c.message.web_search_calls?.filter((s) => s.query !== undefined).length ?? 0), 0),
    ),
  };
}
