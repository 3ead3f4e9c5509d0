/**
 * Checking an AWS SigV4 signature the way Bedrock would: what arrived is re-signed with the AWS
 * SDK's own signer, the same credentials and the date it carries, over the headers it says it
 * signed. Shared by the fakes of every Bedrock test.
 */
import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import type { RecordedRequest } from 'switchyard-gateway/kit/testing';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What a correct signature of `req` is, and the body digest it must carry; undefined when it is not signed at all. */
export async function expectedSignature(req: RecordedRequest, credentials: AwsCredentials, region = 'us-east-1'): Promise<{ authorization: string; contentSha256: string } | undefined> {
  const auth = String(req.headers.authorization ?? '');
  const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1].split(';');
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!signed || !/^\d{8}T\d{6}Z$/.test(date)) return undefined;
  // The signer adds these itself (the date from signingDate, the token from the credentials).
  const headers: Record<string, string> = {};
  for (const name of signed) if (!['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'].includes(name)) headers[name] = String(req.headers[name]);
  const url = new URL(req.url, `http://${req.headers.host}`);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });
  const resigned = await signer.sign(
    { method: req.method, protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers, body: req.raw } as Parameters<SignatureV4['presign']>[0],
    { signingDate },
  );
  return { authorization: String(resigned.headers.authorization), contentSha256: createHash('sha256').update(req.raw).digest('hex') };
}

/** True when `req` carries a valid signature by `credentials` (for fakes that answer only signed requests). */
export async function signedByAws(req: RecordedRequest, credentials: AwsCredentials, region = 'us-east-1'): Promise<boolean> {
  const expected = await expectedSignature(req, credentials, region);
  return expected !== undefined && req.headers.authorization === expected.authorization && req.headers['x-amz-content-sha256'] === expected.contentSha256;
}
