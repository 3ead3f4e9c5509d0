/**
 * A deterministic value that satisfies a JSON schema, for the mock's tool-call arguments and
 * structured outputs: the SDKs' helpers (tool runners, `parse()` with a schema) then work
 * against the offline `demo` model. Covers what tool and output schemas use (objects with
 * required properties, arrays, enums, consts, numbers with bounds, anyOf/oneOf, local $refs);
 * `pattern` is not solved.
 */
// biome-ignore lint/suspicious/noExplicitAny: a JSON Schema the client sent: any keyword, read as found
type Schema = Record<string, any>;

const FORMATS: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00',
  email: 'user@example.com',
  uri: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
};

export function sampleOf(schema: unknown, root: Schema = schema as Schema, depth = 0, name = 'value'): unknown {
  if (!schema || typeof schema !== 'object' || depth > 32) return null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string' && s.$ref.startsWith('#/')) {
    const target = s.$ref
      .slice(2)
      .split('/')
      // biome-ignore lint/suspicious/noExplicitAny: walking a JSON pointer through a schema of unknown shape
      .reduce<any>((node, part) => node?.[part], root);
    return sampleOf(target, root, depth + 1, name);
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if ('default' in s) return s.default;
  const choices = s.anyOf ?? s.oneOf;
  if (Array.isArray(choices) && choices.length) return sampleOf(choices.find((c: Schema) => c?.type !== 'null') ?? choices[0], root, depth + 1, name);
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((part: Schema) => sampleOf(part, root, depth + 1, name)));
  const type = Array.isArray(s.type) ? (s.type.find((t: string) => t !== 'null') ?? 'null') : (s.type ?? (s.properties ? 'object' : undefined));
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties: Schema = s.properties ?? {};
      // Every declared property: strict structured outputs require them all anyway.
      for (const [key, sub] of Object.entries(properties)) out[key] = sampleOf(sub, root, depth + 1, key);
      for (const key of s.required ?? []) if (!(key in out)) out[key] = 'example';
      return out;
    }
    case 'array': {
      const count = Math.max(1, s.minItems ?? 1);
      return Array.from({ length: Math.min(count, s.maxItems ?? count) }, () => sampleOf(s.items ?? {}, root, depth + 1, name));
    }
    case 'string': {
      const text = FORMATS[s.format] ?? `example ${name}`;
      return text.length < (s.minLength ?? 0) ? text.padEnd(s.minLength, '.') : typeof s.maxLength === 'number' ? text.slice(0, s.maxLength) : text;
    }
    case 'integer':
    case 'number': {
      const low = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined);
      const high = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : undefined);
      const n = low ?? (high !== undefined ? Math.min(high, 1) : 1);
      return type === 'integer' ? Math.ceil(n) : n;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}
