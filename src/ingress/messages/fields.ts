/**
 * Reading a Messages request that arrived as untyped JSON: the shared readers (../fields.ts), a
 * number within a range, and what only Anthropic serves.
 */
import { GatewayError } from '../../errors.ts';
import type { Drop } from '../../plugin-api.ts';
import { invalid } from '../fields.ts';

export { arrayAt, invalid, isObject, type Json, objectAt, stringAt } from '../fields.ts';

/** A finite number within [min, max]; `integer` also rejects fractions. */
export function numberAt(v: unknown, param: string, range: { min?: number; max?: number; integer?: boolean } = {}): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(param, 'expected a number');
  if (range.integer && !Number.isInteger(v)) throw invalid(param, 'expected an integer');
  if (range.min !== undefined && v < range.min) throw invalid(param, `expected a number >= ${range.min}`);
  if (range.max !== undefined && v > range.max) throw invalid(param, `expected a number <= ${range.max}`);
  return v;
}

/**
 * Collects what only Anthropic itself serves. The translation leaves it out and goes on, so the
 * caller can still choose the native pass-through for an `anthropic` target. For any other
 * target, a part whose absence would change what the model is asked (`add`, `refuse`) is the 400
 * to answer; a part the model can do without (`drop`) is dropped and reported (`x-switchyard-
 * dropped`), or refused when the request is strict. Nothing is allocated until there is one.
 */
export class NativeOnly {
  /** The 400s for a translated target (NativeRequest.unservable). */
  unservable: GatewayError[] | undefined;
  /** Dropped and reported on a translated target (NativeRequest.untranslatable). */
  untranslatable: Drop[] | undefined;

  /** A part the translation cannot leave out: refused on a translated target. */
  add(param: string, what: string): void {
    this.refuse(
      new GatewayError(
        'unsupported_parameter',
        `The parameter '${param}' (${what}) is only supported when an Anthropic model serves /v1/messages; this model is served through the chat translation.`,
        { param },
      ),
    );
  }

  refuse(error: GatewayError): void {
    (this.unservable ??= []).push(error);
  }

  /** A part the model can do without: left out and reported on a translated target. */
  drop(field: string, what: string | undefined, reason: string): void {
    (this.untranslatable ??= []).push(what === undefined ? { field, reason } : { field, what, reason });
  }
}
