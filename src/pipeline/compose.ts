import type { Next, RequestContext, RequestOutcome, StageInstance } from '../plugin-api.ts';

export type Terminal = (ctx: RequestContext) => Promise<void>;

/**
 * Runs the stages as an onion. `next()` runs the rest of the chain; it may be called again once
 * the previous call settled (retry re-runs the inner stages per attempt), never twice at once.
 * Per stage and request: one `next` closure and the one promise its chain returns (no async
 * wrapper, whose own promise and resumption every request paid for at every stage). The guard is
 * cleared by `then(settled, failed)`: `finally` costs two closures and two promises more.
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
    const failed = (err: unknown) => {
      running = false;
      throw err;
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
      return inner.then(settled, failed);
    };
    return stage.handle!(ctx, next);
  };
  return function run(ctx) {
    return step(ctx, 0);
  };
}

/** What the hooks return when none had to be awaited: one settled promise for every such request. */
const DONE: Promise<void> = Promise.resolve();

/**
 * After the response: every stage's onResponse, in pipeline order; failures are logged, not
 * thrown. Hooks that return nothing (most, like the log line's) run in one synchronous pass; the
 * chain goes asynchronous only from a hook that returns a promise.
 */
export function composeOnResponse(stages: readonly StageInstance[]): (ctx: RequestContext, outcome: RequestOutcome) => Promise<void> {
  const hooks = stages.filter((s) => s.onResponse);
  const failed = (ctx: RequestContext, stage: StageInstance, err: unknown) => ctx.log.error({ err, stage: stage.name, reqId: ctx.id }, 'onResponse hook failed');
  const from = (ctx: RequestContext, outcome: RequestOutcome, first: number): Promise<void> => {
    for (let i = first; i < hooks.length; i++) {
      const stage = hooks[i];
      let result: unknown;
      try {
        result = stage.onResponse!(ctx, outcome);
      } catch (err) {
        failed(ctx, stage, err);
        continue;
      }
      if (isThenable(result))
        return Promise.resolve(result).then(
          () => from(ctx, outcome, i + 1),
          (err: unknown) => {
            failed(ctx, stage, err);
            return from(ctx, outcome, i + 1);
          },
        );
    }
    return DONE;
  };
  return (ctx, outcome) => from(ctx, outcome, 0);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
