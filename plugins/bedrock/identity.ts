/**
 * Who the gateway is to Bedrock: the `auth` option → something that authorizes one request.
 *
 * - `aws`: the AWS SDK's default Node chain (`fromNodeProviderChain`: environment, SSO and shared
 *   config/credentials profiles with `source_profile`/`role_arn` or `credential_process`, web identity / IRSA token file,
 *   ECS and EKS Pod Identity container credentials, IMDSv2), optionally a named profile;
 * - `aws-keys`: keys given in the config (or, with no `auth`, the top-level keys or the
 *   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY variables, as before);
 * - either, followed by `assumeRole` (STS AssumeRole with the first as master credentials),
 *   with no session policy: the role's own policies decide what it may do;
 * - `api-key`: a Bedrock API key, sent as `Authorization: Bearer`, no SigV4.
 *
 * Temporary credentials are kept fresh by the kit's `refreshingCredential`; the AWS library is
 * imported here only when a provider needs it, so a gateway without Bedrock never loads it.
 */
import type { IdentityStatus, ProviderUnavailable } from 'switchyard-gateway';
import { refreshingCredential, type IssuedCredential } from 'switchyard-gateway/kit';
import { resolveCredentials, type AwsCredentials } from './sign.ts';

/** Credentials as the AWS SDK's providers give them (@smithy/types' SdkCredentials). */
interface SdkCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}
/** The SDK providers take identity properties; the memoized chain reads `forceRefresh` among them. */
type SdkCredentialProvider = (options?: object) => Promise<SdkCredentials>;

export interface AssumeRoleOptions {
  roleArn: string;
  externalId?: string;
  /** Default `switchyard-<provider>`. */
  sessionName?: string;
  /** 900–43200 (default: STS's own, one hour). */
  durationSeconds?: number;
}

export type BedrockAuth =
  | { type: 'aws'; profile?: string; assumeRole?: AssumeRoleOptions }
  | { type: 'aws-keys'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; assumeRole?: AssumeRoleOptions }
  | { type: 'api-key'; key: string };

/** How one request is authorized: SigV4 with the current credentials, or a bearer key. */
export type Authorizer = { kind: 'sigv4'; credentials(): Promise<AwsCredentials>; status(): IdentityStatus } | { kind: 'bearer'; key: string; status(): IdentityStatus };

export interface IdentityContext {
  /** The provider's name in gateway.yaml. */
  provider: string;
  region: string;
  /** Top-level keys (the options before `auth` existed). */
  keys: { accessKeyId?: string; secretAccessKey?: string; sessionToken?: string };
  /** Refresh this long before expiry (tests shorten it). */
  refreshAheadMs?: number;
  retryAfterFailureMs?: number;
}

export const ASSUME_ROLE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['roleArn'],
  properties: {
    roleArn: { type: 'string', pattern: '^arn:aws[a-z-]*:iam::' },
    externalId: { type: 'string', minLength: 2, maxLength: 1224 },
    sessionName: { type: 'string', pattern: '^[\\w+=,.@-]{2,64}$' },
    durationSeconds: { type: 'integer', minimum: 900, maximum: 43200 },
  },
} as const;

/** Lets a JSON schema check the `auth` option (the same shape as the other clouds'). */
export const AUTH_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { const: 'aws' }, profile: { type: 'string', minLength: 1 }, assumeRole: ASSUME_ROLE_SCHEMA },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'accessKeyId', 'secretAccessKey'],
      properties: {
        type: { const: 'aws-keys' },
        accessKeyId: { type: 'string', minLength: 1 },
        secretAccessKey: { type: 'string', minLength: 1 },
        sessionToken: { type: 'string', minLength: 1 },
        assumeRole: ASSUME_ROLE_SCHEMA,
      },
    },
    { type: 'object', additionalProperties: false, required: ['type', 'key'], properties: { type: { const: 'api-key' }, key: { type: 'string', minLength: 1 } } },
  ],
} as const;

