/** What a provider's answer that the gateway cannot read is: the provider's fault (a 502), never the client's. */
import { GatewayError } from '../errors.ts';
import type { ProviderCall, RouteTarget } from '../plugin-api.ts';
import { UpstreamError } from '../providers/upstream-error.ts';

/** `{ input_tokens }` from a provider that counted; anything else is the provider's fault (502). */
export function inputTokensOf(body: unknown, target: RouteTarget, countOf?: (body: unknown) => number | undefined): number {
  const n = countOf ? countOf(body) : typeof body === 'object' && body !== null && 'input_tokens' in body ? body.input_tokens : undefined;
  if (typeof n === 'number' && Number.isFinite(n)) return n;
  throw UpstreamError.protocol(target.provider, 'the token count answer has no token count');
}

/** A translation failure as the provider's protocol error; the gateway's and upstream errors as they are. */
export function providerFault(call: ProviderCall, err: unknown): unknown {
  if (err instanceof UpstreamError || err instanceof GatewayError) return err;
  return UpstreamError.protocol(call.provider, String((err as Error)?.message ?? err), err);
}
