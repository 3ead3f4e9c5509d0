/**
 * Microsoft Entra ID on loopback, for tests of Entra auth through the real `@azure/identity`:
 *
 * - an HTTPS authority (`authorityHost`; MSAL refuses a plain-HTTP one) serving the OpenID
 *   metadata MSAL reads (`/{tenant}/v2.0/.well-known/openid-configuration`), instance discovery
 *   (`/common/discovery/instance`, should discovery be left on) and the token endpoint
 *   `/{tenant}/oauth2/v2.0/token` for the client credentials grant, with a client secret, with a
 *   certificate's signed `client_assertion` (verified against the test certificate's public key,
 *   RS256 or PS256 as the header says), or with a federated `client_assertion` (a Kubernetes-style
 *   service account token, verified against the test issuer's key, its subject and audience);
 * - managed identity endpoints (plain HTTP, as the real ones are), each where the library finds
 *   it: App Service's (`IDENTITY_ENDPOINT` / `IDENTITY_HEADER`), the instance metadata service's
 *   `/metadata/identity/oauth2/token` (IMDS is fixed at 169.254.169.254; the library reads its host
 *   from `AZURE_POD_IDENTITY_AUTHORITY_HOST`, which AAD Pod Identity sets, so it can be loopback)
 *   and Cloud Shell's (`MSI_ENDPOINT`, a form POST).
 *
 * Every token it issues is random, lives `tokenLifetimeS`, and is recorded so that a fake upstream
 * can accept only a currently valid one (`isValid`). `failing` makes every token request fail, as
 * an outage would. Certificates are made with openssl (a Debian base package), the rest with node:crypto.
 */
import { createSign, createVerify, constants, generateKeyPairSync, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
export const FEDERATION_AUDIENCE = 'api://AzureADTokenExchange';

/** An app registration: how its client proves itself. */
export type AppCredential = { secret: string } | { certificatePem: string } | { federated: { issuer: string; subject: string } };

/** One token request the authority or the managed identity endpoint answered (or refused). */
export interface TokenRequest {
  kind: 'client-secret' | 'client-certificate' | 'federated' | 'managed-identity' | 'unknown';
  clientId: string;
  /** The assertion's signing algorithm, for certificate and federated requests. */
  alg?: string;
  scopeOrResource: string;
  /** For a managed identity: which endpoint answered. */
  via?: 'app-service' | 'imds' | 'cloud-shell';
  status: number;
  at: number;
}

export interface EntraEmulator {
  /** https://127.0.0.1:port — the `authorityHost`. */
  readonly authorityHost: string;
  /** http://127.0.0.1:port/msi/token — `IDENTITY_ENDPOINT`. */
  readonly identityEndpoint: string;
  readonly identityHeader: string;
  /** http://127.0.0.1:port — `AZURE_POD_IDENTITY_AUTHORITY_HOST` (IMDS's host). */
  readonly imdsHost: string;
  /** http://127.0.0.1:port/cloudshell/token — `MSI_ENDPOINT`. */
  readonly cloudShellEndpoint: string;
  /** The self-signed certificate of the HTTPS authority (to trust). */
  readonly tlsCertificatePem: string;
  readonly requests: TokenRequest[];
  tokenLifetimeS: number;
  failing: boolean;
  /** Registers an app (client id → how it authenticates). */
  register(clientId: string, credential: AppCredential): void;
  /** Token requests of one kind that were answered with a token. */
  issued(kind?: TokenRequest['kind']): number;
  /** True when the token was issued here and has not expired. */
  isValid(token: string | undefined): boolean;
  /** Every token issued so far (to check that none leaks). */
  readonly tokens: readonly string[];
  close(): Promise<void>;
}

/** A self-signed certificate and its key, from openssl: fails with a clear message when openssl is missing. */
export function selfSignedCertificate(commonName: string, altNames = 'IP:127.0.0.1,DNS:localhost'): { certPem: string; keyPem: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  const run = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', `/CN=${commonName}`, '-addext', `subjectAltName=${altNames}`],
    { encoding: 'utf8' },
  );
  if (run.error || run.status !== 0) throw new Error(`the Entra emulator needs openssl to make test certificates (apt-get install openssl): ${run.error?.message ?? run.stderr}`);
  return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
}

