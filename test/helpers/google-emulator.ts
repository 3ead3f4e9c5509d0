/**
 * Google's identity endpoints on 127.0.0.1, for google-auth-library to fetch real tokens from:
 *
 * - the OAuth 2.0 token endpoint (`POST /token`, grant jwt-bearer): verifies the service
 *   account's signed JWT assertion (RS256 with a key pair generated here; iss, aud, scope, iat,
 *   exp and the signature) and answers a short-lived access token;
 * - the GCE/GKE metadata server (`/computeMetadata/v1/...`, reached through GCE_METADATA_HOST):
 *   `Metadata-Flavor: Google` required, as the real one does; the default service account's token;
 * - STS (`POST /v1/token`, the token exchange of Workload Identity Federation): verifies the OIDC
 *   subject token (signed here by a fake identity provider) and its audience, or an AWS-signed
 *   GetCallerIdentity request (WIF from AWS) through the AWS emulator's signature check;
 * - the IAM Credentials API (`POST /v1/projects/-/serviceAccounts/{email}:generateAccessToken`,
 *   service account impersonation): takes only a live token issued here as the caller's, and a
 *   target that granted it Token Creator.
 *
 * Every access token issued is remembered with its expiry, so a fake Vertex upstream accepts only
 * one that is currently valid (`valid`). The service account JWT's endpoint is a fixed https URL
 * in the library (no override), so `routeGoogleOAuth` (google-wiring.ts) sends connections for
 * oauth2.googleapis.com to this server instead, through Node's https global agent (what the
 * library's fetch uses): the library's request itself is unchanged.
 */
import { createSign, createVerify, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
export const WIF_AUDIENCE = '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/gke/providers/oidc';
const IDP_ISSUER = 'https://idp.emulator.test';
const AWS_SUBJECT = 'urn:ietf:params:aws:token-type:aws4_request';

export type TokenSource = 'service-account' | 'authorized-user' | 'metadata-server' | 'external-account' | 'impersonated';

/** One generateAccessToken call the IAM Credentials API answered. */
export interface Impersonation {
  target: string;
  /** Where the caller's token came from. */
  by: TokenSource;
  scope: string[];
  delegates: string[];
  lifetime: string;
}

export interface IssuedToken {
  token: string;
  source: TokenSource;
  expiresAt: number;
}

export interface GoogleEmulator {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** host:port, for GCE_METADATA_HOST. */
  readonly host: string;
  /** Lifetime of the access tokens issued from now on (seconds; default 3600). */
  lifetimeSeconds: number;
  /** While set, every token endpoint answers this failure instead. */
  failWith: { status: number; body: Record<string, string> } | undefined;
  /** Token requests by endpoint, accepted or not. */
  readonly calls: Record<TokenSource, number>;
  /** Why requests were refused (the test prints them when a call fails). */
  readonly refusals: string[];
  readonly issued: IssuedToken[];
  /** The OIDC subject tokens STS accepted, each once (a rotated token file shows up here). */
  readonly subjects: Set<string>;
  /** A service account key JSON whose private key is one generated here. */
  serviceAccount(email?: string): Record<string, string>;
  /** A gcloud `authorized_user` ADC JSON (a user's refresh token) the token endpoint accepts. */
  authorizedUser(): Record<string, string>;
  /** An OIDC token from the fake identity provider (for a credential_source file). */
  oidcToken(audience?: string, lifetimeSeconds?: number): string;
  /** The impersonated_service_account JSON (as gcloud writes it) whose source credentials buy `target`'s token here. */
  impersonatedServiceAccount(target: string, source: Record<string, unknown>): Record<string, unknown>;
  readonly impersonations: Impersonation[];
  /** The external_account JSON (environment_id aws1) whose AWS credentials come from the IMDS at `imdsUrl`. */
  externalAccountFromAws(imdsUrl: string): Record<string, unknown>;
  /**
   * Checks an AWS-signed GetCallerIdentity request (the subject token of WIF from AWS), as STS
   * does by sending it to AWS: set by a test to the AWS emulator's check. Undefined: refused.
   */
  verifyAws: ((signed: { url: string; method: string; headers: Record<string, string> }) => Promise<string | undefined>) | undefined;
  /** AWS subject tokens STS accepted. */
  awsExchanges: number;
  /** The external_account JSON that exchanges the token in `tokenFile` at this STS. */
  externalAccount(tokenFile: string): Record<string, unknown>;
  /** The token is one issued here and not expired. */
  valid(token: string | undefined): IssuedToken | undefined;
  start(): Promise<void>;
  close(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function signJwt(payload: Record<string, unknown>, key: KeyObject, kid?: string): string {
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(kid && { kid }) }));
  const body = b64url(JSON.stringify(payload));
  const signature = createSign('RSA-SHA256').update(`${head}.${body}`).sign(key);
  return `${head}.${body}.${b64url(signature)}`;
}

