/** Shared handling of request parameters a provider cannot honour. */
import { GatewayError } from '../errors.ts';
import type { ProviderCall } from '../plugin-api.ts';

/**
 * Call for each parameter present in the request that the provider cannot honour. Answers 400
 * naming it, unless `dropUnsupportedParams` is set for the alias or provider: then the caller
 * drops it and the log says so. Returns true when the parameter should be dropped.
 */
export function unsupportedParam(call: ProviderCall, param: string, why = 'is not supported'): true {
  if (!call.dropUnsupportedParams) {
    throw new GatewayError('unsupported_parameter', `${call.provider}: the parameter '${param}' ${why} by model ${call.model}. Remove it, or set dropUnsupportedParams: true for this model in gateway.yaml.`, { param });
  }
  call.log.info({ reqId: call.requestId, provider: call.provider, param }, `dropped unsupported parameter '${param}'`);
  return true;
}

/** Checks every listed parameter that is present (not undefined/null) in the request. */
export function checkUnsupported(call: ProviderCall, params: readonly string[], why?: string): void {
  for (const p of params) {
    const v = call.request[p];
    if (v !== undefined && v !== null) unsupportedParam(call, p, why);
  }
}
