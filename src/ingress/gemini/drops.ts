/**
 * What a translation to the chat model leaves out of a Gemini request (safetySettings, hosted
 * tools, cachedContent, ...). None of it is lost on the native pass-through to a gemini target,
 * which sends the client's body as it came; a translated attempt goes without it and says so
 * (src/contract/dropped.ts).
 */
import type { Drop } from '../../contract/dropped.ts';

export type { Drop };

export class Drops {
  readonly list: Drop[] = [];

  add(field: string, reason: string, what?: string): void {
    this.list.push(what === undefined ? { field, reason } : { field, what, reason });
  }
}
