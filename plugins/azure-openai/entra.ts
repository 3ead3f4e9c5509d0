/**
 * Entra ID (Azure AD) tokens for Azure OpenAI / AI Foundry, through `@azure/identity` (loaded
 * only when a provider asks for Entra). Which credential is used follows from the fields present
 * in `auth` (README "Azure OpenAI with Entra ID"):
 *
 * - `clientSecret` → a service principal's secret (ClientSecretCredential), with tenantId and clientId;
 * - `certificateFile` → a service principal's certificate, a PEM with the private key (ClientCertificateCredential), with tenantId and clientId;
 * - `federatedTokenFile` → workload identity federation (WorkloadIdentityCredential: AKS
 *   workload identity projects the file and sets AZURE_TENANT_ID / AZURE_CLIENT_ID, read when
 *   tenantId / clientId are absent);
 * - `managedIdentityClientId` → a user-assigned managed identity (ManagedIdentityCredential);
 * - none of these → DefaultAzureCredential: environment, workload identity, managed identity
 *   (system-assigned, or `clientId`'s), then the developer tools' sign-ins.
 *
 * The token is kept by the kit's `refreshingCredential` (fetched once, refreshed ahead of expiry
 * behind the requests, the old one kept on a failed refresh until it expires).
 */
import path from 'node:path';
import type { AccessToken, TokenCredential } from '@azure/identity';
import { refreshingCredential, type RefreshingCredential } from 'switchyard-gateway/kit';

/** `auth: { type: entra, ... }` in gateway.yaml. */
export interface EntraAuth {
  type: 'entra';
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** A PEM file holding the certificate and its private key; relative to gateway.yaml's folder. */
  certificateFile?: string;
  managedIdentityClientId?: string;
  /** A federated (e.g. Kubernetes service account) token file; relative to gateway.yaml's folder. */
  federatedTokenFile?: string;
  /** Another cloud's or an emulator's authority (default the library's, the public cloud's); instance discovery is then off. */
  authorityHost?: string;
  /** Default DEFAULT_SCOPE. */
  scope?: string;
}

export const DEFAULT_SCOPE = 'https://cognitiveservices.azure.com/.default';

export type EntraSource = 'azure:client-secret' | 'azure:client-certificate' | 'azure:workload-identity' | 'azure:managed-identity' | 'azure:default-chain';

/** The fields that each pick one credential: at most one may be present. */
const PICKS = [
  ['clientSecret', 'azure:client-secret'],
  ['certificateFile', 'azure:client-certificate'],
  ['federatedTokenFile', 'azure:workload-identity'],
  ['managedIdentityClientId', 'azure:managed-identity'],
] as const;

/** Which credential `auth` picks; throws (a config error) when it picks two or lacks what one needs. */
export function entraSourceOf(auth: EntraAuth): EntraSource {
  const present = PICKS.filter(([field]) => auth[field] !== undefined);
  if (present.length > 1) throw new Error(`auth: ${present.map(([f]) => f).join(' and ')} each pick a different credential: keep one`);
  if (present.length === 0) return 'azure:default-chain';
  const [field, source] = present[0];
  if ((field === 'clientSecret' || field === 'certificateFile') && !(auth.tenantId && auth.clientId)) {
    throw new Error(`auth: ${field} needs tenantId and clientId (the app registration's)`);
  }
  return source;
}

type IdentityLibrary = typeof import('@azure/identity');

/** The library's credential for `auth` (nothing is fetched yet). */
export function makeCredential(library: IdentityLibrary, auth: EntraAuth, configDir: string): TokenCredential {
  const source = entraSourceOf(auth);
  // A named authority is taken as given: instance discovery would ask the public cloud about it.
  // No retries inside the library: refreshingCredential decides when to try again, and a request
  // waiting on an expired token gets its 503 at once rather than after the library's backoff.
  const common = { retryOptions: { maxRetries: 0 } };
  const authority = auth.authorityHost ? { ...common, authorityHost: auth.authorityHost, disableInstanceDiscovery: true } : common;
  const file = (name: string) => path.resolve(configDir, name);
  switch (source) {
    case 'azure:client-secret':
      return new library.ClientSecretCredential(auth.tenantId!, auth.clientId!, auth.clientSecret!, authority);
    case 'azure:client-certificate':
      return new library.ClientCertificateCredential(auth.tenantId!, auth.clientId!, { certificatePath: file(auth.certificateFile!) }, authority);
    case 'azure:workload-identity':
      return new library.WorkloadIdentityCredential({ ...authority, tenantId: auth.tenantId, clientId: auth.clientId, tokenFilePath: file(auth.federatedTokenFile!) });
    case 'azure:managed-identity':
      // The library's own IMDS retries stay: IMDS answers 410 for a while after a host update.
      return new library.ManagedIdentityCredential({ clientId: auth.managedIdentityClientId! });
    case 'azure:default-chain':
      return new library.DefaultAzureCredential({
        ...authority,
        tenantId: auth.tenantId,
        ...(auth.clientId && { managedIdentityClientId: auth.clientId, workloadIdentityClientId: auth.clientId }),
      });
  }
}

/** The provider's token, kept fresh; `@azure/identity` is imported here, on first use. */
export async function entraToken(provider: string, auth: EntraAuth, configDir: string): Promise<RefreshingCredential<string>> {
  const source = entraSourceOf(auth);
  const credential = makeCredential(await import('@azure/identity'), auth, configDir);
  const scope = auth.scope ?? DEFAULT_SCOPE;
  return refreshingCredential({
    provider,
    source,
    async fetch(signal) {
      const token: AccessToken | null = await credential.getToken(scope, { abortSignal: signal });
      if (!token) throw new Error(`${source} gave no token for ${scope}`);
      return { value: token.token, expiresAt: token.expiresOnTimestamp };
    },
  });
}
