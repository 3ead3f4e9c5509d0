/**
 * Provider instances of a config generation. An instance whose plugin and options did not
 * change is carried over from the previous generation (its connection pool stays warm) and
 * shared; it is closed when the last generation using it has drained.
 */
import type { Logger } from 'pino';
import type { ProviderConfig } from '../config/types.ts';
import type { ConfigIssues } from '../config/source.ts';
import { isProviderUnavailable, type ProviderInstance, type ProviderPlugin } from '../plugin-api.ts';

/** Connections per provider when gateway.yaml says nothing: 1,000 slow streams at once must not queue. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

export interface ProviderHandle {
  name: string;
  plugin: ProviderPlugin;
  /** Absent when the provider is unavailable. */
  instance?: ProviderInstance;
  unavailable?: string;
  /** Plugin options as text: equal fingerprints and the same plugin object → same instance. */
  fingerprint: string;
  /** Live generations using this handle. */
  users: number;
}

/** The plugin's own options: the provider entry minus the core's keys. */
export function pluginOptions(p: ProviderConfig): Record<string, unknown> {
  const { plugin: _plugin, dropUnsupportedParams: _drop, maxConnections: _connections, ...options } = p;
  return options;
}

export async function createProviders(
  entries: Array<[string, ProviderConfig]>,
  plugins: ProviderPlugin[],
  unavailable: ReadonlyMap<string, string>,
  previous: ReadonlyMap<string, ProviderHandle> | undefined,
  ctx: { source: ConfigIssues; log: Logger; configDir: string; redact: (t: string) => string },
): Promise<Map<string, ProviderHandle>> {
  const handles = new Map<string, ProviderHandle>();
  await Promise.all(
    entries.map(async ([name, p], i) => {
      const plugin = plugins[i];
      const options = pluginOptions(p);
      const reason = unavailable.get(name);
      const fingerprint = JSON.stringify([options, reason ?? null, p.maxConnections ?? null]);
      const old = previous?.get(name);
      // A provider its plugin found unavailable is asked again: the new generation reports it anew.
      if (old && old.plugin === plugin && old.fingerprint === fingerprint && (old.instance || reason)) {
        old.users++;
        handles.set(name, old);
        return;
      }
      if (reason) {
        handles.set(name, { name, plugin, unavailable: reason, fingerprint, users: 1 });
        return;
      }
      try {
        const created = await plugin.create(options, { name, log: ctx.log.child({ provider: name }), configDir: ctx.configDir, maxConnections: p.maxConnections ?? DEFAULT_MAX_CONNECTIONS });
        if (isProviderUnavailable(created)) {
          const why = ctx.redact(created.unavailable);
          ctx.source.issue('warning', ['providers', name], `provider "${name}" is unavailable: ${why}`);
          handles.set(name, { name, plugin, unavailable: why, fingerprint, users: 1 });
          return;
        }
        handles.set(name, { name, plugin, instance: created, fingerprint, users: 1 });
      } catch (err) {
        ctx.source.error(['providers', name], `provider plugin "${p.plugin}" failed to start: ${ctx.redact(String((err as Error)?.message ?? err))}`);
      }
    }),
  );
  return handles;
}

/** This generation stops using its handles; instances nobody uses any more are closed. */
export async function releaseProviders(handles: Iterable<ProviderHandle>): Promise<void> {
  const closing: Array<Promise<void> | undefined> = [];
  for (const h of handles) {
    h.users--;
    if (h.users === 0) closing.push(h.instance?.close?.());
  }
  await Promise.allSettled(closing);
}
