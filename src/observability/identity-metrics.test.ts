import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { IdentityStatus, ProviderInstance } from '../plugin-api.ts';
import { registerIdentityMetrics, sourceLabel } from './identity-metrics.ts';

const instance = (status: () => IdentityStatus) => ({ identity: status }) as unknown as ProviderInstance;

describe('credential metrics', () => {
  it('the counter adds what each instance gained since the last scrape, and never goes back when a reload replaces it', async () => {
    const registry = new Registry();
    let first: IdentityStatus = { source: 'azure:client-secret', refreshes: 2, failures: 1, expiresAt: 61_000 };
    let providers = new Map([['az', { instance: instance(() => first) }]]);
    registerIdentityMetrics(registry, { providers: () => providers, now: () => 1000 });
    const read = async () => (await registry.getMetricsAsJSON()).flatMap((m) => m.values.map((v) => ({ name: m.name, labels: v.labels, value: v.value })));
    const value = async (name: string, outcome?: string) => (await read()).find((s) => s.name === name && (!outcome || s.labels.outcome === outcome))?.value;

    expect(await value('switchyard_credential_refreshes_total', 'ok')).toBe(2);
    expect(await value('switchyard_credential_refreshes_total', 'failed')).toBe(1);
    expect(await value('switchyard_credential_expiry_seconds')).toBe(60);
    first = { ...first, refreshes: 3 };
    expect(await value('switchyard_credential_refreshes_total', 'ok')).toBe(3);
    expect(await value('switchyard_credential_refreshes_total', 'ok')).toBe(3);
    // A reload: a new instance counting from its own start.
    providers = new Map([['az', { instance: instance(() => ({ source: 'azure:client-secret', refreshes: 1, failures: 0 })) }]]);
    expect(await value('switchyard_credential_refreshes_total', 'ok')).toBe(4);
    // No expiry held: no gauge sample.
    expect(await value('switchyard_credential_expiry_seconds')).toBeUndefined();
  });

  it('a source label is a short plugin name, else _other', () => {
    expect(sourceLabel('aws:web-identity')).toBe('aws:web-identity');
    expect(sourceLabel('Some Free Text with spaces')).toBe('_other');
  });
});
