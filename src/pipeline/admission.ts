/**
 * Whether a request may use a target now, decided in one place for `retry` and the dispatcher:
 * the target's provider is configured, it can do the request's operation, and the limits of the
 * key, its team and the target admit it (reserving them). Cooldowns are retry's own business.
 */
import { GatewayError } from '../errors.ts';
import type { Operation, RouteTarget } from '../plugin-api.ts';
import type { Exchange, TargetSkip } from './exchange.ts';

/**
 * Undefined when admitted; a skip (with the answer for the client if no other target serves)
 * when this target cannot take the request. Throws the answer when the key or team is over a
 * limit: no other target would change that.
 */
export async function admitTarget(x: Exchange, target: RouteTarget): Promise<TargetSkip | undefined> {
  if (target.unavailable) return { reason: target.unavailable, error: unavailableError(target) };
  if (!canServe(target, x.operation)) return { reason: 'does not do embeddings', error: notEmbedding(target) };
  return x.services.limits?.admit(x, target);
}

/** Every target chats and counts tokens (exactly or by the gateway's estimate); embeddings need a provider that embeds. */
function canServe(target: RouteTarget, operation: Operation): boolean {
  return operation !== 'embeddings' || (target.capabilities.embeddings === true && target.instance.embed !== undefined);
}

/** The 503 for a target whose provider cannot serve; the reason goes to the log, not the client. */
export function unavailableError(target: RouteTarget): GatewayError {
  return new GatewayError('provider_unavailable', `The model is temporarily unavailable: its provider "${target.provider}" is not configured on this gateway.`, {
    // Only the operator can fix it: an SDK retrying it three times only adds latency.
    headers: { 'x-should-retry': 'false' },
  });
}

/** The 400 for an embeddings request whose target cannot embed. */
export function notEmbedding(target: RouteTarget): GatewayError {
  return new GatewayError('invalid_request', `This model is served by "${target.provider}" (${target.model}), which does not do embeddings.`, { param: 'model' });
}
