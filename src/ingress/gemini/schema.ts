/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: `type: "OBJECT"` in capitals, `nullable`, `format`,
 * `propertyOrdering`; https://ai.google.dev/api/caching#Schema) → JSON Schema, for function
 * `parameters` and `responseSchema` sent to chat targets. `parametersJsonSchema` and
 * `responseJsonSchema` are JSON Schema already and go as they are.
 */
import { isObject, type Json } from './fields.ts';

/** Keys whose value is one schema, a list of them, or a map of them. */
const ONE = ['items', 'not', 'additionalProperties'];
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const MAP = ['properties', '$defs', 'definitions'];
/** Gemini-only keys with no JSON Schema meaning. */
const GEMINI_ONLY = new Set(['nullable', 'propertyOrdering', 'example']);

export function jsonSchemaOf(schema: unknown): Json {
  if (!isObject(schema)) return {};
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (GEMINI_ONLY.has(key)) continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (ONE.includes(key) && isObject(value)) out[key] = jsonSchemaOf(value);
    else if (MANY.includes(key) && Array.isArray(value)) out[key] = value.map(jsonSchemaOf);
    else if (MAP.includes(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchemaOf(v)]));
    else out[key] = value;
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
  }
  return out;
}
