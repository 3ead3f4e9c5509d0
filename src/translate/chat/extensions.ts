/**
 * The gateway's own fields on the chat model (see openai-types.ts: `thinking_blocks`,
 * `cache_control` on messages and tools, and the `web_search` request), taken off for an upstream that speaks chat itself: an
 * OpenAI-compatible server knows neither, and some refuse fields they do not know. Their meaning
 * goes up another way where there is one (`prompt_cache_key` for the cache markers); a signature
 * has none there, so past reasoning is not sent to such a server; and a chat server runs no
 * search of its own for a request (OpenAI's `web_search_options` works only on its search models),
 * so `web_search` is reported dropped.
 */
import type { ChatCompletionRequest, ChatMessage, FunctionTool } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { reportCacheMarkersLeftOut, reportThinkingLeftOut } from './thinking.ts';
import { reportWebSearchLeftOut } from './web-search.ts';

/** The call's request without the gateway's fields; what they meant and no other field carries is reported dropped. */
export function withoutChatExtensions(call: ProviderCall): ChatCompletionRequest {
  const request = call.request;
  reportThinkingLeftOut(call, () => false, 'an OpenAI-compatible chat server takes no past reasoning back');
  if (request.prompt_cache_key === undefined) reportCacheMarkersLeftOut(call, 'an OpenAI-compatible chat server takes no cache markers (prompt_cache_key is its only hint)');
  const messages = request.messages.some(hasExtension) ? request.messages.map(stripMessage) : request.messages;
  reportWebSearchLeftOut(call, 'an OpenAI-compatible chat server runs no web search for a request');
  const tools = request.tools?.some((t) => t.cache_control !== undefined) ? request.tools.map(stripTool) : request.tools;
  if (messages === request.messages && tools === request.tools && request.web_search === undefined) return request;
  const { web_search: _search, ...rest } = request;
  const out: ChatCompletionRequest = { ...rest, messages };
  if (tools) out.tools = tools;
  return out;
}

function hasExtension(m: ChatMessage): boolean {
  return m.thinking_blocks !== undefined || m.cache_control !== undefined;
}

function stripMessage(m: ChatMessage): ChatMessage {
  if (!hasExtension(m)) return m;
  const { thinking_blocks: _thinking, cache_control: _cache, ...rest } = m;
  return rest;
}

function stripTool(t: FunctionTool): FunctionTool {
  const { cache_control: _cache, ...rest } = t;
  return rest;
}
