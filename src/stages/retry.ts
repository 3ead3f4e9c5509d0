/**
 * `retry`: runs the inner stages once per attempt, over the alias's targets in the order its
 * strategy gives. Transient failures are retried on the same target with exponential backoff
 * and full jitter, honouring Retry-After up to a cap; then the next target is tried. Targets
 * cooling down are skipped; a time budget bounds retries and fallbacks together. A stream is
 * committed once its first chunk exists: failover never happens after bytes reach the client.
 */
import { defineStage, type AttemptRecord, type Clock, type RouteTarget, type RuntimeView, type Timeouts } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { Attempt } from '../pipeline/attempt.ts';
import { admitTarget } from '../pipeline/admission.ts';
import { exchangeOf, type Exchange } from '../pipeline/exchange.ts';
import { orderTargets } from '../routing/order.ts';
import { backoffDelay, isRetryable } from '../routing/policy.ts';

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'retry',
  description: 'Routing strategy, retries, backoff, cooldowns and fallbacks across the alias targets',
  create(_options, { clock, runtime }) {
    return {
      name: 'retry',
      handle: (ctx, next) => (ctx.route ? runAttempts(exchangeOf(ctx), next, clock, runtime) : next()),
    };
  },
});

async function runAttempts(x: Exchange, next: () => Promise<void>, clock: Clock, runtime: RuntimeView): Promise<void> {
  const route = x.route!;
  const started = clock.now();
  const deadline = route.retry.budgetMs === undefined ? Infinity : started + route.retry.budgetMs;
  const random = () => clock.random();
  let queue = orderTargets(route.strategy, route.targets, random);
  const seen = new Set<RouteTarget>(queue);
  let last: unknown;
  let coolingMs = Infinity;

  while (queue.length) {
    const target = queue.shift()!;
    const policy = target.retry;
    let admitted = false;
    for (let n = 1; n <= policy.attempts; n++) {
      const now = clock.now();
      const admission = target.state.admit(now);
      if (admission === 'no') {
        const wait = target.state.coolingFor(now);
        coolingMs = Math.min(coolingMs, wait);
        x.attempts.push(skipped(target, `cooling down for ${wait} ms`));
        break;
      }
      const remaining = deadline - now;
      if (remaining <= 0) {
        if (admission === 'probe') target.state.releaseProbe();
        throw last ?? new GatewayError('timeout', `no attempt could start within the retry budget of ${route.retry.budgetMs} ms`);
      }
      if (!admitted) {
        // Admitted once per target, before its first try (retries on it are covered).
        let skip;
        try {
          skip = await admitTarget(x, target);
        } catch (refused) {
          // A key or team over its limits: the probe this request held is not a verdict on the target.
          if (admission === 'probe') target.state.releaseProbe();
          throw refused;
        }
        if (skip) {
          if (admission === 'probe') target.state.releaseProbe();
          x.attempts.push(skipped(target, skip.reason));
          last ??= skip.error;
          break;
        }
        admitted = true;
      }
      const attempt = new Attempt(x, target, capTimeouts(target.timeouts, remaining));
      try {
        await next();
        await attempt.complete();
        // An answer the gateway made itself (a token count estimate) is no verdict on the target.
        if (!attempt.sent && admission === 'probe') target.state.releaseProbe();
        return;
      } catch (thrown) {
        const err = attempt.fail(thrown);
        if (!(err instanceof UpstreamError) || x.signal.aborted) {
          if (admission === 'probe') target.state.releaseProbe();
          throw err;
        }
        last = err;
        if (err.targetFault) target.state.recordFailure(clock.now(), err.status === 429 ? err.retryAfterMs : undefined);
        else if (admission === 'probe') target.state.releaseProbe();
        if (err.clientFault) {
          const fallbacks = err.category && route.fallbacks[err.category];
          if (!fallbacks?.length) throw err;
          // The refusal is about this model (prompt too long, policy): other aliases may accept it.
          queue = fallbacks.flatMap((alias) => orderTargets(runtime.models.get(alias)!.strategy, runtime.models.get(alias)!.targets, random)).filter((t) => !seen.has(t));
          queue.forEach((t) => seen.add(t));
          break;
        }
        if (!isRetryable(err, policy) || n === policy.attempts) break;
        if (err.retryAfterMs !== undefined && err.retryAfterMs > policy.maxRetryAfterMs) break;
        const wait = err.retryAfterMs ?? backoffDelay(policy, n, random);
        if (clock.now() + wait >= deadline) break;
        await clock.sleep(wait, x.signal);
      }
    }
  }
  // Targets cooling and others only skipped (unavailable, at their limits): the cooling answer, which says when to retry.
  if (coolingMs !== Infinity && !(last instanceof UpstreamError)) {
    const seconds = Math.max(1, Math.ceil(coolingMs / 1000));
    throw new GatewayError('provider_unavailable', `every target of "${route.name}" is cooling down after failures; retry in ${seconds} s`, { headers: { 'retry-after': String(seconds) } });
  }
  throw last;
}

/** An attempt's limits cut to the time left in the retry budget. */
export function capTimeouts(t: Timeouts, remainingMs: number): Timeouts {
  if (remainingMs >= t.totalMs && remainingMs >= t.firstByteMs && remainingMs >= t.connectMs) return t;
  const cap = Math.max(1, Math.floor(remainingMs));
  return { connectMs: Math.min(t.connectMs, cap), firstByteMs: Math.min(t.firstByteMs, cap), idleMs: t.idleMs, totalMs: Math.min(t.totalMs, cap) };
}

function skipped(target: RouteTarget, reason: string): AttemptRecord {
  return { provider: target.provider, model: target.model, status: 0, outcome: 'skipped', durationMs: 0, error: reason };
}
