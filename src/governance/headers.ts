/**
 * OpenAI's rate-limit headers from the quotas of a request's scopes. OpenAI has one limit per
 * dimension; a gateway request has several (key, team, target), so each header reports the
 * scope with the least room left, which is the one that will refuse first.
 * (platform.openai.com/docs/guides/rate-limits: x-ratelimit-limit-requests, -remaining-,
 * -reset- and the same for tokens; reset is the time until the limit is back to full, as a
 * duration like `1s`, `6m0s`, `250ms`.)
 */
import type { ScopeQuota, WindowQuota } from './types.ts';

/** A duration as OpenAI writes it (Go's time.Duration format, to the millisecond). */
export function formatReset(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1_000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = `${Number(((total % 60_000) / 1_000).toFixed(3))}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}

function tightest(windows: Array<WindowQuota | undefined>): WindowQuota | undefined {
  let best: WindowQuota | undefined;
  for (const w of windows) {
    if (!w) continue;
    if (!best || w.remaining < best.remaining || (w.remaining === best.remaining && w.limit < best.limit)) best = w;
  }
  return best;
}

/** Empty when no scope limits requests or tokens (an unlimited key gets no such headers). */
export function rateLimitHeaders(quota: readonly ScopeQuota[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [dimension, window] of [
    ['requests', tightest(quota.map((q) => q.requests))],
    ['tokens', tightest(quota.map((q) => q.tokens))],
  ] as const) {
    if (!window) continue;
    headers[`x-ratelimit-limit-${dimension}`] = String(window.limit);
    headers[`x-ratelimit-remaining-${dimension}`] = String(window.remaining);
    headers[`x-ratelimit-reset-${dimension}`] = formatReset(window.resetMs);
  }
  return headers;
}
