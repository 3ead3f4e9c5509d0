import { describe, expect, it } from 'vitest';
import type { KeyConfig } from '../config/types.ts';
import { buildKeyIndex, freshKey, keyFinder, plainKeySecrets, sha256Hex } from './keys.ts';
import { makeRedactor } from './redact.ts';

const ROTATING: KeyConfig = {
  name: 'search',
  team: 'core',
  key: ['sk-new-0123456789', 'sk-old-0123456789'],
  keyHash: `sha256:${sha256Hex('sk-hashed-0123456789')}`,
  previous: [
    { key: 'sk-prev-0123456789', until: '2030-01-01T00:00:00Z' },
    { keyHash: `sha256:${sha256Hex('sk-prev-hashed-0123456789')}`, until: '2031-06-01T12:00:00+02:00' },
  ],
  models: ['gpt-*'],
};

describe('the key index', () => {
  const find = keyFinder(buildKeyIndex([ROTATING, { name: 'other', key: 'sk-other-0123456789', models: ['*'] }]));

  it('maps every secret of an entry, in every form, to the one key name', () => {
    for (const secret of ['sk-new-0123456789', 'sk-old-0123456789', 'sk-hashed-0123456789', 'sk-prev-0123456789', 'sk-prev-hashed-0123456789']) {
      const key = find(secret);
      expect(key?.name, secret).toBe('search');
      expect(key?.team).toBe('core');
      expect(key?.allows('gpt-4o')).toBe(true);
      expect(key?.allows('claude')).toBe(false);
    }
    expect(find('sk-other-0123456789')?.name).toBe('other');
    expect(find('sk-unknown-0123456789')).toBeUndefined();
  });

  it('marks only previous secrets with the instant they retire', () => {
    expect(find('sk-new-0123456789')?.retiresAt).toBeUndefined();
    expect(find('sk-hashed-0123456789')?.retiresAt).toBeUndefined();
    expect(find('sk-prev-0123456789')?.retiresAt).toBe(Date.parse('2030-01-01T00:00:00Z'));
    expect(find('sk-prev-hashed-0123456789')?.retiresAt).toBe(Date.parse('2031-06-01T10:00:00Z'));
  });

  it('hands every secret written in the clear, current and previous, to the redactor', () => {
    const secrets = plainKeySecrets([ROTATING]);
    expect(secrets).toEqual(['sk-new-0123456789', 'sk-old-0123456789', 'sk-prev-0123456789']);
    const redact = makeRedactor(secrets);
    expect(redact('upstream said: bad key sk-old-0123456789 and sk-prev-0123456789')).toBe('upstream said: bad key [REDACTED] and [REDACTED]');
  });
});

describe('freshKey', () => {
  it('is 256 random bits behind sk-sy-, with its sha256 as keyHash', () => {
    const a = freshKey();
    expect(a.key).toMatch(/^sk-sy-[A-Za-z0-9_-]{43}$/);
    expect(a.keyHash).toBe(`sha256:${sha256Hex(a.key)}`);
    expect(freshKey().key).not.toBe(a.key);
  });
});
