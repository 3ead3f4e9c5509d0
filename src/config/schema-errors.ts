/**
 * Turns ajv's findings into short, human messages with a document path. Built for the editor
 * loop of an ops engineer: "unknown field \"targts\" (did you mean \"targets\"?)", not a dump of
 * schema paths. Needs an ajv instance created with { allErrors: true, verbose: true }.
 */
import type { ErrorObject } from 'ajv';
import type { PathSegment } from './issues.ts';

export interface SchemaFinding {
  path: PathSegment[];
  /** Locate the mapping key rather than the value (unknown fields). */
  key: boolean;
  message: string;
}

export function describeSchemaErrors(errors: readonly ErrorObject[], data: unknown, prefix: PathSegment[] = []): SchemaFinding[] {
  // ajv reports a failed `if`/`then` twice: the `then` part's own error and "must match then":
  // the first, said with its condition, is the useful one. A bad mapping key is one
  // propertyNames error, not also the pattern error under it.
  const conditions = conditionsOf(errors);
  errors = errors.filter((e) => e.keyword !== 'if' && !(e.propertyName !== undefined && e.keyword !== 'propertyNames'));
  const branchOf = new Set<ErrorObject>();
  const findings: SchemaFinding[] = [];
  for (const e of errors) {
    if (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    // The same schema path holds for every item of a list: the instance tells whose branch it is.
    const branches = errors.filter((b) => b !== e && b.schemaPath.startsWith(`${e.schemaPath}/`) && within(b.instancePath, e.instancePath));
    branches.forEach((b) => branchOf.add(b));
    findings.push(...describeAlternatives(e, branches, data, prefix));
  }
  for (const e of errors) {
    if (branchOf.has(e) || e.keyword === 'oneOf' || e.keyword === 'anyOf') continue;
    const finding = describeOne(e, data, prefix);
    const condition = [...conditions].find(([then]) => e.schemaPath.startsWith(then))?.[1];
    findings.push(condition ? { ...finding, message: `${finding.message} (needed when ${condition})` } : finding);
  }
  return dedupe(findings);
}

function within(instancePath: string, ancestor: string): boolean {
  return instancePath === ancestor || instancePath.startsWith(`${ancestor}/`);
}

/** For each failed `if`: the path of its `then` → its condition in words (`backend is "redis"`). */
function conditionsOf(errors: readonly ErrorObject[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of errors) {
    if (e.keyword !== 'if' || !e.schemaPath.endsWith('/if')) continue;
    const condition = (e.parentSchema as { if?: { properties?: Record<string, { const?: unknown }> } } | undefined)?.if;
    const parts = Object.entries(condition?.properties ?? {})
      .filter(([, v]) => v.const !== undefined)
      .map(([k, v]) => `${k} is ${JSON.stringify(v.const)}`);
    if (parts.length) out.set(`${e.schemaPath.slice(0, -'/if'.length)}/then/`, parts.join(' and '));
  }
  return out;
}

function describeAlternatives(e: ErrorObject, branches: ErrorObject[], data: unknown, prefix: PathSegment[]): SchemaFinding[] {
  const path = [...prefix, ...toSegments(e.instancePath, data)];
  const alternatives = (Array.isArray(e.schema) ? e.schema : []) as Array<Record<string, unknown>>;
  const requiredNames = alternatives.map((a) => (Array.isArray(a.required) && a.required.length === 1 ? String(a.required[0]) : undefined));
  if (requiredNames.every(Boolean) && alternatives.length > 1) {
    const names = requiredNames.map((n) => `"${n}"`).join(' or ');
    return [{ path, key: false, message: (e.params as { passingSchemas?: unknown }).passingSchemas ? `set only one of ${names}` : `needs ${names}` }];
  }
  // The branch whose type matched explains the problem best.
  const byBranch = new Map<string, ErrorObject[]>();
  for (const b of branches) {
    const index = b.schemaPath.slice(e.schemaPath.length + 1).split('/')[0];
    byBranch.set(index, [...(byBranch.get(index) ?? []), b]);
  }
  // A branch whose type (or constant) the value does not have is no explanation.
  const misfit = (b: ErrorObject) => b.instancePath === e.instancePath && (b.keyword === 'type' || b.keyword === 'const' || b.keyword === 'enum');
  for (const list of byBranch.values()) {
    if (!list.some(misfit)) return list.map((b) => describeOne(b, data, prefix));
  }
  return [{ path, key: false, message: `must be ${alternatives.map(describeForm).join(' or ')} (got ${typeName(e.data)})` }];
}

/** What values a (small) schema accepts, in words: `an integer from 1 to 256`, `"auto"`. */
function describeForm(schema: Record<string, unknown>): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (typeof schema.type !== 'string') return 'another form';
  const { minimum: min, maximum: max } = schema;
  if ((schema.type === 'integer' || schema.type === 'number') && (min !== undefined || max !== undefined)) {
    if (min !== undefined && max !== undefined) return `${article(schema.type)} from ${String(min)} to ${String(max)}`;
    return min !== undefined ? `${article(schema.type)} of at least ${String(min)}` : `${article(schema.type)} of at most ${String(max)}`;
  }
  return article(schema.type);
}

