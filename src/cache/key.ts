/**
 * The exact cache's key: a SHA-256 of the request as the model is asked it (the alias, the
 * messages, tools, sampling and response format: every field but the transport's), canonical
 * (object keys sorted), within its scope, so that two tenants never share an entry. Computed on
 * every cached request, hit or miss: one string built in one pass and one one-shot hash.
 */
import { hash } from 'node:crypto';
import type { ChatCompletionRequest } from '../openai-types.ts';

/** Fields that change how the answer travels or is billed, not what it says. */
const TRANSPORT = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'safety_identifier']);

export function cacheKey(scope: string, alias: string, body: ChatCompletionRequest): string {
  let text = `${scope}\u0000${alias}\u0000${body.stream === true ? 'stream' : 'json'}\u0000{`;
  let first = true;
  // The body's own top-level fields, sorted, without the transport's: no object copied.
  for (const field of Object.keys(body).sort()) {
    const value = (body as unknown as Record<string, unknown>)[field];
    if (TRANSPORT.has(field) || value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(field)}:${canonical(value)}`;
    first = false;
  }
  return hash('sha256', `${text}}`, 'base64url');
}

/** JSON with object keys in order, so that the same request is the same text. */
export function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${canonical(value[i])}`;
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonical(v)}`;
    first = false;
  }
  return `${out}}`;
}
