/**
 * Vertex access tokens that expire while the gateway serves: issued by the emulators with a few
 * seconds' lifetime, refreshed by google-auth-library behind the requests. Under steady load no
 * request fails and the token endpoints are called about once per refresh window, never per
 * request; a refresh that fails while the token is still valid changes nothing for clients, and
 * once it has expired requests get a 503 in the usual envelope, no token in any message or log.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { failureOf, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fakeVertex } from '../helpers/fake-vertex.ts';
import { googleEmulator, useGoogleEmulator, type TokenSource } from '../helpers/google-emulator.ts';
import { configYaml } from '../helpers/repo.ts';

const PROJECT = 'switchyard-test';
const emulator = googleEmulator();
const { oidcFile } = useGoogleEmulator(emulator);

function config(vertexUrl: string, providers: string[]) {
  const lines: Record<string, string> = {
    sa: `  sa: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertexUrl}", auth: { type: google, credentialsFile: sa.json } }`,
    meta: `  meta: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertexUrl}", auth: { type: google } }`,
    wif: `  wif: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertexUrl}", auth: { type: google, credentialsFile: wif.json } }`,
    imp: `  imp: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertexUrl}", auth: { type: google, credentialsFile: imp.json } }`,
  };
  return configYaml({
    providers: providers.map((p) => lines[p]).join('\n'),
    models: providers.map((p) => `  ${p}: { retry: { attempts: 1 }, targets: [{ provider: ${p}, model: gemini-2.5-flash }] }`).join('\n'),
  });
}

const files = {
  get 'sa.json'() {
    return JSON.stringify(emulator.serviceAccount());
  },
  get 'wif.json'() {
    return JSON.stringify(emulator.externalAccount(oidcFile));
  },
  // A user's credentials as the source (their token endpoint calls are not counted against another provider's).
  get 'imp.json'() {
    return JSON.stringify(emulator.impersonatedServiceAccount('vertex-caller@switchyard-test.iam.gserviceaccount.com', emulator.authorizedUser()));
  },
};

const chat = (t: TestGateway, model: string) => t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
const identityOf = (t: TestGateway, provider: string) => t.gateway.runtime.providers.get(provider)?.instance?.identity?.();

describe('tokens that live 2 s, under steady load for 6 s', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const sources: Array<[string, TokenSource]> = [
    ['sa', 'service-account'],
    ['meta', 'metadata-server'],
    ['wif', 'external-account'],
  ];
  const t = useTestGateway(
    () => {
      emulator.lifetimeSeconds = 2;
      return config(vertex.url, ['sa', 'meta', 'wif']);
    },
    { upstreams: [vertex], files },
  );

  it('no request fails; each token endpoint is called about once per refresh window, not per request', async () => {
    const startCalls = { ...emulator.calls };
    const until = Date.now() + 6000;
    // The projected OIDC token rotates, replaced whole as a kubelet replaces it: each exchange reads the file anew.
    const subjectsBefore = emulator.subjects.size;
    const rotate = setInterval(() => {
      writeFileSync(`${oidcFile}.next`, emulator.oidcToken());
      renameSync(`${oidcFile}.next`, oidcFile);
    }, 700);
    let ok = 0;
    const failures: string[] = [];
    // Two clients per provider, one request after another, for the whole window.
    await Promise.all(
      sources.flatMap(([model]) =>
        [0, 1].map(async () => {
          while (Date.now() < until) {
            try {
              await chat(t, model);
              ok++;
            } catch (err) {
              failures.push(`${model}: ${(err as Error).message}`);
            }
            await sleep(10);
          }
        }),
      ),
    );
    clearInterval(rotate);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(60);
    expect(emulator.subjects.size - subjectsBefore, 'distinct OIDC tokens exchanged at STS').toBeGreaterThanOrEqual(3);
    for (const [provider, source] of sources) {
      const calls = emulator.calls[source] - startCalls[source];
      // Refreshed half-way through each 2 s token: ~6 refreshes in 6 s; requests that found one in flight did not ask again.
      expect(calls, `${source} token requests`).toBeGreaterThanOrEqual(3);
      expect(calls, `${source} token requests`).toBeLessThanOrEqual(9);
      expect(identityOf(t, provider)).toMatchObject({ failures: 0 });
    }
    // Every upstream request carried a token (the fake Vertex refuses any other); they rotated.
    const bearers = new Set(vertex.requests.map((r) => r.headers.authorization));
    expect(bearers.size).toBeGreaterThanOrEqual(12);
    expect(emulator.refusals).toEqual([]);
  }, 20_000);
});

describe('impersonated tokens that live 4 s, under steady load for 8 s', () => {
  // Two round trips a refresh (the source's token, then generateAccessToken): 4 s tokens leave a
  // loaded machine 2 s to finish one before the token in use expires.
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const t = useTestGateway(
    () => {
      emulator.lifetimeSeconds = 4;
      return config(vertex.url, ['imp']);
    },
    { upstreams: [vertex], files },
  );

  it('no request fails; generateAccessToken is called about once per refresh window', async () => {
    const before = emulator.calls.impersonated;
    const until = Date.now() + 8000;
    let ok = 0;
    const failures: string[] = [];
    await Promise.all(
      [0, 1, 2].map(async () => {
        while (Date.now() < until) {
          try {
            await chat(t, 'imp');
            ok++;
          } catch (err) {
            failures.push((err as Error).message);
          }
          await sleep(10);
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(40);
    const calls = emulator.calls.impersonated - before;
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(7);
    expect(identityOf(t, 'imp')).toMatchObject({ source: 'google:impersonated-service-account', failures: 0 });
    expect(new Set(vertex.requests.map((r) => r.headers.authorization)).size).toBeGreaterThanOrEqual(3);
    expect(emulator.refusals).toEqual([]);
  }, 20_000);
});

describe('a refresh that fails', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const t = useTestGateway(
    () => {
      emulator.lifetimeSeconds = 3;
      return config(vertex.url, ['sa']);
    },
    { upstreams: [vertex], files },
  );

  it('keeps serving with the valid token; after it expires a 503 in the usual envelope, no token anywhere; then recovers', async () => {
    await chat(t, 'sa');
    const first = emulator.issued.findLast((x) => x.source === 'service-account')!;
    emulator.failWith = { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
    try {
      // Past the refresh point (half-way), before expiry: served with the old token, the refresh fails behind.
      // (Margins of most of a second: the machine is shared, a request may be slow.)
      await sleep(Math.max(0, first.expiresAt - 1900 - Date.now()));
      while (Date.now() < first.expiresAt - 800) {
        const r = await chat(t, 'sa');
        expect(r.choices[0].message.content).toContain('Vertex');
        expect(vertex.requests.at(-1)!.headers.authorization).toBe(`Bearer ${first.token}`);
        await sleep(50);
      }
      const status = identityOf(t, 'sa')!;
      expect(status.failures).toBeGreaterThanOrEqual(1);
      expect(status.lastError).toContain('invalid_grant');

      await sleep(Math.max(0, first.expiresAt + 100 - Date.now()));
      const err = await failureOf(chat(t, 'sa'));
      expect(err.status).toBe(503);
      expect(err.message).toContain('no valid credentials');
      expect(err.message).toContain('google:service-account');
      expect(err.headers?.get('x-request-id')).toBeTruthy();
      expect((err.error as { message?: string }).message).toBeTruthy();
      const seen = JSON.stringify(err.error) + JSON.stringify(identityOf(t, 'sa'));
      for (const issued of emulator.issued) {
        expect(seen).not.toContain(issued.token);
        expect(t.logText()).not.toContain(issued.token);
      }
      expect(t.logText()).not.toContain('PRIVATE KEY');
    } finally {
      emulator.failWith = undefined;
    }
    // The token endpoint answers again: the next request fetches a new token and is served.
    const r = await chat(t, 'sa');
    expect(r.choices[0].message.content).toContain('Vertex');
    expect(vertex.requests.at(-1)!.headers.authorization).not.toBe(`Bearer ${first.token}`);
    expect(identityOf(t, 'sa')?.lastError).toBeUndefined();
  }, 20_000);
});
