import { describe, expect, it } from 'vitest';
import { detectorsFor } from '../../src/guardrails/detect/index.ts';
import { StreamScanner, type Released } from '../../src/guardrails/stream-scan.ts';
import { Vault } from '../../src/guardrails/vault.ts';

const detectors = detectorsFor(['pii', 'secrets']);

/** Runs pieces through a scanner: the released text in order, the matched strings, and the most ever held. */
function run(pieces: readonly string[]) {
  const scanner = new StreamScanner(detectors);
  let text = '';
  const matched: string[] = [];
  let maxHeld = 0;
  const take = (r: Released) => {
    for (const f of r.findings) matched.push(r.text.slice(f.start, f.end));
    text += r.text;
  };
  for (const piece of pieces) {
    take(scanner.push(piece));
    maxHeld = Math.max(maxHeld, scanner.held);
  }
  take(scanner.end());
  return { text, matched, maxHeld };
}

/** Every way of cutting `text` in two. */
const cuts = (text: string) => Array.from({ length: text.length - 1 }, (_, i) => [text.slice(0, i + 1), text.slice(i + 1)]);

describe('StreamScanner', () => {
  const key = `sk-proj-${'Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5'}`;
  const cases: [string, string][] = [
    [`the key is ${key} so keep it`, key],
    ['mail jane.doe@example.com now', 'jane.doe@example.com'],
    ['card 4111 1111 1111 1111 ok', '4111 1111 1111 1111'],
    ['iban DE89 3704 0044 0532 0130 00.', 'DE89 3704 0044 0532 0130 00'],
    ['call +44 20 7946 0958 today', '+44 20 7946 0958'],
  ];

  it.each(cases)('finds a match split across two pieces at every position: %s', (text, match) => {
    for (const pieces of cuts(text)) {
      const out = run(pieces);
      expect(out.text).toBe(text);
      expect(out.matched, JSON.stringify(pieces)).toEqual([match]);
    }
  });

  it('finds a match split across many one-character pieces', () => {
    const text = `x ${key} y jane@example.org z`;
    const out = run([...text]);
    expect(out.matched).toEqual([key, 'jane@example.org']);
    expect(out.text).toBe(text);
  });

  it('does not take a card inside a longer digit run that arrives later', () => {
    const out = run(['order 4111111111111111', '123 shipped']);
    expect(out.matched).toEqual([]);
  });

  it('holds only the last word of prose, never the stream', () => {
    const words = 'The quick brown fox jumps over the lazy dog while the gateway streams every token of the answer as soon as it arrives from the model'.split(' ');
    const pieces = words.map((w) => `${w} `);
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    const scanner = new StreamScanner(detectors);
    let released = 0;
    for (const piece of pieces) {
      released += scanner.push(piece).text.length;
      expect(scanner.held).toBeLessThanOrEqual(24);
    }
    expect(released).toBeGreaterThan(pieces.join('').length - 24);
  });

  it('holds an open private key block until its END, then releases it as one finding', () => {
    const scanner = new StreamScanner(detectors);
    const a = scanner.push('here -----BEGIN PRIVATE KEY-----\nMIIE');
    expect(a.text).toBe('here ');
    const b = scanner.push('vQIBADAN\n-----END PRIVATE KEY----- done');
    expect(b.findings).toHaveLength(1);
    expect(b.text.slice(b.findings[0].start, b.findings[0].end)).toBe('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----');
  });

  it('never holds more than its bound', () => {
    const scanner = new StreamScanner(detectors, 1000);
    scanner.push('-----BEGIN PRIVATE KEY-----\n');
    for (let i = 0; i < 100; i++) scanner.push('A'.repeat(50));
    expect(scanner.held).toBeLessThanOrEqual(1000);
  });
});

describe('Vault', () => {
  it('redacts with typed, numbered placeholders, the same value the same placeholder, and restores', () => {
    const vault = new Vault();
    const text = 'a@example.com wrote to b@example.com and a@example.com again';
    const findings = detectorsFor(['email'])[0].find(text);
    const redacted = vault.redact(text, findings);
    expect(redacted).toBe('[EMAIL_1] wrote to [EMAIL_2] and [EMAIL_1] again');
    expect(vault.restore(`reply to [EMAIL_2], not [EMAIL_3] or [EMAIL_1]`)).toBe('reply to b@example.com, not [EMAIL_3] or a@example.com');
  });

  it('restores placeholders split across stream pieces, holding only a possible placeholder', () => {
    const vault = new Vault();
    vault.placeholder('EMAIL', 'a@example.com');
    vault.placeholder('CARD', '4111111111111111');
    const text = 'Dear [EMAIL_1], your card [CARD_1] [x] is [EMAIL_9].';
    for (const pieces of cuts(text)) {
      const restorer = vault.restorer();
      const out = pieces.map((p) => restorer.push(p)).join('') + restorer.end();
      expect(out).toBe('Dear a@example.com, your card 4111111111111111 [x] is [EMAIL_9].');
    }
  });

  it('escapes an original for where it goes', () => {
    const vault = new Vault();
    vault.placeholder('NAME', 'say "hi"');
    expect(vault.restore('{"a":"[NAME_1]"}', (s) => JSON.stringify(s).slice(1, -1))).toBe('{"a":"say \\"hi\\""}');
  });
});
