/**
 * The core's reading of a provider's declared capabilities: before an attempt's request is built,
 * parameters the provider cannot honour are refused with a 400 naming them, or dropped (and
 * reported) when `dropUnsupportedParams` is set; a hint the model cannot take (`HINTS`: how long
 * to think, how wordy to be, never what to answer) is always dropped and reported (a 400 only when
 * the request is strict). Providers then translate only what they support.
 */
import type { ChatCompletionRequest, ChatMessage, ContentPart } from '../openai-types.ts';
import type { ProviderCall, ProviderCapabilities } from '../plugin-api.ts';
import { reportDrop } from './drops.ts';
import { reportUnknownParams } from './unknown-params.ts';
import { checkSamplingExtras, unsupportedParam } from './params.ts';

/**
 * The request the provider will see: the client's own object when nothing is dropped (no copy
 * on the hot path), else a shallow copy without the dropped parameters.
 */
export function applyCapabilities(call: ProviderCall, caps: ProviderCapabilities): ChatCompletionRequest {
  const r = call.request;
  const dropped: string[] = [];
  const refuse = (param: string, why?: string) => {
    unsupportedParam(call, param, why);
    dropped.push(param);
  };
  const hint = (param: string, reason: string) => {
    reportDrop(call, { field: param, what: String(r[param]), reason });
    dropped.push(param);
  };
  reportUnknownParams(call, caps);
  for (const p of caps.unsupportedParams ?? []) {
    if (r[p] === undefined || r[p] === null) continue;
    if (HINTS.has(p)) hint(p, p === REASONING ? `${call.provider} model ${call.model} has no reasoning effort to set` : `${call.provider} model ${call.model} takes no ${p}`);
    else refuse(p);
  }
  // Claude Code's thinking arrives as a reasoning effort: a model without reasoning has none to set.
  if (r.reasoning_effort != null && caps.reasoning === false && !dropped.includes(REASONING)) hint(REASONING, `${call.provider} model ${call.model} has no reasoning effort to set`);
  if (caps.streaming === false && r.stream === true) refuse('stream', 'set to true is not supported');
  if (caps.tools === false) {
    if (Array.isArray(r.tools) && r.tools.length) refuse('tools');
    if (r.tool_choice != null && r.tool_choice !== 'none') refuse('tool_choice');
  }
  if (caps.responseFormat === false && r.response_format && r.response_format.type !== 'text') refuse('response_format', `of type "${r.response_format.type}" is not supported`);
  let messages: ChatMessage[] | undefined;
  if (caps.images === false) {
    r.messages?.forEach((m, i) => {
      if (!Array.isArray(m.content) || !m.content.some(isImage)) return;
      unsupportedParam(call, `messages[${i}].content`, '(an image part) is not supported');
      messages ??= [...r.messages];
      messages[i] = { ...m, content: m.content.filter((part) => !isImage(part)) };
    });
  }
  if (caps.samplingExtras === false) checkSamplingExtras(call, refuse);
  if (!dropped.length && !messages) return r;
  const copy: ChatCompletionRequest = { ...r };
  if (messages) copy.messages = messages;
  for (const p of dropped) delete copy[p];
  if (dropped.includes('tools')) delete copy.tool_choice;
  return copy;
}

const REASONING = 'reasoning_effort';

/**
 * Parameters that say how to answer, not what: a target without them serves the request as well
 * (Codex sends `verbosity` and Claude Code a reasoning effort on every turn), so they are dropped
 * and reported rather than refused.
 */
export const HINTS: ReadonlySet<string> = new Set([REASONING, 'verbosity']);

const isImage = (part: ContentPart) => part?.type === 'image_url';
