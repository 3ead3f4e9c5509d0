/**
 * AWS Signature Version 4 for Bedrock Runtime, done by the AWS SDK's own signer
 * (`@smithy/signature-v4`, SHA-256 from node:crypto via `@smithy/hash-node`). Credentials come
 * from the provider's options, else from the standard environment variables; they are resolved
 * once when the provider is created, never per request.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import type { OutgoingRequest } from 'switchyard-gateway';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface CredentialOptions {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}

/** The signing name of Bedrock Runtime (its host is bedrock-runtime.<region>.amazonaws.com). */
export const SIGNING_SERVICE = 'bedrock';

/**
 * Keys from the options when the options name any, else from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. The session token is taken from the same place as
 * the keys (an ambient token must not be paired with configured long-term keys). Returns a
 * reason instead when the credentials are missing or half given.
 */
export function resolveCredentials(options: CredentialOptions, env: NodeJS.ProcessEnv = process.env): AwsCredentials | { missing: string } {
  if (options.accessKeyId || options.secretAccessKey) {
    if (!options.accessKeyId) return { missing: 'secretAccessKey is set but accessKeyId is not' };
    if (!options.secretAccessKey) return { missing: 'accessKeyId is set but secretAccessKey is not' };
    return withToken(options.accessKeyId, options.secretAccessKey, options.sessionToken);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    return { missing: 'no AWS credentials: set accessKeyId and secretAccessKey, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment' };
  }
  return withToken(accessKeyId, secretAccessKey, options.sessionToken ?? env.AWS_SESSION_TOKEN);
}

function withToken(accessKeyId: string, secretAccessKey: string, sessionToken: string | undefined): AwsCredentials {
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** A signer over fixed credentials, or over a function that answers the current ones (asked per request). */
export function createSigner(region: string, credentials: AwsCredentials | (() => Promise<AwsCredentials>)): SignatureV4 {
  return new SignatureV4({ service: SIGNING_SERVICE, region, credentials, sha256: Hash.bind(null, 'sha256'), uriEscapePath: true });
}

type SignableRequest = Parameters<SignatureV4['presign']>[0];

/**
 * The headers that authenticate one request: `authorization`, `x-amz-date`,
 * `x-amz-content-sha256` and, with temporary credentials, `x-amz-security-token`. Every header
 * given is signed, and `host` is signed as the URL's host (with its port), which is what the
 * HTTP client sends. The path is signed as it goes on the wire (model ids already encoded).
 */
export async function signatureHeaders(signer: SignatureV4, request: OutgoingRequest, signingDate?: Date): Promise<Record<string, string>> {
  const { url } = request;
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = v;
  headers.host = url.host;
  const signable = {
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers,
    body: request.body,
  } as SignableRequest;
  const signed = await signer.sign(signable, signingDate ? { signingDate } : {});
  const added: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) {
    if (k !== 'host' && headers[k] !== v) added[k] = v;
  }
  return added;
}
