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
