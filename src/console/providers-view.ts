/**
 * The console's Providers view: each provider's state and the identity it calls its upstream
 * with (source, expiry, refreshes, last failure), as the process that answers holds it (each
 * cluster worker keeps its own token). Never a credential: IdentityStatus holds none, and the
 * last failure passes the generation's redactor.
 */
import { identityOf, identityView, type IdentityView } from '../providers/identity-view.ts';
import type { Runtime } from '../runtime/build.ts';

export interface ProviderView {
  name: string;
  /** The plugin's id (`azure-openai`, or a plugin's own). */
  plugin: string;
  state: 'ready' | 'unavailable';
  unavailable: string | null;
  identity: IdentityView | null;
}

export function providerViews(runtime: Pick<Runtime, 'providers' | 'redact'>, nowMs = Date.now()): ProviderView[] {
  return [...runtime.providers.values()].map((h) => {
    const identity = identityOf(h.instance);
    return {
      name: h.name,
      plugin: h.plugin.id,
      state: h.instance ? 'ready' : 'unavailable',
      unavailable: h.unavailable ? runtime.redact(h.unavailable) : null,
      identity: identity ? identityView(identity, runtime.redact, nowMs) : null,
    };
  });
}
