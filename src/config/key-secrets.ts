/**
 * Every secret one `keys:` entry accepts, with where it is written: its current secrets (`key`
 * and `keyHash`, each one or a list) and its `previous` ones, which work until their `until`.
 * One name for them all is what keeps limits, budgets and usage on one key across a rotation.
 * Tolerates odd shapes (the cross-checks run on configs that failed the schema).
 */
import { createHash } from 'node:crypto';
import type { PathSegment } from './issues.ts';

export interface KeySecret {
  /** Where it is written, for config errors (`keys[2].previous[0].keyHash`). */
  path: PathSegment[];
  /** sha256 of the secret, hex: what tokens are looked up by. */
  digest: string;
  /** The secret itself when written as `key` (to be redacted); never set for a `keyHash`. */
  plain?: string;
  /** A previous secret's `until` as written (ISO 8601). */
  until?: string;
}

const HASH_PREFIX = 'sha256:';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The secrets of one key entry, current ones first; `at` is the entry's path. */
export function secretsOf(entry: unknown, at: PathSegment[]): KeySecret[] {
  if (!isObject(entry)) return [];
  const out = currentSecrets(entry, at);
  const previous = Array.isArray(entry.previous) ? entry.previous : [];
  previous.forEach((p, i) => {
    if (!isObject(p)) return;
    const until = typeof p.until === 'string' ? p.until : undefined;
    for (const s of currentSecrets(p, [...at, 'previous', i])) out.push({ ...s, until });
  });
  return out;
}

function currentSecrets(entry: Record<string, unknown>, at: PathSegment[]): KeySecret[] {
  const out: KeySecret[] = [];
  for (const [value, where] of forms(entry.key, [...at, 'key'])) {
    if (typeof value === 'string') out.push({ path: where, digest: sha256Hex(value), plain: value });
  }
  for (const [value, where] of forms(entry.keyHash, [...at, 'keyHash'])) {
    if (typeof value === 'string' && value.startsWith(HASH_PREFIX)) out.push({ path: where, digest: value.slice(HASH_PREFIX.length) });
  }
  return out;
}

/** `x` or `[x, y]` → each value with its path. */
function forms(value: unknown, at: PathSegment[]): Array<[unknown, PathSegment[]]> {
  return Array.isArray(value) ? value.map((v, i) => [v, [...at, i]]) : value === undefined ? [] : [[value, at]];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return Boolean(v) && typeof v === 'object' && !Array.isArray(v);
}
