import { describe, expect, it } from 'vitest';
import type { IdentityStatus, ProviderInstance } from '../plugin-api.ts';
import { checkIdentities } from './identity-check.ts';
import type { ProviderHandle } from './providers.ts';

const handle = (name: string, instance?: Partial<ProviderInstance>, unavailable?: string) => ({ name, instance, unavailable }) as unknown as ProviderHandle;
const redact = (t: string) => t.replaceAll('tok-123456', '[REDACTED]');

describe('checkIdentities', () => {
  it('a fetched credential with its time left, an API key, a plugin that reports none, an unavailable provider, a failure in the provider words', async () => {
    const now = () => 1_000_000;
    let status: IdentityStatus = { source: 'azure:workload-identity', refreshes: 0, failures: 0 };
    const checks = await checkIdentities(
      [
        handle('cloud', { checkIdentity: async () => ({ source: 'azure:workload-identity', expiresAt: 1_000_000 + 59 * 60_000 + 5000, refreshes: 1, failures: 0 }) }),
        handle('keyed', { identity: () => ({ source: 'api-key', refreshes: 0, failures: 0 }) }),
        handle('mock', {}),
        handle('unset', undefined, 'environment variable KEY is not set'),
        handle('broken', {
          checkIdentity: async () => {
            status = { ...status, failures: 1, lastError: 'AADSTS700016: app not found (tok-123456)' };
            throw new Error('wrapped');
          },
          identity: () => status,
        }),
      ],
      redact,
      now,
    );
    expect(checks).toEqual([
      { provider: 'cloud', ok: true, said: 'azure:workload-identity, valid for 59 min' },
      { provider: 'keyed', ok: true, said: 'api-key' },
      { provider: 'mock', ok: true, said: 'no identity to check (the plugin reports none)' },
      { provider: 'unset', ok: false, said: 'unavailable: environment variable KEY is not set' },
      { provider: 'broken', ok: false, said: 'no credentials: azure:workload-identity: AADSTS700016: app not found ([REDACTED])' },
    ]);
  });
});
