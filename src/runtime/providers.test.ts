/** Provider handles of a generation: a plugin that answers `{ unavailable }` leaves its provider unavailable, reported, and asked again next time. */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ConfigSource } from '../config/source.ts';
import type { ProviderConfig } from '../config/types.ts';
import { PLUGIN_API_VERSION, type ProviderInstance, type ProviderPlugin } from '../plugin-api.ts';
import { createProviders, releaseProviders } from './providers.ts';

const YAML = 'providers:\n  acme:\n    plugin: acme\n    region: eu\n  ok:\n    plugin: acme\n    region: us\n';
const entries: Array<[string, ProviderConfig]> = [
  ['acme', { plugin: 'acme', region: 'eu' } as ProviderConfig],
  ['ok', { plugin: 'acme', region: 'us' } as ProviderConfig],
];

const instance: ProviderInstance = {
  send: () => Promise.reject(new Error('not called')),
  toCompletion: () => {
    throw new Error('not called');
  },
  createStreamTranslator: () => ({ push: () => undefined }),
};

/** Serves region us; for eu it says why not, naming a secret the core must redact. */
function acmePlugin(created: string[]): ProviderPlugin {
  return {
    apiVersion: PLUGIN_API_VERSION,
    kind: 'provider',
    id: 'acme',
    optionsSchema: {},
    create(options, env) {
      created.push(env.name);
      return options.region === 'us' ? instance : { unavailable: 'no credentials for eu (not s3cret)' };
    },
  };
}

function context() {
  const source = new ConfigSource('/etc/gateway.yaml', YAML);
  return { source, log: pino({ level: 'silent' }), configDir: '/etc', redact: (t: string) => t.replaceAll('s3cret', '[REDACTED]') };
}

describe('createProviders with a plugin that answers unavailable', () => {
  it('the handle carries the reason (redacted), a warning points at the provider, and the others serve', async () => {
    const created: string[] = [];
    const plugin = acmePlugin(created);
    const ctx = context();
    const handles = await createProviders(entries, [plugin, plugin], new Map(), undefined, ctx);
    expect(handles.get('acme')?.unavailable).toBe('no credentials for eu (not [REDACTED])');
    expect(handles.get('acme')?.instance).toBeUndefined();
    expect(handles.get('ok')?.instance).toBe(instance);
    expect(ctx.source.issues).toEqual([
      expect.objectContaining({ severity: 'warning', line: 3, path: 'providers.acme', message: 'provider "acme" is unavailable: no credentials for eu (not [REDACTED])' }),
    ]);
    expect(created.sort()).toEqual(['acme', 'ok']);
    await releaseProviders(handles.values());
  });

  it('the next generation asks again (and warns again); a provider that serves is carried over', async () => {
    const created: string[] = [];
    const plugin = acmePlugin(created);
    const first = await createProviders(entries, [plugin, plugin], new Map(), undefined, context());
    const ctx = context();
    const second = await createProviders(entries, [plugin, plugin], new Map(), first, ctx);
    expect(created.sort()).toEqual(['acme', 'acme', 'ok']);
    expect(second.get('ok')).toBe(first.get('ok'));
    expect(second.get('acme')).not.toBe(first.get('acme'));
    expect(ctx.source.issues.map((i) => i.path)).toEqual(['providers.acme']);
    await releaseProviders(first.values());
    await releaseProviders(second.values());
  });
});
