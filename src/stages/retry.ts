/**
 * `retry`: runs the inner stages once per attempt. Transient failures (connect errors, 408,
 * 409, 429, 5xx) are retried on the same target with exponential backoff and full jitter,
 * honouring the upstream's Retry-After up to a cap; then the next target is tried. A stream is
 * committed once its first chunk exists, so failover never happens after bytes reach the client.
 */
import { defineStage, type AttemptRecord, type GatewayResponse, type RequestContext, type RetryPolicy, type Clock } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { primeStream } from '../protocol/prime.ts';

/** Delay before try number `attempt + 1` on the same target (attempt counts from 1). */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const { initialMs, maxMs, multiplier } = policy.backoff;
  const ceiling = Math.min(maxMs, initialMs * multiplier ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/** The client's own mistake, as judged by the provider: retrying or failing over cannot help. */
function isClientFault(err: UpstreamError): boolean {
  return err.kind === 'http' && !err.retryable && err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 403 && err.status !== 404;
}

export default defineStage({
  apiVersion: 1,
  kind: 'stage',
  name: 'retry',
  description: 'Retries, backoff and fallback across the alias targets',
  create(_options, { clock }) {
    return {
      name: 'retry',
      handle: (ctx, next) => runAttempts(ctx, next, clock),
    };
  },
});

async function runAttempts(ctx: RequestContext, next: () => Promise<void>, clock: Clock): Promise<void> {
  const route = ctx.route;
  if (!route) return next();
  const policy = route.retry;
  let last: unknown;
  for (const target of route.targets) {
    if (target.unavailable) {
      ctx.attempts.push({ provider: target.provider, model: target.model, status: 0, outcome: 'skipped', durationMs: 0, error: target.unavailable });
      last ??= new GatewayError('provider_unavailable', `provider "${target.provider}" is unavailable: ${target.unavailable}`);
      continue;
    }
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      ctx.target = target;
      ctx.upstream = undefined;
      ctx.response = undefined;
      const started = performance.now();
      try {
        await next();
        const response = ctx.response as GatewayResponse | undefined; // set by the inner stages
        if (response?.kind === 'stream') ctx.response = { kind: 'stream', chunks: await primeStream(response.chunks) };
        ctx.attempts.push(record(target.provider, target.model, 200, 'ok', started));
        return;
      } catch (err) {
        if (!(err instanceof UpstreamError) || ctx.signal.aborted) throw err;
        ctx.attempts.push({ ...record(target.provider, target.model, err.status, 'error', started), error: err.message });
        last = err;
        if (isClientFault(err)) throw err;
        if (!err.retryable || attempt === policy.attempts) break;
        const wait = err.retryAfterMs ?? backoffDelay(policy, attempt, clock.random);
        if (err.retryAfterMs !== undefined && err.retryAfterMs > policy.maxRetryAfterMs) break;
        await clock.sleep(wait, ctx.signal);
      }
    }
  }
  throw last;
}

function record(provider: string, model: string, status: number, outcome: AttemptRecord['outcome'], started: number): AttemptRecord {
  return { provider, model, status, outcome, durationMs: Math.round((performance.now() - started) * 100) / 100 };
}
