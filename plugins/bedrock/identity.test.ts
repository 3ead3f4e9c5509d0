/** Which link of the AWS chain answered, from the SDK's marks on the credentials. */
import { describe, expect, it } from 'vitest';
import { sourceOf } from './identity.ts';

const keys = (marks: string[]) => ({ accessKeyId: 'AKID', secretAccessKey: 's', $source: Object.fromEntries(marks.map((m) => [m, 'x'])) });

describe('sourceOf', () => {
  it('names each link, the most specific mark first', () => {
    expect(sourceOf(keys(['CREDENTIALS_ENV_VARS']))).toBe('aws:environment');
    expect(sourceOf(keys(['CREDENTIALS_PROFILE', 'CREDENTIALS_PROFILE_SOURCE_PROFILE', 'CREDENTIALS_STS_ASSUME_ROLE']))).toBe('aws:profile');
    expect(sourceOf(keys(['CREDENTIALS_PROFILE', 'CREDENTIALS_PROFILE_STS_WEB_ID_TOKEN', 'CREDENTIALS_STS_ASSUME_ROLE_WEB_ID']))).toBe('aws:web-identity');
    expect(sourceOf(keys(['CREDENTIALS_ENV_VARS_STS_WEB_ID_TOKEN', 'CREDENTIALS_STS_ASSUME_ROLE_WEB_ID']))).toBe('aws:web-identity');
    expect(sourceOf(keys(['CREDENTIALS_PROFILE_SSO', 'CREDENTIALS_SSO']))).toBe('aws:sso');
    expect(sourceOf(keys(['CREDENTIALS_HTTP']))).toBe('aws:container');
    expect(sourceOf(keys(['CREDENTIALS_PROFILE', 'CREDENTIALS_PROFILE_PROCESS', 'CREDENTIALS_PROCESS']))).toBe('aws:process');
  });

  it('unmarked credentials came from the last link: container metadata when configured, else IMDS', () => {
    expect(sourceOf(keys([]), { AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '/v2/credentials/x' })).toBe('aws:container');
    expect(sourceOf(keys([]), {})).toBe('aws:imds');
  });
});