/** The authorizer for the options, or why the provider cannot serve. */
export async function authorizerFor(auth: BedrockAuth | undefined, ctx: IdentityContext, env: NodeJS.ProcessEnv = process.env): Promise<Authorizer | ProviderUnavailable> {
  if (auth?.type === 'api-key') {
    const status: IdentityStatus = { source: 'api-key', refreshes: 0, failures: 0 };
    return { kind: 'bearer', key: auth.key, status: () => status };
  }
  if (!auth) {
    // As before `auth` existed: the top-level keys, else the environment's, resolved once.
    const keys = resolveCredentials(ctx.keys, env);
    if ('missing' in keys) return { unavailable: keys.missing };
    const source = ctx.keys.accessKeyId ? 'aws:keys' : 'aws:environment';
    const status: IdentityStatus = { source, refreshes: 1, failures: 0 };
    return { kind: 'sigv4', credentials: async () => keys, status: () => status };
  }
  const { fromNodeProviderChain, fromTemporaryCredentials } = await import('@aws-sdk/credential-providers');
  const base: SdkCredentialProvider =
    auth.type === 'aws-keys'
      ? async () => ({ accessKeyId: auth.accessKeyId, secretAccessKey: auth.secretAccessKey, ...(auth.sessionToken ? { sessionToken: auth.sessionToken } : {}) })
      : fromNodeProviderChain({ ...(auth.profile ? { profile: auth.profile } : {}), clientConfig: { region: ctx.region } });
  const baseSource = auth.type === 'aws-keys' ? 'aws:keys' : 'aws';
  const role = auth.assumeRole;
  const provider: SdkCredentialProvider = role
    ? fromTemporaryCredentials({
        // No `Policy`: a session policy would narrow the role below what its own policies allow.
        params: {
          RoleArn: role.roleArn,
          RoleSessionName: role.sessionName ?? `switchyard-${ctx.provider}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64),
          ...(role.externalId ? { ExternalId: role.externalId } : {}),
          ...(role.durationSeconds ? { DurationSeconds: role.durationSeconds } : {}),
        },
        masterCredentials: base,
        clientConfig: { region: ctx.region },
      })
    : base;
  const credential = refreshingCredential<AwsCredentials>({
    provider: ctx.provider,
    source: role ? 'aws:assume-role' : baseSource,
    refreshAheadMs: ctx.refreshAheadMs,
    retryAfterFailureMs: ctx.retryAfterFailureMs,
    // forceRefresh: the chain's own cache would otherwise answer the keys it holds while it
    // refreshes behind, hiding a failed refresh; when to refresh is decided here.
    fetch: async () => issued(await provider({ forceRefresh: true }), role ? 'aws:assume-role' : auth.type === 'aws-keys' ? 'aws:keys' : undefined, env),
  });
  return { kind: 'sigv4', credentials: () => credential.get(), status: () => credential.status() };
}

function issued(c: SdkCredentials, forced: string | undefined, env: NodeJS.ProcessEnv): IssuedCredential<AwsCredentials> {
  const value: AwsCredentials = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}) };
  return { value, expiresAt: c.expiration?.getTime(), source: forced ?? sourceOf(c, env) };
}

/**
 * Which link of the chain answered, from the feature marks the SDK sets on the credentials it
 * returns (`$source`, the keys of @aws-sdk/types' AwsSdkCredentialsFeatures); the most specific
 * mark wins (a profile whose role is assumed with a web identity token is `aws:web-identity`).
 * The chain's last link (container metadata, else IMDS) marks nothing: which one ran is what
 * the environment says, as it says to the chain.
 */
export function sourceOf(credentials: SdkCredentials, env: NodeJS.ProcessEnv = process.env): string {
  const marks = Object.keys((credentials as { $source?: Record<string, unknown> }).$source ?? {});
  const has = (...names: string[]) => names.some((n) => marks.includes(n));
  if (has('CREDENTIALS_STS_ASSUME_ROLE_WEB_ID', 'CREDENTIALS_ENV_VARS_STS_WEB_ID_TOKEN', 'CREDENTIALS_PROFILE_STS_WEB_ID_TOKEN')) return 'aws:web-identity';
  if (has('CREDENTIALS_SSO', 'CREDENTIALS_SSO_LEGACY', 'CREDENTIALS_PROFILE_SSO', 'CREDENTIALS_PROFILE_SSO_LEGACY')) return 'aws:sso';
  if (has('CREDENTIALS_HTTP')) return 'aws:container';
  if (has('CREDENTIALS_IMDS')) return 'aws:imds';
  if (has('CREDENTIALS_PROCESS', 'CREDENTIALS_PROFILE_PROCESS')) return 'aws:process';
  if (marks.some((m) => m.startsWith('CREDENTIALS_PROFILE')) || has('CREDENTIALS_LOGIN')) return 'aws:profile';
  if (has('CREDENTIALS_ENV_VARS')) return 'aws:environment';
  if (marks.length) return 'aws';
  return env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI ? 'aws:container' : 'aws:imds';
}
