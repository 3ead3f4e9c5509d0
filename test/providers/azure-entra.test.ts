/**
 * Azure OpenAI with Entra ID through the real `@azure/identity`, against the Entra emulator on
 * loopback (test/helpers/entra-emulator.ts): each credential source (client secret, client
 * certificate, workload identity from a federated token file, a managed identity, the
 * DefaultAzureCredential chain) serves chat and a stream through the official openai SDK, on
 * deployment and v1 URLs; the fake Azure OpenAI accepts only a token the emulator issued that has
 * not expired. API keys still work beside them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeUpstream, loadFixture, replay, useTestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';
import { federatedIssuer, selfSignedCertificate, startEntraEmulator, tempFile, TENANT, trustCertificate, type EntraEmulator } from '../helpers/entra-emulator.ts';

const f = (name: string) => loadFixture(fixturesOf('azure'), name);
const SECRET = 'entra-client-secret-0123456789';
const API_KEY = 'azure-api-key-0123456789';
const SUBJECT = 'system:serviceaccount:ai:switchyard';
const k8s = federatedIssuer('https://oidc.aks.test/cluster-1');
const appCertificate = selfSignedCertificate('switchyard-test-app');
const certificateFile = tempFile('app.pem', appCertificate.keyPem + appCertificate.certPem);
const federatedTokenFile = tempFile('azure-identity-token', k8s.token(SUBJECT));

let entra: EntraEmulator;
/** Azure OpenAI that takes only a currently valid Entra token (or the one API key). */
const azure = fakeUpstream((req) => {
  const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  if (!(entra.isValid(bearer) || (bearer === undefined && req.headers['api-key'] === API_KEY))) {
    return { status: 401, body: { error: { code: 'PermissionDenied', message: 'Principal does not have access to API/Operation.' } } };
  }
  return replay(f(req.body.stream ? 'stream-basic-content-filter' : 'chat-basic'));
});

const saved: Record<string, string | undefined> = {};
beforeAll(async () => {
  entra = await startEntraEmulator({ federationKeys: { [k8s.issuer]: k8s.publicKey } });
  trustCertificate(entra.tlsCertificatePem);
  entra.register('app-secret', { secret: SECRET });
  entra.register('app-certificate', { certificatePem: appCertificate.certPem });
  entra.register('app-workload', { federated: { issuer: k8s.issuer, subject: SUBJECT } });
  entra.register('app-chain', { federated: { issuer: k8s.issuer, subject: SUBJECT } });
  entra.register('mi-user-assigned', { secret: 'unused' });
  // What App Service and the AKS workload identity webhook put in a pod's environment; the
  // library reads it when a token is asked for.
  const env = {
    IDENTITY_ENDPOINT: entra.identityEndpoint,
    IDENTITY_HEADER: entra.identityHeader,
    AZURE_TENANT_ID: TENANT,
    AZURE_CLIENT_ID: 'app-chain',
    AZURE_FEDERATED_TOKEN_FILE: federatedTokenFile,
    AZURE_AUTHORITY_HOST: entra.authorityHost,
  };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await entra?.close();
});

type Kind = 'client-secret' | 'client-certificate' | 'federated' | 'managed-identity';
const PROVIDERS: Record<string, { auth?: Record<string, string>; source: string; kind: Kind; appService?: true }> = {
  secret: { auth: { tenantId: TENANT, clientId: 'app-secret', clientSecret: SECRET }, source: 'azure:client-secret', kind: 'client-secret' },
  certificate: { auth: { tenantId: TENANT, clientId: 'app-certificate', certificateFile }, source: 'azure:client-certificate', kind: 'client-certificate' },
  workload: { auth: { tenantId: TENANT, clientId: 'app-workload', federatedTokenFile }, source: 'azure:workload-identity', kind: 'federated' },
  // On App Service: with AKS's variables present the library exchanges the federated token instead.
  managed: { auth: { managedIdentityClientId: 'mi-user-assigned' }, source: 'azure:managed-identity', kind: 'managed-identity', appService: true },
  chain: { auth: {}, source: 'azure:default-chain', kind: 'federated' },
};

const t = useTestGateway(
  () => ({
    providers: {
      ...Object.fromEntries(
        Object.entries(PROVIDERS).flatMap(([name, p]) => {
          const auth = { type: 'entra', ...(p.kind !== 'managed-identity' && { authorityHost: entra.authorityHost }), ...p.auth };
          return [
            [name, { plugin: 'azure-openai', endpoint: azure.url, auth }],
            [`${name}-v1`, { plugin: 'azure-openai', endpoint: azure.url, mode: 'v1', auth }],
          ];
        }),
      ),
      keyed: { plugin: 'azure-openai', endpoint: azure.url, apiKey: API_KEY },
      'keyed-auth': { plugin: 'azure-openai', endpoint: azure.url, auth: { type: 'api-key', key: API_KEY } },
    },
    models: Object.fromEntries(
      [...Object.keys(PROVIDERS).flatMap((n) => [n, `${n}-v1`]), 'keyed', 'keyed-auth'].map((name) => [name, { retry: { attempts: 1 }, targets: [{ provider: name, model: 'gpt-5-nano' }] }]),
    ),
  }),
  { upstreams: [azure] },
);

