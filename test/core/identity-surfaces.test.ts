/**
 * Where an operator sees each provider's identity, on a real gateway: /readyz, the console's
 * providers view, the credential metrics, and `switchyard validate --strict` (the real CLI in a
 * child process). Cloud identity comes from Azure OpenAI with Entra ID against the Entra emulator
 * on loopback; the API-key providers (openai, anthropic, gemini, azure with a key) say `api-key`.
 * No surface shows a token, a secret or a key.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { fakeUpstream, loadFixture, replay, useTestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf, ROOT } from '../helpers/repo.ts';
import { startEntraEmulator, tempFile, TENANT, trustCertificate, type EntraEmulator } from '../helpers/entra-emulator.ts';
import { parseExposition, sampleValue, scrape } from '../observability/helpers.ts';

const SECRET = 'entra-surface-secret-0123456789';
const WRONG_SECRET = 'entra-wrong-secret-0123456789';
const KEY = 'sk-upstream-key-0123456789';
const ADMIN_KEY = 'sk-admin-identity-0123456789';
const LIFETIME_S = 600;

let entra: EntraEmulator;
const azure = fakeUpstream((req) => {
  const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  if (!entra.isValid(bearer)) return { status: 401, body: { error: { code: 'PermissionDenied', message: 'Principal does not have access to API/Operation.' } } };
  return replay(loadFixture(fixturesOf('azure'), 'chat-basic'));
});

beforeAll(async () => {
  entra = await startEntraEmulator({ tokenLifetimeS: LIFETIME_S });
  trustCertificate(entra.tlsCertificatePem);
  entra.register('app-surface', { secret: SECRET });
});
afterAll(() => entra?.close());

/** The providers of both the served gateway and the validated files. */
function providers(clientSecret: string) {
  const entraAuth = (secret: string) => ({ type: 'entra', tenantId: TENANT, clientId: 'app-surface', clientSecret: secret, authorityHost: entra.authorityHost });
  return {
    entra: { plugin: 'azure-openai', endpoint: azure.url, mode: 'v1', auth: entraAuth(clientSecret) },
    refused: { plugin: 'azure-openai', endpoint: azure.url, mode: 'v1', auth: entraAuth(WRONG_SECRET) },
    keyed: { plugin: 'azure-openai', endpoint: azure.url, apiKey: KEY },
    openai: { plugin: 'openai', baseUrl: `${azure.url}/v1`, apiKey: KEY },
    anthropic: { plugin: 'anthropic', baseUrl: azure.url, apiKey: KEY },
    gemini: { plugin: 'gemini', baseUrl: azure.url, apiKey: KEY },
    mock: { plugin: 'mock' },
  };
}

const t = useTestGateway(
  () => ({
    admin: { keys: [{ name: 'ops', key: ADMIN_KEY }] },
    providers: providers(SECRET),
    models: {
      entra: { retry: { attempts: 1 }, targets: [{ provider: 'entra', model: 'gpt-5-nano' }] },
      refused: { retry: { attempts: 1 }, targets: [{ provider: 'refused', model: 'gpt-5-nano' }] },
    },
  }),
  { upstreams: [azure] },
);

const ask = (model: string) => t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] });
const secrets = () => [...entra.tokens, SECRET, WRONG_SECRET, KEY];

