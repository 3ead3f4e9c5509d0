/** `prepare` in defineHttpProvider: once per creation, its result is what the spec's parts receive, or why the provider cannot serve. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { isProviderUnavailable, type ProviderEnv, type ProviderInstance } from '../plugin-api.ts';
import type { ChatCompletion } from '../openai-types.ts';
import { openAiStyleFailure } from '../protocol/openai-errors.ts';
import { defineHttpProvider } from './http-provider.ts';
import { callFactory, startFakeUpstream, type FakeUpstream } from 'switchyard-gateway/kit/testing';

/** These providers' answers are never translated here (only their preparation is): any completion does. */
const NO_ANSWER: ChatCompletion = { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] };

interface AcmeOptions {
  baseUrl: string;
  apiKey?: string;
}

interface AcmeAuth {
  baseUrl: string;
  bearer: string;
}

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ status: 200, body: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] } }));
});
afterAll(() => upstream.close());

const env: ProviderEnv = { name: 'acme', log: pino({ level: 'silent' }), configDir: '.' };
const callOf = callFactory({ provider: 'acme', model: 'acme-1' });

/** A provider whose key comes from its options, else from a stand-in environment. */
function acme(environment: Record<string, string | undefined>) {
  const prepared: AcmeOptions[] = [];
  const plugin = defineHttpProvider<AcmeOptions, AcmeAuth>({
    id: 'acme',
    optionsSchema: {},
    prepare(options) {
      prepared.push(options);
      const key = options.apiKey ?? environment.ACME_API_KEY;
      return key ? { baseUrl: options.baseUrl, bearer: `Bearer ${key}` } : { unavailable: 'no API key: set apiKey, or ACME_API_KEY in the environment' };
    },
    endpoint: (auth) => ({ baseUrl: auth.baseUrl, headers: { authorization: auth.bearer } }),
    buildRequest: (call) => ({ path: '/chat/completions', body: { model: call.model } }),
    toCompletion: () => NO_ANSWER,
    createStreamTranslator: () => ({ push: () => undefined }),
    readError: openAiStyleFailure,
  });
  return { plugin, prepared };
}

describe('defineHttpProvider prepare', () => {
  it('runs once at creation; the spec’s parts get what it made (the key from the environment here)', async () => {
    const { plugin, prepared } = acme({ ACME_API_KEY: 'env-key' });
    const created = await plugin.create({ baseUrl: upstream.url }, env);
    expect(isProviderUnavailable(created)).toBe(false);
    const instance = created as ProviderInstance;
    try {
      await instance.send(callOf({}));
      await instance.send(callOf({}));
      expect(prepared).toEqual([{ baseUrl: upstream.url }]);
      expect(upstream.requests.map((r) => r.headers.authorization)).toEqual(['Bearer env-key', 'Bearer env-key']);
    } finally {
      await instance.close?.();
    }
  });

  it('answers why the provider cannot serve, and makes no instance (nothing is sent)', async () => {
    const before = upstream.requests.length;
    const { plugin } = acme({});
    const created = await plugin.create({ baseUrl: upstream.url }, env);
    expect(created).toEqual({ unavailable: 'no API key: set apiKey, or ACME_API_KEY in the environment' });
    expect(isProviderUnavailable(created)).toBe(true);
    expect(upstream.requests.length).toBe(before);
  });

  it('a prepare that throws fails the creation (a configuration error, not an unavailable provider)', async () => {
    const plugin = defineHttpProvider<AcmeOptions, AcmeAuth>({
      id: 'acme',
      optionsSchema: {},
      prepare: () => {
        throw new Error('baseUrl names no host');
      },
      endpoint: (auth) => ({ baseUrl: auth.baseUrl }),
      buildRequest: () => ({ path: '/' }),
      toCompletion: () => NO_ANSWER,
      createStreamTranslator: () => ({ push: () => undefined }),
      readError: openAiStyleFailure,
    });
    await expect(plugin.create({ baseUrl: 'x' }, env)).rejects.toThrow('baseUrl names no host');
  });
});
