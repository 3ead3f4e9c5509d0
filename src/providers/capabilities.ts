/**
 * The core's reading of a provider's declared capabilities: before an attempt's request is built,
 * parameters the provider cannot honour are refused with a 400 naming them, or dropped (and
 * reported) when `dropUnsupportedParams` is set; a `reasoning_effort` the model cannot take is
 * always dropped and reported (a 400 only when the request is strict). Providers then translate
 * only what they support.
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
  reportUnknownParams(call, caps);
  for (const p of caps.unsupportedParams ?? []) if (r[p] !== undefined && r[p] !== null && p !== REASONING) refuse(p);
  if (r.reasoning_effort != null && (caps.reasoning === false || caps.unsupportedParams?.includes(REASONING))) {
    // How long to think, not what to answer (Claude Code's thinking arrives as one): dropped and reported, never refused unless strict.
    reportDrop(call, { field: REASONING, what: String(r.reasoning_effort), reason: `${call.provider} model ${call.model} has no reasoning effort to set` });
    dropped.push(REASONING);
  }
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

const isImage = (part: ContentPart) => part?.type === 'image_url';
