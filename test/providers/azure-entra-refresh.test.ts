/**
 * Entra tokens that expire within seconds (the emulator's lifetime shortened), under load: the
 * gateway refreshes behind the requests with zero failures and about one token request per
 * refresh window; when the authority fails, the old token serves until it expires, then the
 * provider answers 503 in the usual envelope, with no token or secret in any message or log.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { failureOf, fakeUpstream, loadFixture, replay, useTestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';
import { startEntraEmulator, TENANT, trustCertificate, type EntraEmulator } from '../helpers/entra-emulator.ts';

const SECRET = 'entra-refresh-secret-0123456789';
const LIFETIME_S = 4;
let entra: EntraEmulator;
const azure = fakeUpstream((req) => {
  const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  if (!entra.isValid(bearer)) return { status: 401, body: { error: { code: 'PermissionDenied', message: 'Principal does not have access to API/Operation.' } } };
  return replay(loadFixture(fixturesOf('azure'), 'chat-basic'));
});

beforeAll(async () => {
  entra = await startEntraEmulator({ tokenLifetimeS: LIFETIME_S });
  trustCertificate(entra.tlsCertificatePem);
  entra.register('app-load', { secret: SECRET });
  entra.register('app-outage', { secret: SECRET });
});
afterAll(() => entra?.close());

const provider = (clientId: string) => ({
  plugin: 'azure-openai',
  endpoint: azure.url,
  mode: 'v1',
  auth: { type: 'entra', tenantId: TENANT, clientId, clientSecret: SECRET, authorityHost: entra.authorityHost },
});
const t = useTestGateway(
  () => ({
    providers: { load: provider('app-load'), outage: provider('app-outage') },
    models: {
      load: { retry: { attempts: 1 }, targets: [{ provider: 'load', model: 'gpt-5-nano' }] },
      outage: { retry: { attempts: 1 }, targets: [{ provider: 'outage', model: 'gpt-5-nano' }] },
    },
  }),
  { upstreams: [azure] },
);

const ask = (model: string) => t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] });
// biome-ignore lint/suspicious/noExplicitAny: /readyz as JSON
const readyz = async (): Promise<any> => (await fetch(`${t.url}/readyz`)).json();
const issuedTo = (clientId: string) => entra.requests.filter((r) => r.clientId === clientId && r.status === 200).length;

describe('Entra tokens that expire under load', () => {
  it('steady load across several refresh windows: no request fails, about one token request per window', async () => {
    const runMs = 9_000;
    const started = Date.now();
    let ok = 0;
    const failures: string[] = [];
    const loop = async () => {
      while (Date.now() - started < runMs) {
        try {
          await ask('load');
          ok++;
        } catch (err) {
          failures.push((err as Error).message);
        }
        await sleep(20);
      }
    };
    await Promise.all(Array.from({ length: 4 }, loop));
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(40);
    // Refreshed at half the lifetime (2 s) behind the requests: ~runMs / 2 s tokens, plus the first.
    const tokens = issuedTo('app-load');
    expect(tokens).toBeGreaterThanOrEqual(3);
    expect(tokens).toBeLessThanOrEqual(Math.ceil(runMs / ((LIFETIME_S * 1000) / 2)) + 1);
    // Every upstream request carried a token the emulator had issued and that was still valid then.
    expect(azure.requests.length).toBe(ok);
    const status = (await readyz()).providers.load.identity;
    expect(status).toMatchObject({ source: 'azure:client-secret', failures: 0, refreshes: tokens });
  }, 30_000);

  it('a failed refresh keeps the old token until it expires, then 503 without a token in any message or log', async () => {
    await ask('outage');
    const expiresAt = Date.parse((await readyz()).providers.outage.identity.expiresAt);
    entra.failing = true;
    // Past the refresh point (half the lifetime) every refresh fails; the old token still serves.
    let served = 0;
    // Stops a second before the expiry: a request sent just before it can reach the authority's
    // upstream after it on a loaded machine, where the old token is rightly refused.
    while (Date.now() < expiresAt - 1000) {
      await ask('outage');
      served++;
      await sleep(150);
    }
    expect(served).toBeGreaterThanOrEqual(3);
    const during = (await readyz()).providers.outage.identity;
    expect(during.failures).toBeGreaterThanOrEqual(1);
    expect(during.lastError).toMatch(/temporarily_unavailable|AADSTS90033/);
    expect(entra.requests.filter((r) => r.clientId === 'app-outage' && r.status === 503).length).toBeGreaterThanOrEqual(1);

    await sleep(Math.max(0, expiresAt - Date.now() + 100));
    const err = await failureOf(ask('outage'));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(503);
    expect(err.message).toContain('no valid credentials');
    expect(err.headers?.get('x-request-id')).toBeTruthy();
    const body = JSON.stringify(err.error);
    const after = JSON.stringify(await readyz());
    for (const secret of [...entra.tokens, SECRET]) {
      expect(body).not.toContain(secret);
      expect(after).not.toContain(secret);
      expect(t.logText()).not.toContain(secret);
    }

    // The authority back: once its Retry-After (1 s) has passed, which MSAL honours, the next
    // request that finds no valid token fetches one.
    entra.failing = false;
    await sleep(1_100);
    expect((await ask('outage')).model).toBe('gpt-5-nano-2025-08-07');
  }, 30_000);
});
