/**
 * Gemini `streamGenerateContent?alt=sse` events → chat.completion.chunk objects, stateful per
 * attempt. Every event is a whole GenerateContentResponse holding the next piece of each candidate:
 *
 *   text parts          a content delta (with `logprobs` when they were asked for)
 *   thought parts       a `reasoning_content` delta
 *   thoughtSignature    a `thinking_blocks` delta with the (tagged) signature, which signs the
 *                       reasoning streamed before it (see contentOf)
 *   functionCall parts  arrive whole: one complete tool-call delta each (id, name, all the
 *                       arguments), numbered per choice
 *   groundingMetadata   the latest kept; with the finish chunk, `web_search_calls` and
 *                       `annotations` over the candidate's whole text (grounding.ts)
 *   finishReason        only on a candidate's last event: its finish chunk
 *   usageMetadata       cumulative and sometimes partial (Vertex sends counts only at the end, and
 *                       the prompt count may change mid-stream): merged field by field, reported
 *                       once, in a usage-only chunk (choices: []) when the stream ends
 *   promptFeedback      a prompt blocked before generation: an empty content_filter finish
 *   {"error": ...}      an UpstreamError with Google's status
 *
 * `role: assistant` rides on the first chunk of each choice. Vertex leaves out `index` (one
 * candidate) and adds `createTime` (used for `created`). A stream that ends before every choice
 * finished was cut: a protocol error.
 */
import type { ChatCompletionChunk, FinishReason } from '../../openai-types.ts';
import type { ProviderCall, StreamTranslator } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { ChunkBuilder, type ChunkDelta } from '../../protocol/chunks.ts';
import type { SseJsonEvent } from '../../providers/http-body.ts';
import { callIds, contentOf, createdOf, errorInBody, finishReason, logprobsOf, searchIds, usageOf, withSearches } from './response.ts';
import { type GroundingMetadata, groundingOf } from './grounding.ts';
import type { GeminiCandidate, GeminiResponse, GeminiUsage } from './native.ts';

interface ChoiceState {
  /** Tool calls sent so far: the next one's `index`. */
  tools: number;
  finished: boolean;
  /** The text so far: what grounding offsets count in. */
  text: string;
  grounding?: GroundingMetadata;
}

export function createGeminiStreamTranslator(call: ProviderCall): StreamTranslator {
  const chunks = new ChunkBuilder(call);
  let first = true;
  const usage: GeminiUsage = {};
  const nextCallId = callIds(call);
  const choices = new Map<number, ChoiceState>();
  let searches = 0;

  const stateOf = (index: number): ChoiceState => {
    let state = choices.get(index);
    if (!state) {
      state = { tools: 0, finished: false, text: '' };
      choices.set(index, state);
    }
    return state;
  };

  const chunk = (index: number, delta: ChunkDelta, finish: FinishReason | null = null, logprobs: unknown = null): ChatCompletionChunk => {
    if (finish) stateOf(index).finished = true;
    return chunks.delta(delta, finish, index, logprobs);
  };

  const candidateChunks = (c: GeminiCandidate, index: number): ChatCompletionChunk[] => {
    const out: ChatCompletionChunk[] = [];
    const state = stateOf(index);
    const { text, reasoning, toolCalls, thinking } = contentOf(c.content?.parts, nextCallId);
    if (reasoning) out.push(chunk(index, { reasoning_content: reasoning }));
    // The text went out as reasoning_content already: only the signatures are new.
    const signatures = thinking.flatMap((b) => (b.type === 'thinking' && b.signature ? [{ type: 'thinking' as const, thinking: '', signature: b.signature }] : []));
    if (signatures.length) out.push(chunk(index, { thinking_blocks: signatures }));
    const logprobs = logprobsOf(c.logprobsResult);
    if (text || logprobs) out.push(chunk(index, { content: text }, null, logprobs));
    if (toolCalls.length) out.push(chunk(index, { tool_calls: toolCalls.map((tc) => ({ index: state.tools++, ...tc })) }));
    state.text += text;
    if (c.groundingMetadata) state.grounding = c.groundingMetadata;
    const finish = finishReason(c.finishReason, state.tools > 0);
    if (finish && !state.finished) {
      const grounding = groundingOf(state.grounding, state.text, searchIds(call, index));
      if (grounding) {
        searches += grounding.searches.filter((s) => s.query !== undefined).length;
        out.push(chunk(index, grounding.annotations.length ? { web_search_calls: grounding.searches, annotations: grounding.annotations } : { web_search_calls: grounding.searches }));
      }
      out.push(chunk(index, {}, finish));
    }
    return out;
  };

  return {
    push(event) {
      const data = (event as SseJsonEvent | undefined)?.data;
      const failure = errorInBody(data, call);
      if (failure) throw failure;
      if (!data || typeof data !== 'object' || Array.isArray(data)) {
        throw UpstreamError.protocol(call.provider, 'a stream event is not a GenerateContentResponse object');
      }
      const r = data as GeminiResponse;
      if (first) {
        first = false;
        if (r.responseId) chunks.id = `chatcmpl-${r.responseId}`;
        chunks.created = createdOf(r.createTime) ?? chunks.created;
      }
      if (r.modelVersion) chunks.model = r.modelVersion;
      if (r.usageMetadata && typeof r.usageMetadata === 'object') Object.assign(usage, r.usageMetadata);
      const out: ChatCompletionChunk[] = [];
      (r.candidates ?? []).forEach((c, i) => out.push(...candidateChunks(c, c.index ?? i)));
      if (r.promptFeedback?.blockReason && !r.candidates?.length && !stateOf(0).finished) out.push(chunk(0, { content: '' }, 'content_filter'));
      return out;
    },
    end() {
      const states = [...choices.values()];
      if (!states.length || states.some((s) => !s.finished)) {
        throw UpstreamError.protocol(call.provider, 'the stream ended before a finishReason');
      }
      return chunks.usage(withSearches(usageOf(usage), searches));
    },
  };
}
