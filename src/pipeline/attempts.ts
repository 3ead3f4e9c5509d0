import type { RequestContext } from '../plugin-api.ts';

/** Attempts that reached a provider (targets skipped while cooling down or unavailable do not count). */
export function attemptCount(ctx: RequestContext): number {
  let n = 0;
  for (const a of ctx.attempts) if (a.outcome !== 'skipped') n++;
  return n;
}