const AKS_VARIABLES = ['AZURE_TENANT_ID', 'AZURE_CLIENT_ID', 'AZURE_FEDERATED_TOKEN_FILE', 'AZURE_AUTHORITY_HOST'];

/** Unsets the variables until the returned function puts them back. */
function unsetEnv(names: string[]): () => void {
  const kept = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  for (const n of names) delete process.env[n];
  return () => Object.assign(process.env, kept);
}

// biome-ignore lint/suspicious/noExplicitAny: /readyz as JSON, read by the tests as they find it
const readyzOf = async (): Promise<any> => (await fetch(`${t.url}/readyz`)).json();

async function chatAndStream(model: string) {
  const client = t.client();
  const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] });
  const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'Hello!' }] });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return { r, text };
}

describe('azure-openai with Entra ID', () => {
  for (const [name, p] of Object.entries(PROVIDERS)) {
    it(`${p.source}: a chat and a stream on deployment and v1 URLs, one token for all four`, async () => {
      const before = entra.issued(p.kind);
      const restore = p.appService ? unsetEnv(AKS_VARIABLES) : () => {};
      try {
        for (const model of [name, `${name}-v1`]) {
          const { r, text } = await chatAndStream(model);
          expect(r.model).toBe('gpt-5-nano-2025-08-07');
          expect(text.length).toBeGreaterThan(0);
        }
      } finally {
        restore();
      }
      expect(azure.requests.map((q) => q.url)).toEqual([
        '/openai/deployments/gpt-5-nano/chat/completions?api-version=2024-10-21',
        '/openai/deployments/gpt-5-nano/chat/completions?api-version=2024-10-21',
        '/openai/v1/chat/completions',
        '/openai/v1/chat/completions',
      ]);
      for (const q of azure.requests) {
        expect(entra.isValid(String(q.headers.authorization).replace(/^Bearer /, ''))).toBe(true);
        expect(q.headers['api-key']).toBeUndefined();
      }
      // One provider, one token: the v1 provider is its own instance, so two fetches in all
      // (MSAL keeps managed identity tokens in one cache for the process: the second is served from it).
      expect(entra.issued(p.kind) - before).toBe(p.kind === 'managed-identity' ? 1 : 2);
      const readyz = await readyzOf();
      expect(readyz.providers[name]).toMatchObject({ status: 'ready', identity: { source: p.source, refreshes: 1, failures: 0 } });
      expect(Date.parse(readyz.providers[name].identity.expiresAt)).toBeGreaterThan(Date.now());
    });
  }

  it('the certificate signs its client assertion and the federated token is the projected one', () => {
    const byKind = (kind: string) => entra.requests.filter((r) => r.kind === kind && r.status === 200);
    // MSAL signs with PS256 and the certificate's SHA-256 thumbprint; the emulator verifies either RS256 or PS256.
    expect(byKind('client-certificate').every((r) => r.alg === 'PS256')).toBe(true);
    expect(byKind('federated').every((r) => r.alg === 'RS256')).toBe(true);
    expect(byKind('federated').map((r) => r.clientId)).toEqual(expect.arrayContaining(['app-workload', 'app-chain']));
    expect(entra.requests.every((r) => r.scopeOrResource.startsWith('https://cognitiveservices.azure.com'))).toBe(true);
  });

  it('an API key still works, as apiKey or auth: { type: api-key }', async () => {
    for (const model of ['keyed', 'keyed-auth']) {
      const { text } = await chatAndStream(model);
      expect(text.length).toBeGreaterThan(0);
    }
    expect(azure.requests.every((q) => q.headers['api-key'] === API_KEY && q.headers.authorization === undefined)).toBe(true);
    const readyz = await readyzOf();
    expect(readyz.providers.keyed.identity).toEqual({ source: 'api-key', refreshes: 0, failures: 0 });
  });

  it('no token, secret or key appears in a log line or /readyz', async () => {
    const readyz = await (await fetch(`${t.url}/readyz`)).text();
    expect(entra.tokens.length).toBeGreaterThan(0);
    for (const secret of [...entra.tokens, SECRET, API_KEY, appCertificate.keyPem.split('\n')[1]]) {
      expect(t.logText()).not.toContain(secret);
      expect(readyz).not.toContain(secret);
    }
  });
});
