/**
 * Azure managed identity in Cloud Shell (and hosts that expose the same MSI_ENDPOINT), through the
 * real `@azure/identity` and MSAL: the library POSTs the resource as a form with `Metadata: true`
 * to MSI_ENDPOINT, here the Entra emulator on loopback. Cloud Shell has only its system-assigned
 * identity, which the DefaultAzureCredential chain reaches (the library refuses a user-assigned
 * one there when the provider is built: a config error naming it).
 */
import { describe, expect, it } from 'vitest';
import { useManagedIdentity } from '../helpers/azure-managed-identity.ts';

const rig = useManagedIdentity({
  env: (entra) => ({ MSI_ENDPOINT: entra.cloudShellEndpoint }),
  auth: { shell: {} },
});

// biome-ignore lint/suspicious/noExplicitAny: /readyz as JSON
const readyz = async (): Promise<any> => (await fetch(`${rig.t.url}/readyz`)).json();

describe('managed identity through Cloud Shell (MSI_ENDPOINT)', () => {
  it('the chain gets the token by a form POST to MSI_ENDPOINT; a chat and a stream are served with it', async () => {
    const { text } = await rig.chatAndStream('shell');
    expect(text.length).toBeGreaterThan(0);
    expect(rig.entra.requests.filter((r) => r.via === 'cloud-shell')).toEqual([
      expect.objectContaining({ status: 200, clientId: '(system-assigned)', scopeOrResource: 'https://cognitiveservices.azure.com' }),
    ]);
    expect(rig.sent.length).toBe(2);
    expect(rig.sent.every((s) => s.valid)).toBe(true);
    expect((await readyz()).providers.shell).toMatchObject({ status: 'ready', identity: { source: 'azure:default-chain', refreshes: 1, failures: 0 } });
  });
});
