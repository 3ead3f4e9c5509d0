/**
 * What the gateway does with a Drop (src/contract/dropped.ts), once for every way in: the 400 a
 * strict request gets instead, and the `x-switchyard-dropped` header every answer carries.
 * Nothing here runs for a request that dropped nothing.
 */
import { GatewayError } from '../errors.ts';
import type { Drop } from '../plugin-api.ts';

/** The header's longest value: proxies cap a header line at a few KiB, and a client may send many unknown fields. */
export const DROPPED_HEADER_MAX = 512;

/** The 400 a strict request answers instead of dropping: `param` names the field, the message says why. */
export function refusalOf(drop: Drop): GatewayError {
  const what = drop.what ? ` (${drop.what})` : '';
  return new GatewayError(
    'unsupported_parameter',
    `The parameter '${drop.field}'${what} cannot be carried to this model: ${drop.reason}. The request is strict (x-switchyard-strict, or strict: true on the key or model alias), so it is refused rather than dropped.`,
    { param: drop.field },
  );
}

/** Both lists as one, without a copy when either is empty; undefined when both are. */
export function joinDrops(a: readonly Drop[] | undefined, b: readonly Drop[] | undefined): readonly Drop[] | undefined {
  if (!a?.length) return b?.length ? b : undefined;
  if (!b?.length) return a;
  return [...a, ...b];
}

/**
 * `client_metadata, tools[8] (web_search)`: each field with what it was, in order, cut to
 * DROPPED_HEADER_MAX with `...+N more` (ASCII: a header value holds no other characters, so any
 * other a client's field name brings becomes `?`).
 */
export function droppedHeader(drops: readonly Drop[]): string {
  let out = '';
  for (let i = 0; i < drops.length; i++) {
    const d = drops[i];
    const item = headerSafe(d.what ? `${d.field} (${d.what})` : d.field);
    const next = out ? `${out}, ${item}` : item;
    const rest = drops.length - i - 1;
    // Room for the "...+N more" that would follow if a later item does not fit.
    if (next.length > DROPPED_HEADER_MAX - (rest ? 16 : 0)) return `${out ? `${out}, ` : ''}...+${drops.length - i} more`;
    out = next;
  }
  return out;
}

const UNSAFE = /[^\x20-\x7e]/g;

function headerSafe(text: string): string {
  return text.replace(UNSAFE, '?');
}
