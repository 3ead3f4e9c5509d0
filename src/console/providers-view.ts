/**
 * The console's Providers view: each provider's state and the identity it calls its upstream
 * with (source, expiry, refreshes, last failure). Each process holds its own credentials (every
 * cluster worker fetches and refreshes its own token), so with `server.workers` the view is
 * every worker's, merged (`mergeProviderViews`): the soonest expiry any worker holds, refreshes
 * and failures summed, each worker's own line kept beside it. Never a credential: IdentityStatus
 * holds none, and the last failure passes the generation's redactor.
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

/** A provider across the processes that answered: the merged view, and each worker's own. */
export interface ClusterProviderView extends ProviderView {
  /** One entry per process (id null for a lone process). */
  workers: Array<{ id: number | null; state: ProviderView['state']; identity: IdentityView | null }>;
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

/**
 * Every process's view of each provider as one: unavailable when any worker has it unavailable
 * (that worker cannot serve it), the identity merged (`mergeIdentities`). Providers keep the
 * order the first process lists them in.
 */
export function mergeProviderViews(processes: Array<{ id: number | null; providers: ProviderView[] }>): ClusterProviderView[] {
  const byName = new Map<string, Array<{ id: number | null; view: ProviderView }>>();
  for (const p of processes) for (const view of p.providers) byName.set(view.name, [...(byName.get(view.name) ?? []), { id: p.id, view }]);
  return [...byName.entries()].map(([name, seen]) => {
    const down = seen.find(({ view }) => view.state === 'unavailable');
    return {
      name,
      plugin: seen[0].view.plugin,
      state: down ? 'unavailable' : 'ready',
      unavailable: down?.view.unavailable ?? null,
      identity: mergeIdentities(seen.map(({ id, view }) => ({ id, identity: view.identity }))),
      workers: seen.map(({ id, view }) => ({ id, state: view.state, identity: view.identity })),
    };
  });
}

/**
 * Several workers' identities of one provider: the sources (one when they agree), the soonest
 * expiry (the first moment some worker's credential runs out), the latest fetch, refreshes and
 * failures summed, and a last failure naming its worker. Null when none reports one.
 */
export function mergeIdentities(seen: Array<{ id: number | null; identity: IdentityView | null }>): IdentityView | null {
  const held = seen.filter((s): s is { id: number | null; identity: IdentityView } => s.identity !== null);
  if (held.length === 0) return null;
  if (held.length === 1) return held[0].identity;
  const sources = [...new Set(held.map((s) => s.identity.source))].sort();
  const expiring = held.map((s) => s.identity).filter((i) => i.expiresAt !== undefined);
  const soonest = expiring.length ? expiring.reduce((a, b) => (Date.parse(b.expiresAt!) < Date.parse(a.expiresAt!) ? b : a)) : undefined;
  const fetched = held.map((s) => s.identity.obtainedAt).filter((t): t is string => t !== undefined);
  const failing = held.filter((s) => s.identity.lastError !== undefined);
  return {
    source: sources.join(', '),
    ...(soonest && { expiresAt: soonest.expiresAt, expiresInS: soonest.expiresInS }),
    ...(fetched.length && { obtainedAt: fetched.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)) }),
    ...(failing.length && { lastError: failing.map((s) => (s.id === null ? s.identity.lastError : `worker ${s.id}: ${s.identity.lastError}`)).join('; ') }),
    refreshes: held.reduce((sum, s) => sum + s.identity.refreshes, 0),
    failures: held.reduce((sum, s) => sum + s.identity.failures, 0),
  };
}
