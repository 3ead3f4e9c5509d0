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
  const branchOf = new Set<ErrorObject>();
  const findings: SchemaFinding[] = [];
  for (const e of errors) {
    if (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    const branches = errors.filter((b) => b !== e && b.schemaPath.startsWith(`${e.schemaPath}/`));
    branches.forEach((b) => branchOf.add(b));
    findings.push(...describeAlternatives(e, branches, data, prefix));
  }
  for (const e of errors) {
    if (branchOf.has(e) || e.keyword === 'oneOf' || e.keyword === 'anyOf') continue;
    findings.push(describeOne(e, data, prefix));
  }
  return dedupe(findings);
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
  for (const list of byBranch.values()) {
    if (!list.some((b) => b.keyword === 'type' && b.instancePath === e.instancePath)) {
      return list.map((b) => describeOne(b, data, prefix));
    }
  }
  const types = alternatives.map((a) => (typeof a.type === 'string' ? article(a.type) : 'another form'));
  return [{ path, key: false, message: `must be ${types.join(' or ')} (got ${typeName(e.data)})` }];
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
      return { path: [...path, field], key: true, message: `unknown field "${field}"${hint ? ` (did you mean "${hint}"?)` : list}` };
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
    case 'type':
      return { path, key: false, message: `must be ${String(p.type).split(',').map(article).join(' or ')} (got ${typeName(e.data)})` };
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      const hint = typeof e.data === 'string' ? closest(e.data, (p.allowedValues as unknown[]).map(String)) : undefined;
      return { path, key: false, message: `must be one of ${allowed} (got ${JSON.stringify(e.data)})${hint ? `; did you mean "${hint}"?` : ''}` };
    }
    case 'pattern':
      return { path, key: false, message: `${JSON.stringify(e.data)} does not have the expected form (${describePattern(String(p.pattern))})` };
    case 'propertyNames':
      return { path: [...path, String(p.propertyName)], key: true, message: `name "${String(p.propertyName)}" may only use letters, digits, "_", "." and "-"` };
    case 'minItems':
      return { path, key: false, message: `needs at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` };
    case 'minProperties':
      return { path, key: false, message: `needs at least ${String(p.limit)} entr${p.limit === 1 ? 'y' : 'ies'}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, key: false, message: `${String(e.message)} (got ${JSON.stringify(e.data)})` };
    default:
      return { path, key: false, message: e.message ?? e.keyword };
  }
}

function describePattern(pattern: string): string {
  if (pattern === '^https?://') return 'an http:// or https:// URL';
  if (pattern.startsWith('^sha256:')) return 'sha256: followed by 64 lowercase hex digits';
  if (pattern.includes('(b|kb|mb|gb)')) return 'a size such as 512kb or 10mb';
  return `must match ${pattern}`;
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
  if (v === null) return 'null';
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