function describeOne(e: ErrorObject, data: unknown, prefix: PathSegment[]): SchemaFinding {
  const path = [...prefix, ...toSegments(e.instancePath, data)];
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const field = String(p.additionalProperty);
      const known = Object.keys((e.parentSchema?.properties as object | undefined) ?? {});
      const hint = closest(field, known);
      const list = known.length ? ` (known: ${known.join(', ')})` : '';
      const owner = listOwning(field, e.parentSchema);
      // A field of a list's items written at the list's level: its line is not indented under the "- ".
      const indent = owner ? `; "${field}" belongs to each item of "${owner}": indent it under the item's "- "` : '';
      return { path: [...path, field], key: true, message: `unknown field "${field}"${hint ? ` (did you mean "${hint}"?)` : list}${indent}` };
    }
    case 'discriminator': {
      const tag = String(p.tag);
      const allowed = ((e.parentSchema?.oneOf as Array<{ properties?: Record<string, { const?: unknown }> }> | undefined) ?? [])
        .map((b) => b.properties?.[tag]?.const)
        .filter((v) => v !== undefined)
        .map((v) => JSON.stringify(v));
      const value = e.data && typeof e.data === 'object' ? (e.data as Record<string, unknown>)[tag] : undefined;
      return { path: [...path, tag], key: false, message: value === undefined ? `missing required field "${tag}"` : `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})` };
    }
    case 'required':
      // Point at the key naming the incomplete mapping (`demo:`), not at its first child.
      return { path, key: path.length > 0, message: `missing required field "${String(p.missingProperty)}"` };
    case 'type': {
      // `port:8080` is one string to YAML: a key needs a space after its colon.
      const glued = p.type === 'object' && typeof e.data === 'string' && /^[\w.-]+:[^\s/]/.test(e.data);
      const listed = p.type === 'array' && e.data !== null && typeof e.data === 'object';
      // YAML 1.2 (what the yaml package reads) has only true and false; yes/no/on/off are text.
      const yesNo = p.type === 'boolean' && typeof e.data === 'string' && /^(yes|no|on|off|y|n)$/i.test(e.data);
      const hint = glued
        ? `; put a space after the colon: "${(e.data as string).replace(':', ': ')}"`
        : listed
          ? '; start each item with "- " or write [ ... ]'
          : yesNo
            ? '; YAML reads it as text: write true or false'
            : '';
      return { path, key: false, message: `must be ${String(p.type).split(',').map(article).join(' or ')} (got ${typeName(e.data)})${hint}` };
    }
    case 'const':
      return { path, key: false, message: `must be ${JSON.stringify(p.allowedValue)} (got ${typeName(e.data)})` };
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      const hint = typeof e.data === 'string' ? closest(e.data, (p.allowedValues as unknown[]).map(String)) : undefined;
      return { path, key: false, message: `must be one of ${allowed} (got ${JSON.stringify(e.data)})${hint ? `; did you mean "${hint}"?` : ''}` };
    }
    case 'pattern': {
      const form = describePattern(String(p.pattern));
      const description = typeof e.parentSchema?.description === 'string' ? `: ${e.parentSchema.description}` : '';
      return { path, key: false, message: form ? `must be ${form} (got ${JSON.stringify(e.data)})` : `${JSON.stringify(e.data)} does not have the expected form${description}` };
    }
    case 'propertyNames':
      return { path: [...path, String(p.propertyName)], key: true, message: `name "${String(p.propertyName)}" may only use letters, digits, "_", "." and "-", starting with a letter or digit` };
    case 'minItems':
      return { path, key: false, message: `needs at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` };
    case 'minProperties':
      return { path, key: false, message: `needs at least ${String(p.limit)} entr${p.limit === 1 ? 'y' : 'ies'}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, key: false, message: `must be ${BOUND[e.keyword]} ${String(p.limit)} (got ${JSON.stringify(e.data)})` };
    case 'minLength':
      // The value is not shown: it may be a secret (`key` needs 8 characters).
      return { path, key: false, message: p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long` };
    case 'maxLength':
      return { path, key: false, message: `must be at most ${String(p.limit)} characters long` };
    case 'maxItems':
      return { path, key: false, message: `may have at most ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` };
    case 'uniqueItems':
      return { path, key: false, message: `lists the same item twice (items ${String(p.j)} and ${String(p.i)}): remove one` };
    default:
      // Keywords our schemas do not use: say so plainly rather than in ajv's words.
      return { path, key: false, message: 'is not a valid value here' };
  }
}

