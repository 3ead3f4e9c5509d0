/** Credentials resolution and the SigV4 headers of one request. */
import { describe, expect, it } from 'vitest';
import { createSigner, resolveCredentials, signatureHeaders } from './sign.ts';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const DATE = new Date('2025-01-02T03:04:05Z');

function request(body = '{"messages":[]}', url = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse') {
  return { method: 'POST', url: new URL(url), headers: { 'content-type': 'application/json', accept: 'application/json' }, body };
}

describe('resolveCredentials', () => {
  const env = { AWS_ACCESS_KEY_ID: 'AKIAENV', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-token' };

  it('from the options when they name keys (an ambient session token is not mixed in)', () => {
    expect(resolveCredentials(KEYS, env)).toEqual(KEYS);
    expect(resolveCredentials({ ...KEYS, sessionToken: 'opt-token' }, env)).toEqual({ ...KEYS, sessionToken: 'opt-token' });
  });

  it('else from the standard environment variables', () => {
    expect(resolveCredentials({}, env)).toEqual({ accessKeyId: 'AKIAENV', secretAccessKey: 'env-secret', sessionToken: 'env-token' });
    expect(resolveCredentials({}, { AWS_ACCESS_KEY_ID: 'AKIAENV', AWS_SECRET_ACCESS_KEY: 'env-secret' })).toEqual({ accessKeyId: 'AKIAENV', secretAccessKey: 'env-secret' });
  });

  it('missing or half-given credentials are named', () => {
    expect(resolveCredentials({}, {})).toEqual({ missing: expect.stringContaining('AWS_ACCESS_KEY_ID') });
    expect(resolveCredentials({ accessKeyId: 'AKID' }, env)).toEqual({ missing: 'accessKeyId is set but secretAccessKey is not' });
    expect(resolveCredentials({ secretAccessKey: 'x' }, env)).toEqual({ missing: 'secretAccessKey is set but accessKeyId is not' });
  });
});

describe('signatureHeaders', () => {
  it('adds authorization, x-amz-date and x-amz-content-sha256 (not host: the HTTP client sends it)', async () => {
    const headers = await signatureHeaders(createSigner('us-east-1', KEYS), request(), DATE);
    expect(Object.keys(headers).sort()).toEqual(['authorization', 'x-amz-content-sha256', 'x-amz-date']);
    expect(headers['x-amz-date']).toBe('20250102T030405Z');
    expect(headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250102\/us-east-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  it('temporary credentials add x-amz-security-token, which is signed too', async () => {
    const headers = await signatureHeaders(createSigner('eu-west-3', { ...KEYS, sessionToken: 'FwoGZXIvYXdzEXAMPLE' }), request(), DATE);
    expect(headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEXAMPLE');
    expect(headers.authorization).toContain('Credential=AKIDEXAMPLE/20250102/eu-west-3/bedrock/aws4_request');
    expect(headers.authorization).toContain('SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token,');
  });

  it('the signature covers the body, the path and the host with its port; the same input signs the same', async () => {
    const signer = createSigner('us-east-1', KEYS);
    const signature = async (r: ReturnType<typeof request>) => /Signature=(\w+)/.exec((await signatureHeaders(signer, r, DATE)).authorization)![1];
    const base = await signature(request());
    expect(await signature(request())).toBe(base);
    expect(await signature(request('{"messages":[1]}'))).not.toBe(base);
    expect(await signature(request(undefined, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-lite-v1%3A0/converse'))).not.toBe(base);
    const local = await signature(request(undefined, 'http://127.0.0.1:8123/model/us.amazon.nova-micro-v1%3A0/converse'));
    expect(await signature(request(undefined, 'http://127.0.0.1:8124/model/us.amazon.nova-micro-v1%3A0/converse'))).not.toBe(local);
  });
});
