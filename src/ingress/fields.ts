/**
 * Reading a request that arrived as untyped JSON (Messages, Gemini): each reader checks one field
 * and answers a 400 naming it in the gateway's path style (`messages[1].content[0].source.data`)
 * instead of letting a wrong type crash a translation.
 */
import { GatewayError } from '../errors.ts';

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
