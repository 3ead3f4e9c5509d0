/**
 * Who the gateway is to Vertex AI: an OAuth access token from google-auth-library, kept fresh by
 * the kit's `refreshingCredential` (fetched once, refreshed ahead of expiry behind the requests,
 * the old token kept through a failed refresh until it expires), or an Express mode API key.
 *
 * `auth: { type: google }` alone is Application Default Credentials, the library's own chain:
 * GOOGLE_APPLICATION_CREDENTIALS, the gcloud ADC file, then the GCE/GKE metadata server (GKE
 * Workload Identity included). `credentialsFile` (a path from gateway.yaml's folder) or
 * `credentials` (the JSON text, e.g. `${file:...}`) name one credential instead: a service
 * account key, an `external_account` (Workload Identity Federation: an OIDC token file, AWS, an
 * executable), an `authorized_user`, or an `impersonated_service_account` (any of those
 * exchanging its token for a target service account's at the IAM Credentials API its
 * `service_account_impersonation_url` names). The library is imported here, when a provider is
 * prepared, so a gateway without a Vertex provider never loads it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { IdentityStatus, ProviderEnv, ProviderUnavailable } from 'switchyard-gateway';
import { describeFailure, refreshingCredential, type IssuedCredential } from 'switchyard-gateway/kit';
import type { AuthClient } from 'google-auth-library';

export type VertexAuth = GoogleAuthOption | ApiKeyAuthOption;

export interface GoogleAuthOption {
  type: 'google';
  /** A credentials JSON file, relative to gateway.yaml's folder. */
  credentialsFile?: string;
  /** The credentials JSON itself (e.g. `${file:/var/run/secrets/sa.json}`). */
  credentials?: string;
  /** Default: https://www.googleapis.com/auth/cloud-platform */
  scopes?: string[];
}

/** Vertex AI Express mode: an API key bound to a service account, no project or location. */
export interface ApiKeyAuthOption {
  type: 'api-key';
  key: string;
}

/** How each request is authorised, and what /readyz says about it. */
export interface VertexIdentity {
  headers(): Promise<Record<string, string>>;
  status(): IdentityStatus;
}

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * The `auth` option's schema, shared by the vertex and vertex-anthropic plugins: one object whose
 * `type` decides the other fields (so an error names the field that is wrong, not a branch).
 */
