/**
 * For a test file of one Azure managed identity endpoint: MSAL picks the endpoint once per process
 * (from the environment, at the first token request) and keeps it in a static, so each endpoint
 * the library can reach on loopback gets a file of its own (vitest's default isolation gives each
 * file its own process; with `isolate: false` they would share MSAL's choice). This starts the Entra emulator, sets the
 * variables that point the library at it (and unsets the other endpoints' and the AKS ones, so the
 * chain finds only this one), a fake Azure OpenAI that accepts only a live token the emulator
 * issued, and a gateway with the given providers, one alias each.
 */
import { afterAll, beforeAll } from 'vitest';
import { fakeUpstream, loadFixture, replay, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from './repo.ts';
import { startEntraEmulator, type EntraEmulator } from './entra-emulator.ts';

/** Every variable that names a managed identity endpoint or the AKS federation (unset unless the file sets it). */
const MANAGED_IDENTITY_VARIABLES = [
  'IDENTITY_ENDPOINT',
  'IDENTITY_HEADER',
  'IDENTITY_SERVER_THUMBPRINT',
  'IMDS_ENDPOINT',
  'MSI_ENDPOINT',
  'MSI_SECRET',
  'AZURE_POD_IDENTITY_AUTHORITY_HOST',
  'AZURE_TENANT_ID',
  'AZURE_CLIENT_ID',
  'AZURE_CLIENT_SECRET',
  'AZURE_CLIENT_CERTIFICATE_PATH',
  'AZURE_FEDERATED_TOKEN_FILE',
  'AZURE_AUTHORITY_HOST',
  'AZURE_USERNAME',
];

export interface ManagedIdentityRig {
  readonly entra: EntraEmulator;
  readonly t: TestGateway;
  /** A chat and a stream through the alias; the stream's text. */
  chatAndStream(model: string): Promise<{ model: string; text: string }>;
  /** The tokens the fake Azure OpenAI was sent, each checked live when it arrived. */
  readonly sent: Array<{ token: string; valid: boolean }>;
}

export function useManagedIdentity(spec: { env(entra: EntraEmulator): Record<string, string>; auth: Record<string, Record<string, unknown>>; userAssigned?: string[] }): ManagedIdentityRig {
  let entra: EntraEmulator | undefined;
  const sent: ManagedIdentityRig['sent'] = [];
  const azure = fakeUpstream((req) => {
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
    const valid = entra?.isValid(token) === true;
    sent.push({ token, valid });
    if (!valid) return { status: 401, body: { error: { code: 'PermissionDenied', message: 'Principal does not have access to API/Operation.' } } };
    return replay(loadFixture(fixturesOf('azure'), req.body.stream ? 'stream-basic-content-filter' : 'chat-basic'));
  });
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    entra = await startEntraEmulator();
    for (const id of spec.userAssigned ?? []) entra.register(id, { secret: 'unused' });
    const env = spec.env(entra);
    for (const k of new Set([...MANAGED_IDENTITY_VARIABLES, ...Object.keys(env)])) {
      saved[k] = process.env[k];
      if (env[k] === undefined) delete process.env[k];
      else process.env[k] = env[k];
    }
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await entra?.close();
  });
  const t = useTestGateway(
    () => ({
      providers: Object.fromEntries(Object.entries(spec.auth).map(([name, auth]) => [name, { plugin: 'azure-openai', endpoint: azure.url, mode: 'v1', auth: { type: 'entra', ...auth } }])),
      models: Object.fromEntries(Object.keys(spec.auth).map((name) => [name, { retry: { attempts: 1 }, targets: [{ provider: name, model: 'gpt-5-nano' }] }])),
    }),
    { upstreams: [azure] },
  );
  return {
    get entra() {
      if (!entra) throw new Error('the emulator starts in beforeAll');
      return entra;
    },
    t,
    sent,
    async chatAndStream(model) {
      const client = t.client();
      const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] });
      const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'Hello!' }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return { model: r.model, text };
    },
  };
}
