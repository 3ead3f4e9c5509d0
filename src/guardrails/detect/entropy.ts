/**
 * High-entropy strings: a run of 24+ token characters mixing upper case, lower case and digits
 * whose Shannon entropy is near that of random text of its length. Hex (hashes, git commits)
 * and UUIDs are left alone: they are everywhere in code and rarely secret.
 */
import { regexDetector } from './types.ts';

export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

export const highEntropy = regexDetector({
  id: 'high_entropy',
  label: 'SECRET',
  pattern: /(?<![\w+/-])[A-Za-z0-9+/_-]{24,512}={0,2}(?![\w+/=-])/g,
  chars: /[\w+/=-]/,
  maxSpan: 512,
  accept(match) {
    if (/^[0-9a-f]+$/i.test(match) || /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(match)) return false;
    if (!/[a-z]/.test(match) || !/[A-Z]/.test(match) || !/\d/.test(match)) return false;
    // A path or an identifier reads as words: mostly letters, few digits, few case changes.
    if (/^[A-Za-z]+(?:[/_-][A-Za-z]+)+\d*$/.test(match)) return false;
    const segments = match.split(/(?=[A-Z])|(?<=\D)(?=\d)|(?<=\d)(?=\D)|[/_+=-]/).filter(Boolean);
    if (match.length / segments.length >= 3.5) return false;
    const expected = Math.log2(Math.min(match.length, 64));
    return shannonEntropy(match) >= expected * 0.82;
  },
});
