import type { Next, RequestContext, RequestOutcome, StageInstance } from '../plugin-api.ts';

export type Terminal = (ctx: RequestContext) => Promise<void>;

/**
 * Runs the stages as an onion. `next()` runs the rest of the chain; it may be called again once
 * the previous call settled (retry re-runs the inner stages per attempt), never twice at once.
 */
export function compose(stages: readonly StageInstance[], terminal: Terminal): (ctx: RequestContext) => Promise<void> {
  const handlers = stages.filter((s) => s.handle);
  const count = handlers.length;
  return function run(ctx) {
    const step = (i: number): Promise<void> => {
      if (i === count) return terminal(ctx);
      const stage = handlers[i];
      let running = false;
      const next: Next = async () => {
        if (running) throw new Error(`stage "${stage.name}" called next() while a previous call was still running`);
        running = true;
        try {
          await step(i + 1);
        } finally {
          running = false;
        }
      };
      return stage.handle!(ctx, next);
    };
    return step(0);
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
