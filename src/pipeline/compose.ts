import type { Next, RequestContext, RequestOutcome, StageInstance } from '../plugin-api.ts';

export type Terminal = (ctx: RequestContext) => Promise<void>;

/**
 * Runs the stages as an onion. `next()` runs the rest of the chain; it may be called again once
 * the previous call settled (retry re-runs the inner stages per attempt), never twice at once.
 * Per stage and request: one `next` closure and the one promise its chain returns (no async
 * wrapper, whose own promise and resumption every request paid for at every stage).
 */
export function compose(stages: readonly StageInstance[], terminal: Terminal): (ctx: RequestContext) => Promise<void> {
  const handlers = stages.filter((s) => s.handle);
  const count = handlers.length;
  const step = (ctx: RequestContext, i: number): Promise<void> => {
    if (i === count) return terminal(ctx);
    const stage = handlers[i];
    let running = false;
    const settled = () => {
      running = false;
    };
    const next: Next = () => {
      if (running) return Promise.reject(new Error(`stage "${stage.name}" called next() while a previous call was still running`));
      running = true;
      let inner: Promise<void>;
      try {
        inner = step(ctx, i + 1);
      } catch (err) {
        running = false;
        return Promise.reject(err);
      }
      return inner.finally(settled);
    };
    return stage.handle!(ctx, next);
  };
  return function run(ctx) {
    return step(ctx, 0);
  };
}

/** After the response: every stage's onResponse, in pipeline order; failures are logged, not thrown. */
export function composeOnResponse(stages: readonly StageInstance[]): (ctx: RequestContext, outcome: RequestOutcome) => Promise<void> {
  const hooks = stages.filter((s) => s.onResponse);
  return async (ctx, outcome) => {
    for (const stage of hooks) {
      try {
        await stage.onResponse!(ctx, outcome);
      } catch (err) {
        ctx.log.error({ err, stage: stage.name, reqId: ctx.id }, 'onResponse hook failed');
      }
    }
  };
}
