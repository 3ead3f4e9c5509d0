/**
 * The exact cache's key: a SHA-256 of the request as the model is asked it (the alias, the
 * messages, tools, sampling and response format: every field but the transport's), canonical
 * (object keys sorted), within its scope, so that two tenants never share an entry.
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionRequest } from '../openai-types.ts';

/** Fields that change how the answer travels or is billed, not what it says. */
const TRANSPORT = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'safety_identifier']);

export function cacheKey(scope: string, alias: string, body: ChatCompletionRequest): string {
  const asked: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) if (!TRANSPORT.has(field) && value !== undefined) asked[field] = value;
  const hash = createHash('sha256');
  hash.update(`${scope}\u0000${alias}\u0000${body.stream === true ? 'stream' : 'json'}\u0000`);
  hash.update(canonical(asked));
  return hash.digest('base64url');
}

/** JSON with object keys in order, so that the same request is the same text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