export function authSchema(options: { apiKey: boolean }): Record<string, unknown> {
  const google = { credentialsFile: { type: 'string', minLength: 1 }, credentials: { type: 'string', minLength: 1 }, scopes: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } };
  if (!options.apiKey) {
    return { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'google' }, ...google } };
  }
  return {
    type: 'object',
    additionalProperties: false,
    required: ['type'],
    properties: { type: { enum: ['google', 'api-key'] }, ...google, key: { type: 'string', minLength: 1 } },
    if: { properties: { type: { const: 'api-key' } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
    then: { required: ['key'] },
  };
}

/** Secret-bearing option paths, for `secretOptions` (scrubbed from every message and log line). */
export const AUTH_SECRETS = ['auth.key', 'auth.credentials'];

/**
 * The identity for one provider, resolved once per config generation. A credential that cannot
 * be read or is of a type we do not drive is `{ unavailable }` (the reason names the file or the
 * type, never the content); the first token is fetched here too, so a source that does not answer
 * is reported at startup, and requests fetch again (503 while none is valid).
 */
export async function prepareIdentity(auth: VertexAuth | undefined, env: ProviderEnv, settings: { project?: string } = {}): Promise<VertexIdentity | ProviderUnavailable> {
  checkAuthFields(auth);
  if (auth?.type === 'api-key') {
    const key = auth.key;
    return { headers: async () => ({ 'x-goog-api-key': key }), status: () => ({ source: 'api-key', refreshes: 0, failures: 0 }) };
  }
  const google = auth ?? { type: 'google' };
  const client = await googleClient(google, env, settings.project);
  if ('unavailable' in client) return client;
  const credential = refreshingCredential<string>({
    provider: env.name,
    source: client.source,
    fetch: (signal) => fetchToken(client.client, signal),
  });
  try {
    await credential.get();
  } catch (err) {
    env.log.warn({ source: client.source, reason: describeFailure(err) }, 'vertex: no access token yet; requests will try again');
  }
  // A user's credentials (and ADC with GOOGLE_CLOUD_QUOTA_PROJECT) name the project that pays:
  // Vertex wants it in x-goog-user-project, as Google's own clients send it.
  const quota = client.client.quotaProjectId;
  return {
    headers: async () => ({ authorization: `Bearer ${await credential.get()}`, ...(quota && { 'x-goog-user-project': quota }) }),
    status: () => credential.status(),
  };
}

/** Fields that belong to the other type, or two credentials at once: a config error naming them (the schema's own errors would name a branch). */
function checkAuthFields(auth: VertexAuth | undefined): void {
  const given = Object.keys(auth ?? {}).filter((k) => k !== 'type');
  const foreign = given.filter((k) => (auth?.type === 'api-key' ? k !== 'key' : k === 'key'));
  if (foreign.length) throw new Error(`auth.${foreign[0]} does not go with auth.type ${auth?.type}`);
  if (given.includes('credentialsFile') && given.includes('credentials')) throw new Error('auth.credentialsFile and auth.credentials both name a credential: give one');
}

interface GoogleClient {
  client: AuthClient;
  source: string;
}

async function googleClient(auth: GoogleAuthOption, env: ProviderEnv, project: string | undefined): Promise<GoogleClient | ProviderUnavailable> {
  const lib = await import('google-auth-library');
  const scopes = auth.scopes ?? [CLOUD_PLATFORM_SCOPE];
  let json: unknown;
  if (auth.credentialsFile !== undefined) {
    const file = path.resolve(env.configDir, auth.credentialsFile);
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      const reason = err instanceof SyntaxError ? 'it is not JSON' : ((err as NodeJS.ErrnoException).code ?? 'unreadable');
      return { unavailable: `auth.credentialsFile ${file} cannot be used: ${reason}` };
    }
  } else if (auth.credentials !== undefined) {
    try {
      json = JSON.parse(auth.credentials);
    } catch {
      return { unavailable: 'auth.credentials is not JSON (a service account key or an external_account configuration)' };
    }
  }
  if (json === undefined) {
    // Application Default Credentials. The project is given so the library does not go looking
    // for one (gcloud, the metadata server) before it answers.
    try {
      const client = await new lib.GoogleAuth({ scopes, projectId: project }).getClient();
      return { client, source: sourceOf(lib, client) };
    } catch (err) {
      return { unavailable: `no Google credentials found (Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, the gcloud ADC file, the metadata server): ${describeFailure(err)}` };
    }
  }
  return fromJson(lib, json, scopes);
}

type Library = typeof import('google-auth-library');

/**
 * A client for one credentials JSON, built with the constructor its type names (the library's
 * generic `fromJSON` warns on the console about untrusted configuration; ours is the operator's).
 */
function fromJson(lib: Library, json: unknown, scopes: string[]): GoogleClient | ProviderUnavailable {
  const made = clientFor(lib, json, scopes);
  const quota = (json as { quota_project_id?: unknown } | null)?.quota_project_id;
  if ('client' in made && typeof quota === 'string' && quota) made.client.quotaProjectId = quota;
  return made;
}

function clientFor(lib: Library, json: unknown, scopes: string[]): GoogleClient | ProviderUnavailable {
  const c = (json ?? {}) as Record<string, unknown>;
  const type = typeof c.type === 'string' ? c.type : undefined;
  try {
    switch (type) {
      case 'service_account':
        return {
          client: new lib.JWT({ email: String(c.client_email ?? ''), key: String(c.private_key ?? ''), keyId: typeof c.private_key_id === 'string' ? c.private_key_id : undefined, scopes }),
          source: 'google:service-account',
        };
      case 'authorized_user':
        return {
          client: new lib.UserRefreshClient({ clientId: String(c.client_id ?? ''), clientSecret: String(c.client_secret ?? ''), refreshToken: String(c.refresh_token ?? '') }),
          source: 'google:authorized-user',
        };
      case 'external_account': {
        const source = (c.credential_source ?? {}) as Record<string, unknown>;
        // biome-ignore lint/suspicious/noExplicitAny: the library types each client's options apart; the JSON is checked by the client itself
        const options = { ...c, scopes } as any;
        const client = source.environment_id ? new lib.AwsClient(options) : source.executable ? new lib.PluggableAuthClient(options) : new lib.IdentityPoolClient(options);
        return { client, source: 'google:external-account' };
      }
      case 'impersonated_service_account':
        return impersonated(lib, c, scopes);
      default:
        return {
          unavailable: `Google credentials of type ${type ?? '(none)'} are not supported here: use a service_account, external_account, authorized_user or impersonated_service_account JSON, or Application Default Credentials`,
        };
    }
  } catch (err) {
    return { unavailable: `the Google ${type} credentials cannot be used: ${describeFailure(err)}` };
  }
}

