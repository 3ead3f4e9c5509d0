/**
 * Parameters of a chat request that a translating provider has no place for: anything outside
 * OpenAI's Chat Completions set (https://platform.openai.com/docs/api-reference/chat/create) and
 * the provider's declared `extraParams`. A parameter newer than the gateway reaches an
 * OpenAI-compatible server as it is (`extraParams: 'all'`); any other target reports it as
 * dropped, never silently.
 */
import type { ProviderCall, ProviderCapabilities } from '../plugin-api.ts';
import { reportDrop } from './drops.ts';

/** OpenAI's Chat Completions request parameters (deprecated ones included: clients still send them). */
export const CHAT_PARAMS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

/** Reports each top-level parameter of the call's request the provider has no place for (the translation leaves it out). */
export function reportUnknownParams(call: ProviderCall, caps: ProviderCapabilities): void {
  const extra = caps.extraParams;
  if (extra === 'all') return;
  const r = call.request;
  for (const name in r) {
    if (CHAT_PARAMS.has(name) || r[name] === undefined || r[name] === null || extra?.includes(name)) continue;
    reportDrop(call, { field: name, reason: `${call.provider} translates the request and has no place for it` });
  }
}
