/**
 * Anthropic's prompt-cache markers (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching)
 * on the chat model, and what OpenAI-style targets get for them.
 *
 * A `cache_control` on a content block marks the chat message that block becomes (the cached
 * prefix ends with it; a turn's blocks may become several chat messages, tool results first); one
 * on a tool marks that tool; the top-level one (automatic caching) marks the last message, where
 * Anthropic would put its breakpoint.
 */
import { createHash } from 'node:crypto';
import type { CacheControl, ChatCompletionRequest } from '../../openai-types.ts';
import { invalid, objectAt } from './fields.ts';

/** The block's (or with `param` '' the request's) `cache_control`, checked; undefined when it has none. */
export function cacheControlOf(block: Record<string, unknown>, param: string): CacheControl | undefined {
  if (block.cache_control == null) return undefined;
  const at = param ? `${param}.cache_control` : 'cache_control';
  const control = objectAt(block.cache_control, at);
  if (control.type !== 'ephemeral') throw invalid(`${at}.type`, 'expected "ephemeral"');
  if (control.ttl == null) return { type: 'ephemeral' };
  if (control.ttl !== '5m' && control.ttl !== '1h') throw invalid(`${at}.ttl`, 'expected "5m" or "1h"');
  return { type: 'ephemeral', ttl: control.ttl };
}

/**
 * OpenAI's `prompt_cache_key` (https://platform.openai.com/docs/guides/prompt-caching) for a
 * request with cache markers: requests that share a key are routed to the same cache. The key is
 * a SHA-256 of the caller's credential (one caller's prefixes never share a key with another's;
 * the credential cannot be read back from it) and of the prefix up to the first marker (the tool
 * definitions up to a marked tool, else all of them and the messages up to the first marked one):
 * the part a client marks first (the system prompt, for Claude Code) stays the same from turn to
 * turn, so every turn of a conversation, and every conversation on that prompt, goes to one cache.
 * Undefined without markers or a credential.
 */
export function promptCacheKeyOf(chat: ChatCompletionRequest, credential: string | undefined): string | undefined {
  if (!credential) return undefined;
  const tools = chat.tools ?? [];
  const firstTool = tools.findIndex((t) => t.cache_control);
  const firstMessage = chat.messages.findIndex((m) => m.cache_control);
  if (firstTool < 0 && firstMessage < 0) return undefined;
  const prefix = firstTool >= 0 ? { tools: tools.slice(0, firstTool + 1), messages: [] } : { tools, messages: chat.messages.slice(0, firstMessage + 1) };
  // The markers themselves are left out: where a client puts them is not what is cached.
  const text = JSON.stringify(prefix, (key, value) => (key === 'cache_control' ? undefined : value));
  const hash = createHash('sha256').update(credential).update('\0').update(text).digest('hex');
  return `swy-${hash.slice(0, 40)}`;
}
