import { createHash } from 'node:crypto';
import { compileGlob } from '../config/glob.ts';
import type { KeyConfig } from '../config/types.ts';
import type { KeyIdentity } from '../plugin-api.ts';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Keys are indexed by the sha256 of the secret. Looking up the digest of the presented token
 * compares fixed-length hashes, so timing reveals nothing about the stored keys, and `keyHash`
 * entries (no secret in the file) work the same way as plain ones.
 */
export function buildKeyIndex(keys: readonly KeyConfig[]): Map<string, KeyIdentity> {
  const index = new Map<string, KeyIdentity>();
  for (const k of keys) {
    const digest = k.keyHash ? k.keyHash.slice('sha256:'.length) : sha256Hex(k.key!);
    const globs = k.models.map(compileGlob);
    const everything = k.models.includes('*');
    const identity: KeyIdentity = {
      name: k.name,
      team: k.team,
      expiresAt: k.expiresAt === undefined ? undefined : Date.parse(k.expiresAt),
      allows: everything ? () => true : (model) => globs.some((g) => g.test(model)),
    };
    index.set(digest, Object.freeze(identity));
  }
  return index;
}

/** Tokens remembered at most; past it the memory starts again (only valid keys are remembered). */
const REMEMBERED_TOKENS = 10_000;

/**
 * Looks up a presented token. A token seen before maps to its key without hashing it again (a
 * sha256 per request is measurable on the hot path); only known keys are remembered, so unknown
 * tokens cannot grow the memory, and a reload builds a new one.
 */
export function keyFinder(index: ReadonlyMap<string, KeyIdentity>): (token: string) => KeyIdentity | undefined {
  const known = new Map<string, KeyIdentity>();
  return function findKey(token) {
    const cached = known.get(token);
    if (cached) return cached;
    const key = index.get(sha256Hex(token));
    if (key) {
      if (known.size >= REMEMBERED_TOKENS) known.clear();
      known.set(token, key);
    }
    return key;
  };
}
