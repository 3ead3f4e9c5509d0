import { GatewayError } from '../errors.ts';
import type { ProviderCall, RequestContext } from '../plugin-api.ts';

/** The innermost step of the pipeline: one attempt against the current target's provider. */
export async function dispatch(ctx: RequestContext): Promise<void> {
  const target = (ctx.target ??= ctx.route?.targets[0]);
  if (!target) throw new GatewayError('internal_error', 'no route was resolved for this request (is "route" in the pipeline?)');
  if (target.unavailable) throw new GatewayError('provider_unavailable', `provider "${target.provider}" is unavailable: ${target.unavailable}`);
  const call: ProviderCall = {
    provider: target.provider,
    request: ctx.body,
    model: target.model,
    stream: ctx.body.stream === true,
    signal: ctx.attempt?.signal ?? ctx.signal,
    requestId: ctx.id,
    log: ctx.log,
    dropUnsupportedParams: target.dropUnsupportedParams,
    timeouts: ctx.attempt?.timeouts ?? target.timeouts,
  };
  ctx.call = call;
  ctx.upstream = await target.instance.send(call);
}