describe('identity surfaces', () => {
  beforeAll(async () => {
    await ask('entra');
    await ask('refused').catch(() => {});
  });

  it('/readyz lists each provider identity source and token expiry, never a secret', async () => {
    const res = await fetch(`${t.url}/readyz`);
    const text = await res.text();
    const ready = JSON.parse(text);
    expect(ready.providers.entra.identity).toMatchObject({ source: 'azure:client-secret', refreshes: 1, failures: 0 });
    expect(ready.providers.entra.identity.expiresInS).toBeGreaterThan(LIFETIME_S - 30);
    expect(ready.providers.entra.identity.expiresInS).toBeLessThanOrEqual(LIFETIME_S);
    expect(ready.providers.refused.identity).toMatchObject({ source: 'azure:client-secret', refreshes: 0, failures: 1 });
    expect(ready.providers.refused.identity.lastError).toContain('AADSTS7000215');
    for (const name of ['keyed', 'openai', 'anthropic', 'gemini']) expect(ready.providers[name].identity, name).toEqual({ source: 'api-key', refreshes: 0, failures: 0 });
    expect(ready.providers.mock).toEqual({ status: 'ready' });
    for (const s of secrets()) expect(text).not.toContain(s);
  });

  it('the console providers view shows the same, to an admin key only', async () => {
    const refused = await fetch(`${t.url}/admin/v1/console/providers`);
    expect(refused.status).toBe(401);
    const res = await fetch(`${t.url}/admin/v1/console/providers`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const byName = Object.fromEntries(JSON.parse(text).data.map((p: { name: string }) => [p.name, p]));
    expect(byName.entra).toMatchObject({ plugin: 'azure-openai', state: 'ready', unavailable: null, identity: { source: 'azure:client-secret', refreshes: 1 } });
    expect(byName.anthropic.identity.source).toBe('api-key');
    expect(byName.mock.identity).toBeNull();
    for (const s of secrets()) expect(text).not.toContain(s);
  });

  it('metrics count refreshes by outcome and show seconds to expiry, read when scraped', async () => {
    const samples = parseExposition((await scrape(t.gateway.metricsUrl!)).text);
    const refreshes = (provider: string, outcome: string) => sampleValue(samples, 'switchyard_credential_refreshes_total', { provider, source: 'azure:client-secret', outcome });
    expect(refreshes('entra', 'ok')).toBe(1);
    expect(refreshes('entra', 'failed')).toBe(0);
    expect(refreshes('refused', 'failed')).toBe(1);
    const expiry = sampleValue(samples, 'switchyard_credential_expiry_seconds', { provider: 'entra', source: 'azure:client-secret' });
    expect(expiry).toBeGreaterThan(LIFETIME_S - 30);
    // The library stamps expiry from `expires_in` in whole seconds against its own clock: up to a second over.
    expect(expiry).toBeLessThanOrEqual(LIFETIME_S + 1);
    // API keys do not expire: no gauge for them.
    expect(samples.filter((s) => s.name === 'switchyard_credential_expiry_seconds').map((s) => s.labels.provider)).toEqual(['entra']);

    // Another failure adds to the counter; scraping again does not count the same one twice.
    await ask('refused').catch(() => {});
    await scrape(t.gateway.metricsUrl!);
    const again = parseExposition((await scrape(t.gateway.metricsUrl!)).text);
    expect(sampleValue(again, 'switchyard_credential_refreshes_total', { provider: 'refused', outcome: 'failed' })).toBe(2);
    expect(sampleValue(again, 'switchyard_credential_refreshes_total', { provider: 'entra', outcome: 'ok' })).toBe(1);
  });
});

describe('switchyard validate --strict', () => {
  /**
   * The real CLI on a config file, trusting the emulator's certificate as a host would. Run
   * asynchronously: the emulator answers from this process.
   */
  async function validate(config: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const file = tempFile(
      'gateway.yaml',
      YAML.stringify({ keys: [{ name: 'dev', key: 'sk-dev-0123456789', models: ['*'] }], models: { demo: { targets: [{ provider: 'mock', model: 'm' }] } }, ...config }),
    );
    const ca = path.join(path.dirname(file), 'emulator-ca.pem');
    writeFileSync(ca, entra.tlsCertificatePem);
    return new Promise((resolve) => {
      const args = [path.join(ROOT, 'bin/switchyard.mjs'), 'validate', '--strict', file];
      execFile(process.execPath, args, { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: ca }, timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });
  }

  it('resolves every provider credentials once and prints each source', async () => {
    const { refused: _refused, ...good } = providers(SECRET);
    const before = entra.issued('client-secret');
    const r = await validate({ providers: good });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/gateway\.yaml: OK/);
    expect(r.stdout).toMatch(/ {2}provider entra: azure:client-secret, valid for (?:[5-9]|10) min\n/);
    for (const name of ['keyed', 'openai', 'anthropic', 'gemini']) expect(r.stdout).toContain(`  provider ${name}: api-key\n`);
    expect(r.stdout).toContain('  provider mock: no identity to check');
    expect(entra.issued('client-secret') - before).toBe(1);
    for (const s of [...secrets()]) expect(r.stdout + r.stderr).not.toContain(s);
  }, 150_000);

  it('fails (exit 1) naming the provider whose credentials do not work and why, without the secret', async () => {
    const r = await validate({ providers: providers(SECRET) });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/ {2}provider refused: no credentials: .*AADSTS7000215: Invalid client secret provided/);
    expect(r.stderr).toContain('  provider entra: azure:client-secret, valid for');
    expect(r.stderr).toContain('--strict: no credentials for provider refused');
    for (const s of [...secrets()]) expect(r.stdout + r.stderr).not.toContain(s);
  }, 150_000);
});
