/**
 * Reading a Gemini request that arrived as untyped JSON: the shared readers (../fields.ts), and
 * Gemini's own number forms (Google's wording for a wrong field is "Invalid JSON payload received").
 */
import { invalid } from '../fields.ts';

export { arrayAt, invalid, isObject, type Json, objectAt, stringAt } from '../fields.ts';

export function numberAt(v: unknown, param: string, integer = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(param, 'expected a number');
  if (integer && !Number.isInteger(v)) throw invalid(param, 'expected an integer');
  return v;
}

/** Proto3 JSON writes int64 as a string ("8192"): both are taken. */
export function integerAt(v: unknown, param: string): number {
  return numberAt(typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v, param, true);
}
