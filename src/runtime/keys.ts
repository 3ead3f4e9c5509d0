import { randomBytes } from 'node:crypto';
import { compileGlob } from '../config/glob.ts';
import { type KeySecret, secretsOf, sha256Hex } from '../config/key-secrets.ts';
import type { KeyConfig } from '../config/types.ts';
import type { KeyIdentity } from '../plugin-api.ts';

export { sha256Hex };

/**
 * Keys are indexed by the sha256 of the secret. Looking up the digest of the presented token
 * compares fixed-length hashes, so timing reveals nothing about the stored keys, and `keyHash`
 * entries (no secret in the file) work the same way as plain ones. Every secret of an entry
 * (a list while rotating, and `previous` ones) maps to an identity with the entry's one name,
 * so limits, budgets and usage count them together; a previous secret's identity carries
 * `retiresAt`, for the auth stage to refuse it as rotated once that has passed.
 */
export function buildKeyIndex(keys: readonly KeyConfig[], secrets?: readonly (readonly KeySecret[])[]): Map<string, KeyIdentity> {
  const index = new Map<string, KeyIdentity>();
  // Thousands of keys share a handful of globs: one RegExp each, not one per key.
  const compiled = new Map<string, RegExp>();
  const glob = (g: string): RegExp => compiled.get(g) ?? compiled.set(g, compileGlob(g)).get(g)!;
  keys.forEach((k, i) => {
    const everything = k.models.includes('*');
    const globs = everything ? [] : k.models.map(glob);
    const identity: KeyIdentity = {
      name: k.name,
      team: k.team,
      expiresAt: k.expiresAt === undefined ? undefined : Date.parse(k.expiresAt),
      allows: everything ? () => true : (model) => globs.some((g) => g.test(model)),
    };
    if (k.strict) identity.strict = true;
    const current = Object.freeze(identity);
    // Digests computed by the config's cross-checks are reused: 10,000 keys are 10,000 sha256.
    for (const secret of secrets?.[i] ?? secretsOf(k, ['keys', i])) {
      index.set(secret.digest, secret.until === undefined ? current : Object.freeze({ ...identity, retiresAt: Date.parse(secret.until) }));
    }
  });
  return index;
}

/** Every secret written in the clear under `keys:`, current and previous, for the redactor. */
export function plainKeySecrets(keys: readonly KeyConfig[], secrets?: readonly (readonly KeySecret[])[]): string[] {
  return keys.flatMap((k, i) => (secrets?.[i] ?? secretsOf(k, ['keys', i])).flatMap((s) => (s.plain === undefined ? [] : [s.plain])));
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

/** A new client key: 32 random bytes (256 bits) as base64url after an `sk-` prefix that secret scanners know, with its `keyHash`. */
export function freshKey(): { key: string; keyHash: string } {
  const key = `sk-sy-${randomBytes(32).toString('base64url')}`;
  return { key, keyHash: `sha256:${sha256Hex(key)}` };
}
