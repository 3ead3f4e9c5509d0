import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { codeBlocks } from '../../scripts/check-docs.mjs';
import { entraSourceOf, type EntraAuth } from './entra.ts';
import azure, { prepareAzure } from './index.ts';

describe('which Entra credential auth picks', () => {
  it('the fields present pick the credential; none of them, the default chain', () => {
    expect(entraSourceOf({ type: 'entra', tenantId: 't', clientId: 'c', clientSecret: 's' })).toBe('azure:client-secret');
    expect(entraSourceOf({ type: 'entra', tenantId: 't', clientId: 'c', certificateFile: 'app.pem' })).toBe('azure:client-certificate');
    expect(entraSourceOf({ type: 'entra', federatedTokenFile: '/var/run/secrets/azure/tokens/azure-identity-token' })).toBe('azure:workload-identity');
    expect(entraSourceOf({ type: 'entra', managedIdentityClientId: 'mi' })).toBe('azure:managed-identity');
    expect(entraSourceOf({ type: 'entra' })).toBe('azure:default-chain');
    expect(entraSourceOf({ type: 'entra', tenantId: 't', clientId: 'c', authorityHost: 'https://login.microsoftonline.us' })).toBe('azure:default-chain');
  });

  it('two credentials at once, or a secret without its app, is a config error that says what to do', () => {
    expect(() => entraSourceOf({ type: 'entra', tenantId: 't', clientId: 'c', clientSecret: 's', managedIdentityClientId: 'mi' })).toThrow(
      'auth: clientSecret and managedIdentityClientId each pick a different credential: keep one',
    );
    expect(() => entraSourceOf({ type: 'entra', clientSecret: 's' })).toThrow('auth: clientSecret needs tenantId and clientId');
    expect(() => entraSourceOf({ type: 'entra', clientId: 'c', certificateFile: 'x.pem' })).toThrow('auth: certificateFile needs tenantId and clientId');
  });
});

describe('prepareAzure', () => {
  const env = { name: 'az', configDir: '/tmp' };
  it('an API key from apiKey or auth: { type: api-key }; not both apiKey and auth', async () => {
    expect((await prepareAzure({ endpoint: 'https://x.openai.azure.com', apiKey: 'k1' }, env)).key).toBe('k1');
    expect((await prepareAzure({ endpoint: 'https://x.openai.azure.com', auth: { type: 'api-key', key: 'k2' } }, env)).key).toBe('k2');
    await expect(prepareAzure({ endpoint: 'https://x.openai.azure.com', apiKey: 'k1', auth: { type: 'api-key', key: 'k2' } }, env)).rejects.toThrow('give apiKey or auth, not both');
    await expect(prepareAzure({ endpoint: 'https://x.openai.azure.com' }, env)).rejects.toThrow('no credentials: set apiKey, or auth');
  });

  it('Entra: a token kept fresh, nothing fetched until asked', async () => {
    const prepared = await prepareAzure({ endpoint: 'https://x.openai.azure.com', auth: { type: 'entra', tenantId: 't', clientId: 'c', clientSecret: 's' } }, env);
    expect(prepared.key).toBeUndefined();
    expect(prepared.token?.status()).toEqual({ source: 'azure:client-secret', refreshes: 0, failures: 0, expiresAt: undefined, obtainedAt: undefined, lastError: undefined });
  });
});

describe("the README's Entra examples", () => {
  it('each passes the options schema and picks the credential its comment names', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const blocks = codeBlocks(readme).filter((b: { lang: string; text: string }) => b.lang === 'yaml' && b.text.includes('aoai-aks'));
    expect(blocks).toHaveLength(1);
    const providers = YAML.parse(blocks[0].text).providers as Record<string, { plugin: string; auth: EntraAuth }>;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(azure.optionsSchema);
    for (const [name, { plugin: _plugin, ...options }] of Object.entries(providers)) expect(validate(options), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    expect(Object.fromEntries(Object.entries(providers).map(([name, p]) => [name, entraSourceOf(p.auth)]))).toEqual({
      'aoai-aks': 'azure:workload-identity',
      'aoai-chain': 'azure:default-chain',
      'aoai-mi': 'azure:managed-identity',
      'aoai-sp': 'azure:client-secret',
      'aoai-cert': 'azure:client-certificate',
    });
  });
});
