/**
 * Provider credentials in Prometheus, read from each provider's `identity()` when scraped (no
 * per-request cost): `switchyard_credential_refreshes_total{provider,source,outcome}` and
 * `switchyard_credential_expiry_seconds{provider,source}`.
 *
 * A provider instance counts its own refreshes and failures from zero; a reload that changes its
 * options makes a new one. The counter adds what each instance gained since the last scrape, so
 * it never goes backwards across reloads (what an instance gained after its last scrape before
 * retiring is not counted).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IdentityStatus, ProviderInstance } from '../plugin-api.ts';
import { identityOf } from '../providers/identity-view.ts';

/** A generation's providers by name (the runtime's handles). */
export type ProviderHandles = ReadonlyMap<string, { readonly instance?: ProviderInstance }>;

export interface IdentitySource {
  /** The serving generation's providers (undefined until the gateway has started). */
  providers(): ProviderHandles | undefined;
  now(): number;
}

/** A source is a plugin's short name (`azure:client-secret`); anything else is counted as `_other`. */
const SOURCE = /^[a-z0-9][a-z0-9:_.-]{0,47}$/;
export const sourceLabel = (source: string): string => (SOURCE.test(source) ? source : '_other');

export function registerIdentityMetrics(registry: Registry, source: IdentitySource): void {
  const registers = [registry];
  const seen = new WeakMap<ProviderInstance, { refreshes: number; failures: number }>();
  const reports = (): Array<{ provider: string; status: IdentityStatus; instance: ProviderInstance }> => {
    const out = [];
    for (const [provider, handle] of source.providers() ?? []) {
      const status = identityOf(handle.instance);
      if (status && handle.instance) out.push({ provider, status, instance: handle.instance });
    }
    return out;
  };
  new Counter({
    name: 'switchyard_credential_refreshes_total',
    help: "Fetches of a provider's expiring credential (a cloud token), by provider, credential source and outcome (ok, failed).",
    labelNames: ['provider', 'source', 'outcome'],
    registers,
    collect() {
      for (const { provider, status, instance } of reports()) {
        const last = seen.get(instance) ?? { refreshes: 0, failures: 0 };
        const labels = { provider, source: sourceLabel(status.source) };
        if (status.refreshes > last.refreshes) this.inc({ ...labels, outcome: 'ok' }, status.refreshes - last.refreshes);
        if (status.failures > last.failures) this.inc({ ...labels, outcome: 'failed' }, status.failures - last.failures);
        seen.set(instance, { refreshes: status.refreshes, failures: status.failures });
      }
    },
  });
  new Gauge({
    name: 'switchyard_credential_expiry_seconds',
    help: 'Seconds until the credential a provider calls with expires (negative once expired); providers whose credential does not expire (API keys) have none.',
    labelNames: ['provider', 'source'],
    registers,
    // Cluster workers each hold their own token: the soonest to expire is what an operator needs.
    aggregator: 'min',
    collect() {
      this.reset();
      const now = source.now();
      for (const { provider, status } of reports()) {
        if (status.expiresAt !== undefined) this.set({ provider, source: sourceLabel(status.source) }, (status.expiresAt - now) / 1000);
      }
    },
  });
}