/** A key pair standing for a Kubernetes service account issuer; `token()` writes what the kubelet projects. */
export function federatedIssuer(issuer: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    issuer,
    publicKey,
    /** A projected service account token for `subject` (system:serviceaccount:ns:name). */
    token(subject: string, lifetimeS = 3600): string {
      const now = Math.floor(Date.now() / 1000);
      return signJwt({ alg: 'RS256', typ: 'JWT', kid: 'test' }, { iss: issuer, sub: subject, aud: [FEDERATION_AUDIENCE], iat: now, nbf: now, exp: now + lifetimeS }, privateKey);
    },
  };
}

/** Starts the authority (HTTPS) and the managed identity endpoint (HTTP) on loopback. */
export async function startEntraEmulator(options: { federationKeys?: Record<string, KeyObject>; tokenLifetimeS?: number } = {}): Promise<EntraEmulator> {
  const tlsCert = selfSignedCertificate('127.0.0.1');
  const apps = new Map<string, AppCredential>();
  const valid = new Map<string, number>();
  const tokens: string[] = [];
  const requests: TokenRequest[] = [];
  const identityHeader = randomBytes(16).toString('hex');
  const federationKeys = options.federationKeys ?? {};
  let authorityHost = '';

  const state = { tokenLifetimeS: options.tokenLifetimeS ?? 3600, failing: false };
  const issue = () => {
    const token = `entra-test-${randomBytes(24).toString('base64url')}`;
    valid.set(token, Date.now() + state.tokenLifetimeS * 1000);
    tokens.push(token);
    return token;
  };

  const authority = createHttpsServer({ cert: tlsCert.certPem, key: tlsCert.keyPem }, (req, res) => {
    void readBody(req).then((body) => answerAuthority(req, body, res));
  });
  function answerAuthority(req: IncomingMessage, body: string, res: ServerResponse): true {
    const url = new URL(req.url ?? '/', authorityHost);
    const [tenant, ...rest] = url.pathname.split('/').filter(Boolean);
    const route = rest.join('/');
    if (req.method === 'GET' && tenant === 'common' && route === 'discovery/instance') {
      const host = new URL(authorityHost).host;
      return json(res, 200, {
        tenant_discovery_endpoint: `${authorityHost}/${TENANT}/v2.0/.well-known/openid-configuration`,
        metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
      });
    }
    if (req.method === 'GET' && route === 'v2.0/.well-known/openid-configuration') {
      const base = `${authorityHost}/${tenant}`;
      return json(res, 200, {
        issuer: `${base}/v2.0`,
        token_endpoint: `${base}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        jwks_uri: `${base}/discovery/v2.0/keys`,
      });
    }
    if (req.method === 'POST' && route === 'oauth2/v2.0/token') return answerToken(tenant, new URLSearchParams(body), res);
    return json(res, 404, { error: 'not_found', error_description: `the emulator does not serve ${req.method} ${url.pathname}` });
  }

  function answerToken(tenant: string, form: URLSearchParams, res: ServerResponse): true {
    const clientId = form.get('client_id') ?? '';
    const app = apps.get(clientId);
    const assertion = form.get('client_assertion');
    const tokenEndpoint = `${authorityHost}/${tenant}/oauth2/v2.0/token`;
    const record = (kind: TokenRequest['kind'], status: number, alg?: string) => requests.push({ kind, clientId, alg, scopeOrResource: form.get('scope') ?? '', status, at: Date.now() });
    const refuse = (kind: TokenRequest['kind'], code: string, description: string, alg?: string) => {
      record(kind, 401, alg);
      return json(res, 401, { error: code, error_description: description, error_codes: [7000215] });
    };
    if (form.get('grant_type') !== 'client_credentials') return refuse('unknown', 'unsupported_grant_type', 'AADSTS70003: only client_credentials is emulated');
    if (tenant !== TENANT) return refuse('unknown', 'invalid_request', `AADSTS90002: Tenant '${tenant}' not found.`);
    if (!app) return refuse('unknown', 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory.`);
    if (!form.get('scope')?.endsWith('/.default')) return refuse('unknown', 'invalid_scope', 'AADSTS1002012: the client credentials grant needs a /.default scope');
    let kind: TokenRequest['kind'];
    let alg: string | undefined;
    if ('secret' in app) {
      kind = 'client-secret';
      if (form.get('client_secret') !== app.secret) return refuse(kind, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
    } else {
      kind = 'certificatePem' in app ? 'client-certificate' : 'federated';
      if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' || !assertion)
        return refuse(kind, 'invalid_client', 'AADSTS7000216: client_assertion is required.');
      const checked =
        'certificatePem' in app
          ? checkJwt(assertion, new X509Certificate(app.certificatePem).publicKey, { iss: clientId, sub: clientId, aud: tokenEndpoint })
          : checkJwt(assertion, federationKeys[app.federated.issuer], { iss: app.federated.issuer, sub: app.federated.subject, aud: FEDERATION_AUDIENCE });
      alg = checked.alg;
      if (checked.error) return refuse(kind, 'invalid_client', `AADSTS700027: Client assertion failed signature validation: ${checked.error}`, alg);
    }
    if (state.failing) {
      record(kind, 503, alg);
      // Entra says when to come back; MSAL holds identical requests until then (60 s without it).
      res.setHeader('retry-after', '1');
      return json(res, 503, { error: 'temporarily_unavailable', error_description: 'AADSTS90033: A transient error has occurred. Please try again.' });
    }
    record(kind, 200, alg);
    return json(res, 200, { token_type: 'Bearer', expires_in: state.tokenLifetimeS, ext_expires_in: state.tokenLifetimeS, access_token: issue() });
  }

  const managed = createHttpServer((req, res) => {
    void readBody(req).then((body) => answerManaged(req, body, res));
  });
  /** Which managed identity endpoint a request is for, and whether it carries what that one requires. */
  function managedRoute(req: IncomingMessage, url: URL): { via: TokenRequest['via']; refused?: string } {
    if (url.pathname === '/msi/token') return { via: 'app-service', refused: req.headers['x-identity-header'] === identityHeader ? undefined : 'the X-IDENTITY-HEADER is missing or wrong' };
    // IMDS and Cloud Shell both require `Metadata: true` (IMDS answers 400 without it: the library's probe relies on that).
    const refused = req.headers.metadata === 'true' ? undefined : 'Required metadata header not specified';
    // MSAL's URL ends in a slash (its URL builder adds one); IMDS takes both.
    if (/^\/metadata\/identity\/oauth2\/token\/?$/.test(url.pathname) && req.method === 'GET')
      return { via: 'imds', refused: refused ?? (url.searchParams.get('api-version') ? undefined : 'api-version is required') };
    if (url.pathname === '/cloudshell/token' && req.method === 'POST') return { via: 'cloud-shell', refused };
    return { via: undefined, refused: `the emulator does not serve ${req.method} ${url.pathname}` };
  }
  function answerManaged(req: IncomingMessage, body: string, res: ServerResponse): true {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const { via, refused } = managedRoute(req, url);
    // Cloud Shell's request is a form; the others put the resource in the query.
    const params = via === 'cloud-shell' ? new URLSearchParams(body) : url.searchParams;
    const resource = params.get('resource') ?? '';
    const clientId = params.get('client_id') ?? params.get('clientid') ?? '(system-assigned)';
    const record = (status: number) => requests.push({ kind: 'managed-identity', clientId, scopeOrResource: resource, via, status, at: Date.now() });
    if (refused) {
      record(400);
      return json(res, 400, { statusCode: 400, error: 'invalid_request', message: refused, error_description: refused });
    }
    if (clientId !== '(system-assigned)' && !apps.has(clientId)) {
      record(400);
      return json(res, 400, { statusCode: 400, message: `no managed identity with client id ${clientId} is assigned to this resource` });
    }
    if (state.failing) {
      record(500);
      return json(res, 500, { statusCode: 500, message: 'the managed identity endpoint is unavailable' });
    }
    record(200);
    const expiresOn = Math.floor(Date.now() / 1000) + state.tokenLifetimeS;
    const common = { access_token: issue(), expires_on: String(expiresOn), resource, token_type: 'Bearer' };
    // IMDS and Cloud Shell also say expires_in (as a string); App Service echoes the client id.
    return json(res, 200, via === 'app-service' ? { ...common, client_id: clientId } : { ...common, expires_in: String(state.tokenLifetimeS), ext_expires_in: String(state.tokenLifetimeS) });
  }

  authorityHost = `https://127.0.0.1:${await listen(authority)}`;
  const managedOrigin = `http://127.0.0.1:${await listen(managed)}`;
  const identityEndpoint = `${managedOrigin}/msi/token`;

  return {
    authorityHost,
    identityEndpoint,
    identityHeader,
    imdsHost: managedOrigin,
    cloudShellEndpoint: `${managedOrigin}/cloudshell/token`,
    tlsCertificatePem: tlsCert.certPem,
    requests,
    tokens,
    get tokenLifetimeS() {
      return state.tokenLifetimeS;
    },
    set tokenLifetimeS(s: number) {
      state.tokenLifetimeS = s;
    },
    get failing() {
      return state.failing;
    },
    set failing(f: boolean) {
      state.failing = f;
    },
    register: (clientId, credential) => void apps.set(clientId, credential),
    issued: (kind) => requests.filter((r) => r.status === 200 && (!kind || r.kind === kind)).length,
    isValid(token) {
      const expiresAt = token === undefined ? undefined : valid.get(token);
      return expiresAt !== undefined && Date.now() < expiresAt;
    },
    close: async () => {
      await Promise.all([authority, managed].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** Trusts the emulator's certificate in this process (as an operator would with the system store). */
export function trustCertificate(pem: string): void {
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), pem]);
}

/** Writes text to a fresh temporary file and answers its path. */
export function tempFile(name: string, text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-entra-')), name);
  writeFileSync(file, text);
  return file;
}

function signJwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const data = `${b64url(header)}.${b64url(payload)}`;
  return `${data}.${createSign('sha256').update(data).sign(key).toString('base64url')}`;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Verifies a JWT's signature (RS256 or PS256) and its iss, sub, aud and lifetime. */
function checkJwt(jwt: string, key: KeyObject | undefined, expected: { iss: string; sub: string; aud: string }): { alg?: string; error?: string } {
  const [h, p, s] = jwt.split('.');
  if (!h || !p || !s) return { error: 'not a JWT' };
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss?: string; sub?: string; aud?: string | string[]; exp?: number; nbf?: number };
  const alg = header.alg;
  if (!key) return { alg, error: 'no key is known for its issuer' };
  const verifier = createVerify('sha256').update(`${h}.${p}`);
  const signature = Buffer.from(s, 'base64url');
  const ok =
    alg === 'RS256'
      ? verifier.verify(key, signature)
      : alg === 'PS256'
        ? verifier.verify({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature)
        : false;
  if (!ok) return { alg, error: `bad ${alg} signature` };
  const now = Date.now() / 1000;
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.iss !== expected.iss || claims.sub !== expected.sub) return { alg, error: `unexpected iss/sub ${claims.iss} ${claims.sub}` };
  if (!audiences.includes(expected.aud)) return { alg, error: `unexpected audience ${audiences.join(',')}` };
  if (!(typeof claims.exp === 'number' && claims.exp > now) || (typeof claims.nbf === 'number' && claims.nbf > now + 300)) return { alg, error: 'expired or not yet valid' };
  return { alg };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      text += c;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

/** Answers JSON; true, so a handler can `return json(...)`. */
function json(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  return true;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