/** The claims of an RS256 JWT signed by `key`, or why not. */
function verifyJwt(jwt: string, key: KeyObject): { claims: Record<string, unknown> } | { refused: string } {
  const parts = jwt.split('.');
  if (parts.length !== 3) return { refused: 'not a JWT' };
  const [head, body, signature] = parts;
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { refused: 'JWT parts are not JSON' };
  }
  if (header.alg !== 'RS256') return { refused: `alg ${String(header.alg)}` };
  if (!createVerify('RSA-SHA256').update(`${head}.${body}`).verify(key, Buffer.from(signature, 'base64url'))) return { refused: 'bad signature' };
  return { claims };
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return new URLSearchParams(Buffer.concat(parts).toString('utf8'));
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function googleEmulator(): GoogleEmulator {
  const saKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const idpKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(8).toString('hex');
  const accounts = new Set<string>();
  const tokens = new Map<string, IssuedToken>();
  const calls: Record<TokenSource, number> = { 'service-account': 0, 'authorized-user': 0, 'metadata-server': 0, 'external-account': 0, impersonated: 0 };
  const impersonations: Impersonation[] = [];
  const refreshTokens = new Map<string, { clientId: string; clientSecret: string }>();
  const refusals: string[] = [];
  const issued: IssuedToken[] = [];
  const subjects = new Set<string>();
  let url = '';
  let host = '';

  const emulator: GoogleEmulator = {
    get url() {
      return url;
    },
    get host() {
      return host;
    },
    lifetimeSeconds: 3600,
    failWith: undefined,
    calls,
    refusals,
    issued,
    subjects,
    serviceAccount(email = 'gateway@switchyard-test.iam.gserviceaccount.com') {
      accounts.add(email);
      return {
        type: 'service_account',
        project_id: 'switchyard-test',
        private_key_id: keyId,
        private_key: saKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: email,
        client_id: '100000000000000000001',
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: GOOGLE_TOKEN_URL,
        universe_domain: 'googleapis.com',
      };
    },
    authorizedUser() {
      const user = {
        type: 'authorized_user',
        quota_project_id: 'switchyard-billing',
        client_id: '764086051850-emulator.apps.googleusercontent.com',
        client_secret: `d-${randomBytes(12).toString('hex')}`,
        refresh_token: `1//${randomBytes(24).toString('base64url')}`,
      };
      refreshTokens.set(user.refresh_token, { clientId: user.client_id, clientSecret: user.client_secret });
      return user;
    },
    oidcToken(audience = WIF_AUDIENCE, lifetimeSeconds = 3600) {
      const now = Math.floor(Date.now() / 1000);
      return signJwt({ iss: IDP_ISSUER, sub: 'system:serviceaccount:ai:switchyard', aud: audience, iat: now, exp: now + lifetimeSeconds }, idpKeys.privateKey);
    },
    impersonations,
    impersonatedServiceAccount(target, source) {
      accounts.add(target);
      return {
        type: 'impersonated_service_account',
        service_account_impersonation_url: `${url}/v1/projects/-/serviceAccounts/${target}:generateAccessToken`,
        delegates: [],
        source_credentials: source,
      };
    },
    verifyAws: undefined,
    awsExchanges: 0,
    externalAccountFromAws(imdsUrl) {
      return {
        type: 'external_account',
        audience: WIF_AUDIENCE,
        subject_token_type: AWS_SUBJECT,
        token_url: `${url}/v1/token`,
        credential_source: {
          environment_id: 'aws1',
          region_url: `${imdsUrl}/latest/meta-data/placement/availability-zone`,
          url: `${imdsUrl}/latest/meta-data/iam/security-credentials`,
          imdsv2_session_token_url: `${imdsUrl}/latest/api/token`,
          regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15',
        },
      };
    },
    externalAccount(tokenFile) {
      return {
        type: 'external_account',
        audience: WIF_AUDIENCE,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: `${url}/v1/token`,
        credential_source: { file: tokenFile },
      };
    },
    valid(token) {
      const found = token ? tokens.get(token) : undefined;
      return found && Date.now() < found.expiresAt ? found : undefined;
    },
    start,
    close,
  };

  function issue(source: TokenSource): { access_token: string; expires_in: number; token_type: 'Bearer' } {
    const token = `ya29.emulator-${randomBytes(24).toString('base64url')}`;
    const record = { token, source, expiresAt: Date.now() + emulator.lifetimeSeconds * 1000 };
    tokens.set(token, record);
    issued.push(record);
    return { access_token: token, expires_in: emulator.lifetimeSeconds, token_type: 'Bearer' };
  }

  function refuse(res: ServerResponse, status: number, error: string, why: string): void {
    refusals.push(why);
    json(res, status, { error, error_description: why });
  }

  /** POST /token: the service account's JWT bearer grant (RFC 7523), as Google checks it; or a user's refresh token. */
  async function oauthToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await formOf(req);
    if (form.get('grant_type') === 'refresh_token') return userToken(form, res);
    calls['service-account']++;
    if (emulator.failWith) return json(res, emulator.failWith.status, emulator.failWith.body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(res, 400, 'unsupported_grant_type', `grant_type ${form.get('grant_type')}`);
    const checked = verifyJwt(form.get('assertion') ?? '', saKeys.publicKey);
    if ('refused' in checked) return refuse(res, 400, 'invalid_grant', `assertion: ${checked.refused}`);
    const { iss, aud, scope, iat, exp } = checked.claims;
    const now = Math.floor(Date.now() / 1000);
    if (typeof iss !== 'string' || !accounts.has(iss)) return refuse(res, 400, 'invalid_grant', `unknown iss ${String(iss)}`);
    if (aud !== GOOGLE_TOKEN_URL) return refuse(res, 400, 'invalid_grant', `aud ${String(aud)}`);
    if (typeof scope !== 'string' || !scope.split(' ').includes(CLOUD_PLATFORM)) return refuse(res, 400, 'invalid_scope', `scope ${String(scope)}`);
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + 60 || exp <= now || exp - iat > 3600) return refuse(res, 400, 'invalid_grant', `iat ${String(iat)} exp ${String(exp)}`);
    json(res, 200, issue('service-account'));
  }

  function userToken(form: URLSearchParams, res: ServerResponse): void {
    calls['authorized-user']++;
    const client = refreshTokens.get(form.get('refresh_token') ?? '');
    if (emulator.failWith) json(res, emulator.failWith.status, emulator.failWith.body);
    else if (!client) refuse(res, 400, 'invalid_grant', 'unknown refresh token');
    else if (form.get('client_id') !== client.clientId || form.get('client_secret') !== client.clientSecret) refuse(res, 401, 'invalid_client', 'client id or secret');
    else json(res, 200, { ...issue('authorized-user'), scope: CLOUD_PLATFORM });
  }

  /** The metadata server: refuses a request without `Metadata-Flavor: Google`, and says so in its answers. */
  function metadata(req: IncomingMessage, res: ServerResponse, path: string): void {
    const flavor = { 'metadata-flavor': 'Google' };
    if (req.headers['metadata-flavor'] !== 'Google') {
      refusals.push(`metadata ${path} without Metadata-Flavor: Google`);
      res.writeHead(403, { 'content-type': 'text/html', ...flavor });
      res.end('Missing required header "Metadata-Flavor": "Google"');
      return;
    }
    if (path === '/computeMetadata/v1/instance' || path === '/computeMetadata/v1/instance/') {
      res.writeHead(200, { 'content-type': 'application/text', ...flavor });
      res.end('attributes/\nid\nservice-accounts/\n');
      return;
    }
    if (path === '/computeMetadata/v1/instance/service-accounts/default/token') {
      calls['metadata-server']++;
      if (emulator.failWith) json(res, emulator.failWith.status, emulator.failWith.body, flavor);
      else json(res, 200, issue('metadata-server'), flavor);
      return;
    }
    refusals.push(`metadata ${path}: not emulated`);
    res.writeHead(404, { 'content-type': 'text/html', ...flavor });
    res.end('Not Found');
  }

  /** POST /v1/token: STS token exchange (RFC 8693) for a workload identity pool. */
  async function sts(req: IncomingMessage, res: ServerResponse): Promise<void> {
    calls['external-account']++;
    const form = await formOf(req);
    if (emulator.failWith) return json(res, emulator.failWith.status, emulator.failWith.body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') return refuse(res, 400, 'unsupported_grant_type', `grant_type ${form.get('grant_type')}`);
    if (form.get('audience') !== WIF_AUDIENCE) return refuse(res, 400, 'invalid_target', `audience ${form.get('audience')}`);
    if (!(form.get('scope') ?? '').split(' ').includes(CLOUD_PLATFORM)) return refuse(res, 400, 'invalid_scope', `scope ${form.get('scope')}`);
    if (form.get('subject_token_type') === AWS_SUBJECT) {
      const refused = await checkAwsSubject(form.get('subject_token') ?? '');
      if (refused) return refuse(res, 400, 'invalid_grant', `aws subject_token: ${refused}`);
      emulator.awsExchanges++;
      return json(res, 200, { ...issue('external-account'), issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    }
    if (form.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:jwt') return refuse(res, 400, 'invalid_request', `subject_token_type ${form.get('subject_token_type')}`);
    const checked = verifyJwt(form.get('subject_token') ?? '', idpKeys.publicKey);
    if ('refused' in checked) return refuse(res, 400, 'invalid_grant', `subject_token: ${checked.refused}`);
    const { iss, aud, exp } = checked.claims;
    if (iss !== IDP_ISSUER || aud !== WIF_AUDIENCE || typeof exp !== 'number' || exp <= Date.now() / 1000) return refuse(res, 400, 'invalid_grant', 'subject_token claims');
    subjects.add(form.get('subject_token')!);
    const answer = issue('external-account');
    json(res, 200, { ...answer, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
  }

  /** The IAM Credentials API's generateAccessToken: the caller's live token buys the target's. */
  async function generateAccessToken(req: IncomingMessage, res: ServerResponse, target: string): Promise<void> {
    calls.impersonated++;
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as { scope?: string[]; delegates?: string[]; lifetime?: string };
    const caller = emulator.valid(/^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1]);
    const error = (status: number, why: string) => {
      refusals.push(why);
      json(res, status, { error: { code: status, message: why, status: status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED' } });
    };
    if (emulator.failWith) return json(res, emulator.failWith.status, emulator.failWith.body);
    if (!caller) return error(401, 'generateAccessToken: the caller has no valid access token');
    if (!accounts.has(target)) return error(403, `generateAccessToken: ${target} does not let the caller create its tokens`);
    if (!Array.isArray(body.scope) || !body.scope.includes(CLOUD_PLATFORM)) return error(400, `generateAccessToken: scope ${JSON.stringify(body.scope)}`);
    impersonations.push({ target, by: caller.source, scope: body.scope, delegates: body.delegates ?? [], lifetime: body.lifetime ?? '' });
    const { access_token, expires_in } = issue('impersonated');
    json(res, 200, { accessToken: access_token, expireTime: new Date(Date.now() + expires_in * 1000).toISOString() });
  }

  /**
   * WIF from AWS: the subject token is a serialized, signed STS GetCallerIdentity request naming
   * the pool provider in x-goog-cloud-target-resource; Google has AWS run it.
   */
  async function checkAwsSubject(token: string): Promise<string | undefined> {
    let signed: { url?: string; method?: string; headers?: Array<{ key: string; value: string }> };
    try {
      signed = JSON.parse(decodeURIComponent(token));
    } catch {
      return 'not a serialized request';
    }
    const target = new URL(signed.url ?? 'x:');
    const headers = Object.fromEntries((signed.headers ?? []).map((h) => [h.key.toLowerCase(), h.value]));
    if (signed.method !== 'POST' || !/^sts\.[a-z0-9-]+\.amazonaws\.com$/.test(target.hostname) || target.searchParams.get('Action') !== 'GetCallerIdentity')
      return `not a regional GetCallerIdentity: ${signed.method} ${signed.url}`;
    // google-auth-library adds the header after signing (Google recommends, not requires, signing it).
    if (headers['x-goog-cloud-target-resource'] !== WIF_AUDIENCE) return `x-goog-cloud-target-resource ${headers['x-goog-cloud-target-resource']}`;
    if (!emulator.verifyAws) return 'no AWS to verify it with';
    return emulator.verifyAws({ url: signed.url ?? '', method: signed.method, headers });
  }

  const server: Server = createServer((req, res) => {
    const impersonate = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/.exec((req.url ?? '').split('?')[0]);
    if (req.method === 'POST' && impersonate) {
      generateAccessToken(req, res, decodeURIComponent(impersonate[1])).catch((err: unknown) => json(res, 500, { error: { code: 500, message: String(err) } }));
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    const handled =
      req.method === 'POST' && path === '/token'
        ? oauthToken(req, res)
        : req.method === 'POST' && path === '/v1/token'
          ? sts(req, res)
          : path.startsWith('/computeMetadata/')
            ? Promise.resolve(metadata(req, res, path))
            : Promise.resolve(refuse(res, 404, 'not_found', `${req.method} ${path}: not emulated`));
    handled.catch((err: unknown) => json(res, 500, { error: 'emulator_error', error_description: String(err) }));
  });

  async function start(): Promise<void> {
    if (url) return;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    host = `127.0.0.1:${port}`;
    url = `http://${host}`;
  }

  async function close(): Promise<void> {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  return emulator;
}

export { routeGoogleOAuth, useGoogleEmulator } from './google-wiring.ts';
