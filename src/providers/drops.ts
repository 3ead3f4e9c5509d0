/** How a provider's translation reports a field it leaves out for its target (see `ProviderCall.drop`). */
import type { Drop, ProviderCall } from '../plugin-api.ts';

/**
 * Reports `drop` for this attempt: named in the answer's `x-switchyard-dropped` header, the log
 * line and the dropped-fields counter, or refused (throws the 400) when the request is strict.
 * Call it before leaving the field out. On a call the gateway did not make (a test's fake,
 * without `drop`) the log says it.
 *
 * @example
 * if (!options.reasoning && call.request.reasoning_effort != null) reportDrop(call, { field: 'reasoning_effort', reason: `model ${call.model} has no reasoning` });
 */
export function reportDrop(call: ProviderCall, drop: Drop): void {
  if (call.drop) call.drop(drop);
  else call.log.info({ reqId: call.requestId, provider: call.provider, dropped: drop.field }, `dropped '${drop.field}': ${drop.reason}`);
}
