/**
 * The answer OpenAI would give for a refusal: status, error envelope fields and headers.
 * Over a rate limit: 429 `rate_limit_exceeded` of type `requests` or `tokens`, naming the limit,
 * what is used and when to retry, with Retry-After (seconds) and retry-after-ms (which the
 * official SDKs read first). A spent budget: 429 `insufficient_quota` with `x-should-retry:
 * false`, which the SDKs honour. The pipeline wraps it in the error catalogue's envelope.
 */
import { fromNano, toNano } from './store.ts';
import type { Refusal } from './types.ts';

export interface RefusalAnswer {
  status: number;
  code: 'rate_limit_exceeded' | 'insufficient_quota' | 'model_not_allowed';
  /** OpenAI's `type` for this error. */
  type: string;
  message: string;
  headers: Record<string, string>;
}

/** `key:search-prod` → `key search-prod`. */
const named = (scope: string): string => scope.replace(':', ' ');

/** Dollars and cents, or two significant digits below a cent (small test budgets stay readable). */
const usd = (n: number): string => {
  const v = fromNano(toNano(n));
  return v === 0 || v >= 0.01 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(2))}`;
};

function retryIn(ms: number): string {
  return ms < 1_000 ? `${Math.ceil(ms)}ms` : `${Number((ms / 1_000).toFixed(3))}s`;
}

function retryHeaders(ms: number | null): Record<string, string> {
  if (ms === null) return { 'x-should-retry': 'false' };
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1_000))), 'retry-after-ms': String(Math.ceil(ms)) };
}

export function refusalAnswer(r: Refusal): RefusalAnswer {
  const who = named(r.scope);
  const wait = r.retryAfterMs === null ? '' : ` Please try again in ${retryIn(r.retryAfterMs)}.`;
  switch (r.kind) {
    case 'requests':
      return {
        status: 429,
        code: 'rate_limit_exceeded',
        type: 'requests',
        message: `Rate limit reached for ${who} on requests per min (RPM): Limit ${r.limit}, Used ${r.used}, Requested ${r.requested}.${wait}`,
        headers: retryHeaders(r.retryAfterMs),
      };
    case 'tokens':
      return {
        status: 429,
        code: 'rate_limit_exceeded',
        type: 'tokens',
        message: r.final
          ? `Request too large for ${who} on tokens per min (TPM): Limit ${r.limit}, Requested ${r.requested}. The input or output tokens must be reduced in order to run successfully.`
          : `Rate limit reached for ${who} on tokens per min (TPM): Limit ${r.limit}, Used ${r.used}, Requested ${r.requested}.${wait}`,
        headers: retryHeaders(r.retryAfterMs),
      };
    case 'concurrency':
      return {
        status: 429,
        code: 'rate_limit_exceeded',
        type: 'requests',
        message: `Concurrency limit reached for ${who}: Limit ${r.limit} requests in flight, In flight ${r.used}.${wait}`,
        headers: retryHeaders(r.retryAfterMs),
      };
    case 'budget':
      if (!r.final) {
        return {
          status: 429,
          code: 'rate_limit_exceeded',
          type: 'requests',
          message: `The budget of ${who} is held by requests in flight: ${usd(r.used)} spent or reserved of ${usd(r.limit)}, this request may cost up to ${usd(r.requested)}.${wait}`,
          headers: retryHeaders(r.retryAfterMs),
        };
      }
      return {
        status: 429,
        code: 'insufficient_quota',
        type: 'insufficient_quota',
        message: `You exceeded your current quota: ${who} has used ${usd(r.used)} of its ${usd(r.limit)} budget, and this request may cost up to ${usd(r.requested)}.${r.resetsAt ? ` The budget resets at ${new Date(r.resetsAt).toISOString()}.` : ''}`,
        headers: { 'x-should-retry': 'false' },
      };
    case 'unpriced':
      return {
        status: 403,
        code: 'model_not_allowed',
        type: 'permission_error',
        message: `${who} has a budget, and the model it asked for has no price configured: the gateway cannot keep the budget, so it refuses. Ask the operator to set a price for it.`,
        headers: { 'x-should-retry': 'false' },
      };
  }
}