/** The property of `schema` that is a list whose items have the field `field`, if any. */
function listOwning(field: string, schema: unknown): string | undefined {
  const properties = (schema as { properties?: Record<string, { type?: unknown; items?: { properties?: Record<string, unknown> } }> } | undefined)?.properties ?? {};
  return Object.entries(properties).find(([, v]) => v.type === 'array' && v.items?.properties && field in v.items.properties)?.[0];
}

const BOUND: Record<string, string> = { minimum: 'at least', maximum: 'at most', exclusiveMinimum: 'more than', exclusiveMaximum: 'less than' };

/**
 * The forms our schemas' patterns (gateway.yaml and the built-in plugins') stand for, in
 * words; a test checks that every pattern in them is here, so none is shown as a regex.
 */
const PATTERNS: ReadonlyArray<readonly [test: (pattern: string) => boolean, form: string]> = [
  [(p) => p === '^https?://', 'an http:// or https:// URL'],
  [(p) => p === '^rediss?://', 'a redis:// or rediss:// URL, such as redis://127.0.0.1:6379'],
  [(p) => p === '^postgres(ql)?://', 'a postgres:// or postgresql:// URL, such as postgres://switchyard@127.0.0.1:5432/switchyard'],
  [(p) => p === '^/', 'a path starting with "/"'],
  [(p) => p.startsWith('^sha256:'), 'sha256: followed by 64 lowercase hex digits (switchyard key new prints one)'],
  [(p) => p.includes('(b|kb|mb|gb)'), 'a size such as 512kb or 10mb'],
  [(p) => p.startsWith('^\\d{4}-\\d{2}-\\d{2}T'), 'a date and time with a zone, such as 2027-01-01T00:00:00Z'],
  [(p) => p === '^[A-Za-z0-9][A-Za-z0-9_.-]*$' || p === '^[A-Za-z0-9][A-Za-z0-9._-]*$', 'a name of letters, digits, "_", "." and "-", starting with a letter or digit'],
  [(p) => p === '^[a-z0-9-]+$', 'lowercase letters, digits and "-", such as us-east-1'],
  [(p) => p === '^[A-Za-z0-9.]+$', 'letters, digits and ".", such as v1beta'],
  [(p) => p === '^https://', 'an https:// URL'],
  [(p) => p === '^[A-Za-z0-9_.-]+$', 'a name of letters, digits, "_", "." and "-"'],
  [(p) => p === '^[A-Z][A-Z0-9_]*$', 'capitals, digits and "_" (UPPER_SNAKE_CASE), such as EMAIL or PROJECT_NAME'],
  [(p) => p === '^[imsu]*$', 'regular expression flags among i, m, s and u'],
  [(p) => p === '^[A-Z]{2}$', 'a two-letter region code, such as US or GB'],
  [(p) => p === '\\{\\{text\\}\\}', 'a text containing {{text}} (where the checked text goes)'],
];

/** A pattern in words, or undefined when it is not one of ours. */
export function describePattern(pattern: string): string | undefined {
  return PATTERNS.find(([test]) => test(pattern))?.[1];
}

/** instancePath "/models/fast/targets/1" → ['models', 'fast', 'targets', 1], using the data to tell indices from keys. */
export function toSegments(instancePath: string, data: unknown): PathSegment[] {
  if (!instancePath) return [];
  const out: PathSegment[] = [];
  let node: unknown = data;
  for (const raw of instancePath.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      out.push(Number(part));
      node = node[Number(part)];
    } else {
      out.push(part);
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    }
  }
  return out;
}

function article(type: string): string {
  return ({ integer: 'an integer', object: 'a mapping', array: 'a list', string: 'a string', number: 'a number', boolean: 'true or false', null: 'null' } as Record<string, string>)[type] ?? type;
}

function typeName(v: unknown): string {
  if (v === null) return 'null, an empty value';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** The known name within edit distance 2 of `word`, if there is exactly one best. */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(word.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}

function dedupe(findings: SchemaFinding[]): SchemaFinding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const id = `${f.path.join('/')}|${f.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
