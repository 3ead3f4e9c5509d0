/**
 * A utility call that asks for structured output (Gemini CLI's model router classifies every
 * prompt with a JSON schema before the turn runs) is answered as a real model would: with JSON
 * that fits the schema. Answered with prose, the client retries with backoff for minutes.
 */

/** The smallest value that fits a JSON Schema (Gemini's upper-case `type` too): first enum value, required properties only. */
// biome-ignore lint/suspicious/noExplicitAny: a client's JSON Schema, read by keyword
export function sampleOf(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (schema.properties ? 'object' : 'string'))).toLowerCase();
  if (type === 'object') {
    const out: Record<string, unknown> = {};
    const props = schema.properties ?? {};
    for (const name of schema.required ?? Object.keys(props)) out[name] = sampleOf(props[name]);
    return out;
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  return 'scripted';
}
