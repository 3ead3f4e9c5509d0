/**
 * Gemini clients send their key as `x-goog-api-key` (the SDKs, Gemini CLI), or as `?key=` in the
 * URL (curl examples, older clients), or as a bearer token. The auth stage reads headers: a
 * `?key=` is lifted into `x-goog-api-key` before it runs, unless the request carries a key
 * header already. The query is never logged (the log line has the path without it).
 */
import type { IncomingHttpHeaders } from 'node:http';

export function liftQueryKey(query: Readonly<Record<string, unknown>>, headers: IncomingHttpHeaders): void {
  const key = query.key;
  if (typeof key !== 'string' || !key) return;
  if (headers.authorization || headers['x-api-key'] || headers['x-goog-api-key']) return;
  headers['x-goog-api-key'] = key;
}
