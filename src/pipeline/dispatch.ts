import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../plugin-api.ts';
import { Attempt, type AttemptEnv } from './attempt.ts';

/**
 * The innermost step of the pipeline: sends the current attempt. Without `retry` in the pipeline
 * nobody started one, so the route's first target gets the only attempt.
 */
export function dispatcher(env: AttemptEnv): (ctx: RequestContext) => Promise<void> {
  return async function dispatch(ctx) {
    let attempt = ctx.attempt as Attempt | undefined;
    if (!attempt) {
      const target = ctx.route?.targets[0];
      if (!target) throw new GatewayError('internal_error', 'no route was resolved for this request (is "route" in the pipeline?)');
      const skip = await env.governor?.admit(ctx, target);
      if (skip) throw skip.error;
      attempt = new Attempt(ctx, target, target.timeouts, env);
    }
    return attempt.send();
  };
}
