/**
 * Azure managed identity through the instance metadata service (a VM, a scale set, AKS with AAD
 * Pod Identity), through the real `@azure/identity` and MSAL: IMDS lives at the fixed
 * 169.254.169.254, and the library reads another host from AZURE_POD_IDENTITY_AUTHORITY_HOST (what
 * AAD Pod Identity's node agent sets), which points it at the Entra emulator on loopback. A
 * user-assigned identity (`managedIdentityClientId`) and the system-assigned one (reached by the
 * DefaultAzureCredential chain) each serve a chat and a stream; the fake Azure OpenAI takes only a
 * live token the emulator issued. Short-lived tokens under load fail no request.
 */
import { describe, expect, it } from 'vitest';
import { useManagedIdentity } from '../helpers/azure-managed-identity.ts';

const USER_ASSIGNED = '6a3d8f2e-0000-4000-8000-00000000beef';
/** A second user-assigned identity, first asked for under load (MSAL caches tokens per identity). */
const UNDER_LOAD = '6a3d8f2e-0000-4000-8000-00000000f00d';
const rig = useManagedIdentity({
  env: (entra) => ({ AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.imdsHost }),
  auth: { user: { managedIdentityClientId: USER_ASSIGNED }, system: {}, load: { managedIdentityClientId: UNDER_LOAD } },
  userAssigned: [USER_ASSIGNED, UNDER_LOAD],
});

// biome-ignore lint/suspicious/noExplicitAny: /readyz as JSON
const readyz = async (): Promise<any> => (await fetch(`${rig.t.url}/readyz`)).json();

describe('managed identity through IMDS (AZURE_POD_IDENTITY_AUTHORITY_HOST)', () => {
  it('a user-assigned identity: IMDS asked with Metadata: true, its client id and the resource; the token serves', async () => {
    const { model, text } = await rig.chatAndStream('user');
    expect(model).toBe('gpt-5-nano-2025-08-07');
    expect(text.length).toBeGreaterThan(0);
    const asked = rig.entra.requests.filter((r) => r.via === 'imds' && r.status === 200);
    expect(asked).toEqual([expect.objectContaining({ clientId: USER_ASSIGNED, scopeOrResource: 'https://cognitiveservices.azure.com' })]);
    expect(rig.sent.length).toBe(2);
    expect(rig.sent.every((s) => s.valid)).toBe(true);
    const user = (await readyz()).providers.user;
    expect(user).toMatchObject({ status: 'ready', identity: { source: 'azure:managed-identity', refreshes: 1, failures: 0 } });
    expect(Date.parse(user.identity.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('the system-assigned identity, found by the DefaultAzureCredential chain', async () => {
    const { text } = await rig.chatAndStream('system');
    expect(text.length).toBeGreaterThan(0);
    const asked = rig.entra.requests.filter((r) => r.via === 'imds' && r.status === 200).map((r) => r.clientId);
    expect(asked).toContain('(system-assigned)');
    expect(rig.sent.every((s) => s.valid)).toBe(true);
    expect((await readyz()).providers.system).toMatchObject({ status: 'ready', identity: { source: 'azure:default-chain', failures: 0 } });
  });

  it('3-second tokens under steady load: no request fails, IMDS asked about once per refresh window', async () => {
    rig.entra.tokenLifetimeS = 3;
    const DURATION = 6000;
    const started = Date.now();
    let ok = 0;
    const failed: string[] = [];
    const worker = async () => {
      while (Date.now() - started < DURATION) {
        try {
          await rig.t.client().chat.completions.create({ model: 'load', messages: [{ role: 'user', content: 'Hello!' }] });
          ok++;
        } catch (err) {
          failed.push(String(err));
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    rig.entra.tokenLifetimeS = 3600;
    expect(failed).toEqual([]);
    expect(ok).toBeGreaterThan(30);
    expect(rig.sent.every((s) => s.valid)).toBe(true);
    // Refreshed half-way through each token's life, behind the requests: ~DURATION / 1.5 s fetches.
    const fetched = rig.entra.requests.filter((r) => r.via === 'imds' && r.clientId === UNDER_LOAD && r.status === 200).length;
    expect(fetched).toBeGreaterThanOrEqual(3);
    expect(fetched).toBeLessThanOrEqual(Math.ceil(DURATION / 1500) + 2);
    expect(new Set(rig.sent.map((s) => s.token)).size).toBeGreaterThanOrEqual(3);
  }, 20_000);

  it('no token reaches a log line or /readyz', async () => {
    const text = JSON.stringify(await readyz()) + rig.t.logText();
    expect(rig.entra.tokens.length).toBeGreaterThan(0);
    for (const token of rig.entra.tokens) expect(text).not.toContain(token);
  });
});
