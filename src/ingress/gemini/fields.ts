/**
 * Reading a Gemini request that arrived as untyped JSON: each reader checks one field and answers
 * a 400 naming it in the gateway's path style (`contents[1].parts[0].inlineData`), Google's own
 * wording for a wrong field being "Invalid JSON payload received".
 */
import { GatewayError } from '../../errors.ts';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function invalid(param: string, why: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid '${param}': ${why}.`, { param });
}

export function objectAt(v: unknown, param: string): Json {
  if (!isObject(v)) throw invalid(param, 'expected an object');
  return v;
}

export function arrayAt(v: unknown, param: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(param, 'expected an array');
  return v;
}

export function stringAt(v: unknown, param: string): string {
  if (typeof v !== 'string') throw invalid(param, 'expected a string');
  return v;
}

export function numberAt(v: unknown, param: string, integer = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(param, 'expected a number');
  if (integer && !Number.isInteger(v)) throw invalid(param, 'expected an integer');
  return v;
}

/** Proto3 JSON writes int64 as a string ("8192"): both are taken. */
export function integerAt(v: unknown, param: string): number {
  return numberAt(typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v, param, true);
}
