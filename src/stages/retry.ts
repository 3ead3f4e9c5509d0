/**
 * `retry`: runs the inner stages once per attempt, over the alias's targets in the order its
 * strategy gives. Transient failures are retried on the same target with exponential backoff
 * and full jitter, honouring Retry-After up to a cap; then the next target is tried. Targets
 * cooling down are skipped; a time budget bounds retries and fallbacks together. A stream is
 * committed once its first chunk exists: failover never happens after bytes reach the client.
 */
import { defineStage, type AttemptRecord, type Clock, type GatewayResponse, type RequestContext, type RouteTarget, type RuntimeView } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { primeStream } from '../protocol/prime.ts';
import { orderTargets } from '../routing/order.ts';
import { backoffDelay, isClientFault, isRetryable, isTargetFault, type Timeouts } from '../routing/policy.ts';

export { backoffDelay };

export default defineStage({
  apiVersion: 1,
  kind: 'stage',
  name: 'retry',
  description: 'Routing strategy, retries, backoff, cooldowns and fallbacks across the alias targets',
  create(_options, { clock, runtime }) {
    return {
      name: 'retry',
      handle: (ctx, next) => (ctx.route ? runAttempts(ctx, next, clock, runtime) : next()),
      // A committed stream stays in flight until the response is complete.
      onResponse: (ctx) => (ctx.state[STREAM_DONE] as (() => void) | undefined)?.(),
    };
  },
});

class AttemptTimeout extends Error {}

const STREAM_DONE = 'switchyard.retry.streamDone';

async function runAttempts(ctx: RequestContext, next: () => Promise<void>, clock: Clock, runtime: RuntimeView): Promise<void> {
  const route = ctx.route!;
  const started = clock.now();
  const deadline = route.retry.budgetMs === undefined ? Infinity : started + route.retry.budgetMs;
  const random = () => clock.random();
  let queue = orderTargets(route.strategy, route.targets, random);
  const seen = new Set<RouteTarget>(queue);
  let last: unknown;
  let coolingMs = Infinity;

  while (queue.length) {
    const target = queue.shift()!;
    if (target.unavailable) {
      ctx.attempts.push(skipped(target, target.unavailable));
      last ??= new GatewayError('provider_unavailable', `provider "${target.provider}" is unavailable: ${target.unavailable}`);
      continue;
    }
    const policy = target.retry;
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      const now = clock.now();
      const admission = target.state.admit(now);
      if (admission === 'no') {
        const wait = target.state.coolingFor(now);
        coolingMs = Math.min(coolingMs, wait);
        ctx.attempts.push(skipped(target, `cooling down for ${wait} ms`));
        break;
      }
      const remaining = deadline - now;
      if (remaining <= 0) {
        if (admission === 'probe') target.state.releaseProbe();
        throw last ?? new GatewayError('timeout', `no attempt could start within the retry budget of ${route.retry.budgetMs} ms`);
      }
      try {
        await attemptOnce(ctx, next, target, capTimeouts(target.timeouts, remaining), runtime.redact);
        return;
      } catch (err) {
        if (!(err instanceof UpstreamError) || ctx.signal.aborted) {
          if (admission === 'probe') target.state.releaseProbe();
          throw err;
        }
        last = err;
        if (isTargetFault(err)) target.state.recordFailure(clock.now(), err.status === 429 ? err.retryAfterMs : undefined);
        else if (admission === 'probe') target.state.releaseProbe();
        if (isClientFault(err)) {
          const fallbacks = err.category && route.fallbacks[err.category];
          if (!fallbacks?.length) throw err;
          // The refusal is about this model (prompt too long, policy): other aliases may accept it.
          queue = fallbacks.flatMap((alias) => orderTargets(runtime.models.get(alias)!.strategy, runtime.models.get(alias)!.targets, random)).filter((t) => !seen.has(t));
          queue.forEach((t) => seen.add(t));
          break;
        }
        if (!isRetryable(err, policy) || attempt === policy.attempts) break;
        if (err.retryAfterMs !== undefined && err.retryAfterMs > policy.maxRetryAfterMs) break;
        const wait = err.retryAfterMs ?? backoffDelay(policy, attempt, random);
        if (clock.now() + wait >= deadline) break;
        await clock.sleep(wait, ctx.signal);
      }
    }
  }
  if (last === undefined && coolingMs !== Infinity) {
    const seconds = Math.max(1, Math.ceil(coolingMs / 1000));
    throw new GatewayError('provider_unavailable', `every target of "${route.name}" is cooling down after failures; retry in ${seconds} s`, { headers: { 'retry-after': String(seconds) } });
  }
  throw last;
}

/** One try against one target: per-attempt abort signal and total timer, bookkeeping, stream commit. */
async function attemptOnce(ctx: RequestContext, next: () => Promise<void>, target: RouteTarget, timeouts: Timeouts, redact: (text: string) => string): Promise<void> {
  // One controller per attempt, aborted by its timer or by the client leaving (cheaper than
  // AbortSignal.any, which keeps weak references alive per dependent signal).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new AttemptTimeout());
  }, timeouts.totalMs);
  const onClientGone = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onClientGone, { once: true });
  ctx.target = target;
  ctx.upstream = undefined;
  ctx.response = undefined;
  ctx.attempt = { signal: controller.signal, timeouts };
  const state = target.state;
  const started = performance.now();
  state.inFlight++;
  let streaming = false;
  try {
    await next();
    const response = ctx.response as GatewayResponse | undefined; // set by the inner stages
    if (response?.kind === 'stream') {
      ctx.response = { kind: 'stream', chunks: await primeStream(response.chunks) };
      ctx.state[STREAM_DONE] = () => {
        state.inFlight--;
        ctx.signal.removeEventListener('abort', onClientGone);
      };
      streaming = true;
    }
    const elapsed = performance.now() - started;
    state.recordSuccess(elapsed);
    ctx.attempts.push(record(target, 200, 'ok', elapsed));
  } catch (err) {
    const elapsed = performance.now() - started;
    const failure = timedOut && !ctx.signal.aborted ? new UpstreamError(target.provider, 'timeout', 0, { message: `no answer within ${timeouts.totalMs} ms` }, undefined, err) : err;
    ctx.attempts.push({ ...record(target, failure instanceof UpstreamError ? failure.status : 0, 'error', elapsed), error: redact((failure as Error).message) });
    throw failure;
  } finally {
    clearTimeout(timer);
    if (!streaming) {
      state.inFlight--;
      ctx.signal.removeEventListener('abort', onClientGone);
    }
  }
}

function capTimeouts(t: Timeouts, remainingMs: number): Timeouts {
  if (remainingMs >= t.totalMs && remainingMs >= t.firstByteMs && remainingMs >= t.connectMs) return t;
  const cap = Math.max(1, Math.floor(remainingMs));
  return { connectMs: Math.min(t.connectMs, cap), firstByteMs: Math.min(t.firstByteMs, cap), idleMs: t.idleMs, totalMs: Math.min(t.totalMs, cap) };
}

function skipped(target: RouteTarget, reason: string): AttemptRecord {
  return { provider: target.provider, model: target.model, status: 0, outcome: 'skipped', durationMs: 0, error: reason };
}

function record(target: RouteTarget, status: number, outcome: AttemptRecord['outcome'], elapsedMs: number): AttemptRecord {
  return { provider: target.provider, model: target.model, status, outcome, durationMs: Math.round(elapsedMs * 100) / 100 };
}
