/**
 * What a translation to the chat model leaves out of a Gemini request. None of it is lost on the
 * native pass-through to a gemini target, which sends the client's body as it came. A translated
 * attempt follows the gateway's rule (src/contract/dropped.ts): what only changes how the model
 * works (safetySettings, hosted tools, ...) is dropped and reported; what would change what it is
 * asked (a cachedContent, a video by file URI, an image answer) is refused.
 */
import type { Drop } from '../../contract/dropped.ts';
import { GatewayError } from '../../errors.ts';

export type { Drop };

export class Drops {
  /** Left out, and reported: how the model works changes, not what it is asked. */
  readonly list: Drop[] = [];
  /** Content the model would be asked about but cannot read (a cache, a video): refused on a translated attempt. */
  readonly unservable: Drop[] = [];

  add(field: string, reason: string, what?: string): void {
    this.list.push(dropOf(field, reason, what));
  }

  refuse(field: string, reason: string, what?: string): void {
    this.unservable.push(dropOf(field, reason, what));
  }
}

function dropOf(field: string, reason: string, what: string | undefined): Drop {
  return what === undefined ? { field, reason } : { field, what, reason };
}

/** The 400 a translated attempt answers for content it cannot carry (NativeRequest.unservable). */
export function refusalOf(drop: Drop): GatewayError {
  const what = drop.what ? ` (${drop.what})` : '';
  return new GatewayError('unsupported_parameter', `The parameter '${drop.field}'${what} is only supported when a Gemini model serves this request: ${drop.reason}.`, { param: drop.field });
}