/** `…/v1/projects/-/serviceAccounts/{email}:generateAccessToken`: the API's base and the target. */
const IMPERSONATION_URL = /^(https?:\/\/[^/]+(?:\/[^?#]*?)?)\/v1\/projects\/[^/]+\/serviceAccounts\/([^/:?#]+):generateAccessToken$/;

/**
 * What `gcloud auth application-default login --impersonate-service-account` writes: source
 * credentials (a user's, a service account key, an external account) whose token buys the
 * target's at the IAM Credentials API. The library's own reading of this JSON keeps only the
 * target from the URL and calls Google's fixed host; here the URL is taken whole (the same host
 * for Google's own files), so a private endpoint or an emulator is honoured.
 */
function impersonated(lib: Library, c: Record<string, unknown>, scopes: string[]): GoogleClient | ProviderUnavailable {
  const url = typeof c.service_account_impersonation_url === 'string' ? IMPERSONATION_URL.exec(c.service_account_impersonation_url) : null;
  if (!url) return { unavailable: 'the impersonated_service_account credentials have no service_account_impersonation_url ending in /v1/projects/-/serviceAccounts/{email}:generateAccessToken' };
  const sourceType = (c.source_credentials as { type?: unknown } | undefined)?.type;
  if (sourceType === 'impersonated_service_account') return { unavailable: 'impersonated_service_account credentials cannot take another impersonation as their source: list the chain in delegates' };
  // The source needs cloud-platform to call the IAM Credentials API, whatever the target's scopes.
  const source = clientFor(lib, c.source_credentials, [CLOUD_PLATFORM_SCOPE]);
  if ('unavailable' in source) return { unavailable: `the impersonated_service_account's source credentials: ${source.unavailable}` };
  const delegates = Array.isArray(c.delegates) ? c.delegates.filter((d): d is string => typeof d === 'string') : [];
  const options = { sourceClient: source.client, targetPrincipal: decodeURIComponent(url[2]), delegates, targetScopes: scopes, endpoint: url[1] };
  return { client: withoutConsoleWarning(() => new lib.Impersonated(options)), source: 'google:impersonated-service-account' };
}

/**
 * Runs a constructor that warns on the console about credential files from untrusted sources
 * (google-auth-library does for Impersonated); the gateway's credentials are its operator's, and
 * its log lines go through its own logger.
 */
function withoutConsoleWarning<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = () => {};
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

/** The identity source's stable name, from the client the library chose. */
function sourceOf(lib: Library, client: AuthClient): string {
  if (client instanceof lib.JWT) return 'google:service-account';
  if (client instanceof lib.Compute) return 'google:metadata-server';
  if (client instanceof lib.BaseExternalAccountClient) return 'google:external-account';
  if (client instanceof lib.UserRefreshClient) return 'google:authorized-user';
  if (client instanceof lib.Impersonated) return 'google:impersonated-service-account';
  return `google:${client.constructor.name}`;
}

/** One new access token and its expiry. The library refreshes when its cached token is near expiry, which is when we ask. */
async function fetchToken(client: AuthClient, signal: AbortSignal): Promise<IssuedCredential<string>> {
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(new Error(`the token request took longer than the timeout`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  const { token } = await Promise.race([client.getAccessToken(), aborted]);
  if (!token) throw new Error('the token endpoint answered no access token');
  const expiry = client.credentials?.expiry_date;
  return { value: token, expiresAt: typeof expiry === 'number' && expiry > 0 ? expiry : undefined };
}
