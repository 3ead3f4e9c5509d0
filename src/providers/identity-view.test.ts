import { describe, expect, it } from 'vitest';
import { identityOf, identityView } from './identity-view.ts';

describe('identityView', () => {
  const redact = (t: string) => t.replaceAll('s3cret', '[REDACTED]');
  it('times as ISO strings with the seconds left, the last failure redacted', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const view = identityView({ source: 'azure:client-secret', expiresAt: now + 90_500, obtainedAt: now - 1000, lastError: 'bad s3cret', refreshes: 2, failures: 1 }, redact, now);
    expect(view).toEqual({
      source: 'azure:client-secret',
      expiresAt: '2026-01-01T00:01:30.500Z',
      expiresInS: 90,
      obtainedAt: '2025-12-31T23:59:59.000Z',
      lastError: 'bad [REDACTED]',
      refreshes: 2,
      failures: 1,
    });
  });
  it('an API key: the source and counts only', () => {
    expect(identityView({ source: 'api-key', refreshes: 0, failures: 0 }, redact)).toEqual({ source: 'api-key', refreshes: 0, failures: 0 });
  });
  it('a provider whose identity() throws reports none rather than failing the surface', () => {
    const instance = {
      identity: () => {
        throw new Error('boom');
      },
    };
    expect(identityOf(instance as never)).toBeUndefined();
    expect(identityOf(undefined)).toBeUndefined();
  });
});
