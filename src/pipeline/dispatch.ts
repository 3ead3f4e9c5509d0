import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../plugin-api.ts';
import { admitTarget } from './admission.ts';
import { Attempt } from './attempt.ts';
import { exchangeOf } from './exchange.ts';

/**
 * The innermost step of the pipeline: sends the current attempt. Without `retry` in the pipeline
 * nobody started one, so the route's first target gets the only attempt.
 */
export async function dispatch(ctx: RequestContext): Promise<void> {
  const x = exchangeOf(ctx);
  let attempt = x.attempt;
  if (!attempt) {
    const target = ctx.route?.targets[0];
    if (!target) throw new GatewayError('internal_error', 'no route was resolved for this request (is "route" in the pipeline?)');
    const skip = await admitTarget(x, target);
    if (skip) throw skip.error;
    attempt = new Attempt(x, target, target.timeouts);
  }
  return attempt.send();
}
