/** The built-in detectors by name, the presets that group them, and one scan over several detectors. */
import { card } from './card.ts';
import { customDetector, type CustomRule } from './custom.ts';
import { email } from './email.ts';
import { highEntropy } from './entropy.ts';
import { iban } from './iban.ts';
import { ipv4, ipv6 } from './ip.ts';
import { nationalId } from './national-id.ts';
import { phoneDetector, type PhoneOptions } from './phone.ts';
import { apiKey, jwt, privateKey } from './secrets.ts';
import type { Detector, Finding } from './types.ts';

export type { CustomRule, Detector, Finding, PhoneOptions };
export { customDetector };

const ip: Detector = {
  id: 'ip',
  label: 'IP',
  find: (text) => [...ipv4.find(text), ...ipv6.find(text)].sort((a, b) => a.start - b.start),
  pendingFrom: (text) => Math.min(ipv4.pendingFrom(text), ipv6.pendingFrom(text)),
};

/** Detector names as gateway.yaml writes them. */
export const BUILT_IN_DETECTORS = ['email', 'phone', 'card', 'iban', 'national_id', 'ip', 'api_key', 'private_key', 'jwt', 'high_entropy'] as const;
export type BuiltInDetector = (typeof BUILT_IN_DETECTORS)[number];

/** Names that stand for several detectors. `high_entropy` is in none: it is opt-in. */
export const PRESETS: Readonly<Record<string, readonly BuiltInDetector[]>> = {
  pii: ['email', 'phone', 'card', 'iban', 'national_id', 'ip'],
  secrets: ['api_key', 'private_key', 'jwt'],
};

export function builtInDetector(name: BuiltInDetector, options: { phone?: PhoneOptions } = {}): Detector {
  switch (name) {
    case 'email':
      return email;
    case 'phone':
      return phoneDetector(options.phone);
    case 'card':
      return card;
    case 'iban':
      return iban;
    case 'national_id':
      return nationalId;
    case 'ip':
      return ip;
    case 'api_key':
      return apiKey;
    case 'private_key':
      return privateKey;
    case 'jwt':
      return jwt;
    case 'high_entropy':
      return highEntropy;
  }
}

/**
 * Every finding of the detectors in `text`, in order, without overlaps: where two overlap the
 * earlier start wins, then the longer (a JWT is not also an API key, an email not also an IP).
 */
export function scan(text: string, detectors: readonly Detector[]): Finding[] {
  const all: Finding[] = [];
  for (const detector of detectors) for (const found of detector.find(text)) all.push(found);
  if (all.length < 2) return all;
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Finding[] = [];
  for (const found of all) {
    const last = out[out.length - 1];
    if (last && found.start < last.end) continue;
    out.push(found);
  }
  return out;
}

/** Where the end of `text` stops being final for any of the detectors (see `Detector.pendingFrom`). */
export function pendingFrom(text: string, detectors: readonly Detector[]): number {
  let from = text.length;
  for (const detector of detectors) from = Math.min(from, detector.pendingFrom(text));
  return from;
}

/** A rule's detectors from its names (presets, built-ins) and custom rules. */
export function detectorsFor(names: readonly string[], custom: readonly CustomRule[] = [], options: { phone?: PhoneOptions } = {}): Detector[] {
  const seen = new Set<string>();
  const out: Detector[] = [];
  for (const name of names.flatMap((n) => PRESETS[n] ?? [n])) {
    if (seen.has(name)) continue;
    if (!(BUILT_IN_DETECTORS as readonly string[]).includes(name)) throw new Error(`unknown detector "${name}" (known: ${[...Object.keys(PRESETS), ...BUILT_IN_DETECTORS].join(', ')})`);
    seen.add(name);
    out.push(builtInDetector(name as BuiltInDetector, options));
  }
  for (const rule of custom) out.push(customDetector(rule));
  return out;
}
