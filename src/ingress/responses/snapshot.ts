/**
 * A deep copy of plain data (objects, arrays, strings, numbers, booleans, null, undefined): what
 * structuredClone makes of it, without its serialiser (several times the cost for the small
 * items and responses a Responses stream copies into its events).
 */
export function snapshot<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(snapshot) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copy = snapshot((value as Record<string, unknown>)[key]);
    // A `__proto__` key from parsed JSON (a model's tool arguments) is data, not the copy's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out as T;
}
