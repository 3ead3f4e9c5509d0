import { describe, expect, it } from 'vitest';
import { builtInDetector, detectorsFor, scan, type BuiltInDetector } from '../../src/guardrails/detect/index.ts';
import { CORPUS } from './corpus.ts';

// Phone numbers in national formats need a region; the corpus is international only.
const detectors = Object.keys(CORPUS) as BuiltInDetector[];

describe.each(detectors)('detector %s on its corpus', (name) => {
  const detector = builtInDetector(name);
  const { positives, negatives } = CORPUS[name];

  it('has at least 20 true and 20 false cases', () => {
    expect(positives.length).toBeGreaterThanOrEqual(20);
    expect(negatives.length).toBeGreaterThanOrEqual(20);
  });

  it.each(positives.map(([text, match]) => [JSON.stringify(text).slice(0, 60), text, match]))('finds %s', (_, text, match) => {
    const found = scan(text, [detector]).map((f) => text.slice(f.start, f.end));
    expect(found).toEqual([match]);
  });

  it.each(negatives.map((text) => [JSON.stringify(text).slice(0, 60), text]))('leaves %s alone', (_, text) => {
    const found = scan(text, [detector]).map((f) => text.slice(f.start, f.end));
    expect(found).toEqual([]);
  });
});

describe('custom rules', () => {
  it('matches a word list whole, case-insensitively by default, longest phrase first', () => {
    const [rule] = detectorsFor([], [{ name: 'codenames', words: ['Project Falcon', 'Falcon', 'Osprey'] }]);
    const text = 'about project falcon and Falconry, or OSPREY.';
    expect(scan(text, [rule]).map((f) => [text.slice(f.start, f.end), f.label, f.detector])).toEqual([
      ['project falcon', 'CODENAMES', 'custom:codenames'],
      ['OSPREY', 'CODENAMES', 'custom:codenames'],
    ]);
  });

  it('matches a regex with its flags, and holds at most its declared length in a stream', () => {
    const [rule] = detectorsFor([], [{ name: 'ticket', label: 'TICKET', regex: 'tkt-\\d{6}', flags: 'i', maxLength: 10 }]);
    const text = 'see TKT-123456 and tkt-12';
    expect(scan(text, [rule]).map((f) => text.slice(f.start, f.end))).toEqual(['TKT-123456']);
    expect(rule.pendingFrom(text)).toBe(text.length - 10);
  });

  it('refuses an unknown detector name, naming the known ones', () => {
    expect(() => detectorsFor(['emails'])).toThrow(/unknown detector "emails" \(known: pii, secrets, email/);
  });
});
