/**
 * Bedrock on the whole AWS credential chain, against emulators on loopback (never a cloud):
 * each source serves a request through the AWS SDK's own providers, signed with the keys the
 * emulator issued; short-lived keys are refreshed under load with no failed request; a refresh
 * that fails keeps serving until the keys expire, then 503 without a secret anywhere.
 *
 * The SDK reads the AWS variables whenever it fetches, so each block sets them for its whole
 * life (blocks run one after another) and puts back what was there: nothing leaks into another
 * block or file, and the developer's own ~/.aws is never read (the files are the test's).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityStatus } from 'switchyard-gateway';
import { failureOf, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startAwsEmulator, type AwsEmulator, type IssuedKeys } from '../helpers/aws-emulator.ts';

const NOVA = 'us.amazon.nova-micro-v1:0';
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-caller';

interface Scenario {
  /** Short-lived keys make the refresh visible (default one hour). */
  lifetimeMs?: number;
  /** The provider's `auth` option (YAML flow text), or none. */
  auth?: string;
  /** The AWS variables this block runs with (the emulator's URLs known), besides the isolating ones. */
  env(aws: AwsEmulator, dir: string): Record<string, string>;
}

interface Running {
  t: TestGateway;
  aws: AwsEmulator;
  identity(): IdentityStatus | undefined;
  chat(model?: string): Promise<string>;
}

/** Starts the emulator, sets the block's AWS environment, and the gateway with one bedrock provider. */
function scenario(spec: Scenario): Running {
  let t: TestGateway | undefined;
  let aws: AwsEmulator | undefined;
  let saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    aws = await startAwsEmulator({ lifetimeMs: spec.lifetimeMs });
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-aws-'));
    writeFileSync(path.join(dir, 'empty'), '');
    const env = {
      // Nothing of the machine's own AWS setup, and no instance metadata unless the block asks.
      AWS_CONFIG_FILE: path.join(dir, 'empty'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'empty'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_STS: aws.stsUrl,
      ...spec.env(aws, dir),
    };
    saved = Object.fromEntries(
      Object.keys(process.env)
        .filter((k) => k.startsWith('AWS_'))
        .map((k) => [k, process.env[k]]),
    );
    for (const k of Object.keys(saved)) delete process.env[k];
    Object.assign(process.env, env);
    const auth = spec.auth ? `, auth: ${spec.auth}` : '';
    t = await startTestGateway(
      [
        'keys: [{ name: dev, key: sk-test-dev-0123456789, models: ["*"] }]',
        'providers:',
        `  aws: { plugin: bedrock, region: us-east-1, endpoint: "${aws.bedrock.url}", api: auto${auth} }`,
        'models:',
        `  nova: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "${NOVA}" }] }`,
        `  claude: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "${CLAUDE}" }] }`,
      ].join('\n'),
      // gateway.yaml's ${VAR}s are read from here.
      { env },
    );
  });
  afterAll(async () => {
    await t?.close();
    await aws?.close();
    for (const k of Object.keys(process.env)) if (k.startsWith('AWS_')) delete process.env[k];
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const running = <T>(x: T | undefined): T => {
    if (!x) throw new Error('the scenario starts in beforeAll');
    return x;
  };
  return {
    get t() {
      return running(t);
    },
    get aws() {
      return running(aws);
    },
    identity: () => running(t).gateway.runtime.providers.get('aws')?.instance?.identity?.(),
    async chat(model = 'nova') {
      const r = await running(t)
        .client()
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      return r.choices[0].message.content ?? '';
    },
  };
}

/** The keys the fake Bedrock saw on its last request: issued by whom. */
function lastSigner(aws: AwsEmulator): IssuedKeys | undefined {
  const akid = /Credential=([^/]+)\//.exec(String(aws.bedrock.requests.at(-1)?.headers.authorization ?? ''))?.[1];
  return akid ? aws.issued.get(akid) : undefined;
}

describe('environment variables, through the default chain (auth: { type: aws })', () => {
  const s = scenario({
    auth: '{ type: aws }',
    env: (aws) => {
      const keys = aws.staticKeys();
      return { AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey };
    },
  });
  it('signs with the environment keys and says so', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(lastSigner(s.aws)?.issuer).toBe('static');
    expect(s.aws.refused).toEqual([]);
    expect(s.identity()).toMatchObject({ source: 'aws:environment', failures: 0 });
  });
});

describe('a shared config profile with source_profile and role_arn (auth: { type: aws, profile })', () => {
  const s = scenario({
    auth: '{ type: aws, profile: app }',
    env: (aws, dir) => {
      const base = aws.staticKeys();
      writeFileSync(path.join(dir, 'credentials'), `[base]\naws_access_key_id = ${base.accessKeyId}\naws_secret_access_key = ${base.secretAccessKey}\n`);
      writeFileSync(path.join(dir, 'config'), `[profile app]\nrole_arn = ${ROLE}\nsource_profile = base\nrole_session_name = from-profile\nregion = us-east-1\n`);
      return { AWS_CONFIG_FILE: path.join(dir, 'config'), AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'credentials') };
    },
  });
  it('assumes the role with the source profile keys (a signed STS AssumeRole) and signs with what STS issued', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.stsCalls.map((c) => c.action)).toEqual(['AssumeRole']);
    const call = s.aws.stsCalls[0];
    expect(call.params).toMatchObject({ RoleArn: ROLE, RoleSessionName: 'from-profile' });
    expect(s.aws.issued.get(call.signedBy ?? '')?.issuer).toBe('static');
    expect(lastSigner(s.aws)?.issuer).toBe('sts:AssumeRole');
    expect(s.identity()).toMatchObject({ source: 'aws:profile' });
  });
});

describe('a profile with credential_process (a local program that prints the keys)', () => {
  let keys: IssuedKeys;
  let runs: string;
  const s = scenario({
    auth: '{ type: aws, profile: tool }',
    env: (aws, dir) => {
      keys = aws.staticKeys();
      runs = path.join(dir, 'runs');
      // The program the SDK runs (through a shell, as the AWS CLI does): it logs each run and
      // prints the credentials in the documented Version 1 shape, expiring in an hour.
      const program = path.join(dir, 'credentials.mjs');
      const printed = { Version: 1, AccessKeyId: keys.accessKeyId, SecretAccessKey: keys.secretAccessKey, SessionToken: 'process-session' };
      writeFileSync(
        program,
        `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(runs)}, 'run\\n');\nconsole.log(JSON.stringify({ ...${JSON.stringify(printed)}, Expiration: new Date(Date.now() + 3600_000).toISOString() }));\n`,
      );
      keys.sessionToken = printed.SessionToken;
      writeFileSync(path.join(dir, 'config'), `[profile tool]\ncredential_process = "${process.execPath}" "${program}"\nregion = us-east-1\n`);
      return { AWS_CONFIG_FILE: path.join(dir, 'config') };
    },
  });
  it('runs the program once and signs with what it printed', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(await s.chat()).toBe('hello via converse');
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    expect(lastSigner(s.aws)?.accessKeyId).toBe(keys.accessKeyId);
    expect(s.aws.bedrock.requests.at(-1)?.headers['x-amz-security-token']).toBe('process-session');
    expect(s.aws.refused).toEqual([]);
    expect(s.identity()).toMatchObject({ source: 'aws:process', refreshes: 1 });
    expect(s.identity()?.expiresAt).toBeGreaterThan(Date.now() + 3500_000);
  });
});

describe('an IAM Identity Center (SSO) profile', () => {
  const s = scenario({
    auth: '{ type: aws, profile: sso-dev }',
    env: (aws, dir) => {
      // What `aws sso login` leaves: the session's token, cached under ~/.aws/sso/cache/<sha1(session)>.json.
      const cache = path.join(dir, '.aws', 'sso', 'cache');
      mkdirSync(cache, { recursive: true });
      const token = { accessToken: aws.ssoAccessToken, expiresAt: new Date(Date.now() + 3600_000).toISOString(), region: 'us-east-1', startUrl: 'https://example.awsapps.com/start' };
      writeFileSync(path.join(cache, `${createHash('sha1').update('corp').digest('hex')}.json`), JSON.stringify(token));
      writeFileSync(
        path.join(dir, 'config'),
        '[profile sso-dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = BedrockUser\nregion = us-east-1\n\n[sso-session corp]\nsso_start_url = https://example.awsapps.com/start\nsso_region = us-east-1\n',
      );
      return { HOME: dir, AWS_CONFIG_FILE: path.join(dir, 'config'), AWS_ENDPOINT_URL_SSO: aws.ssoUrl };
    },
  });
  it('trades the cached SSO token for role credentials at the portal', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.ssoCalls).toBe(1);
    expect(lastSigner(s.aws)?.issuer).toBe('sso');
    expect(s.identity()).toMatchObject({ source: 'aws:sso' });
  });
});

describe('web identity / IRSA token file', () => {
  const s = scenario({
    auth: '{ type: aws }',
    env: (aws, dir) => {
      writeFileSync(path.join(dir, 'token'), aws.webIdentityToken);
      return { AWS_WEB_IDENTITY_TOKEN_FILE: path.join(dir, 'token'), AWS_ROLE_ARN: ROLE, AWS_ROLE_SESSION_NAME: 'irsa' };
    },
  });
  it('exchanges the token with STS AssumeRoleWithWebIdentity, with no session policy', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.stsCalls).toHaveLength(1);
    expect(s.aws.stsCalls[0]).toMatchObject({ action: 'AssumeRoleWithWebIdentity', params: { RoleArn: ROLE, RoleSessionName: 'irsa' } });
    expect(s.aws.stsCalls[0].params.Policy).toBeUndefined();
    expect(s.aws.stsCalls[0].params.PolicyArns).toBeUndefined();
    expect(lastSigner(s.aws)?.issuer).toBe('sts:AssumeRoleWithWebIdentity');
    expect(s.identity()).toMatchObject({ source: 'aws:web-identity', refreshes: 1 });
    expect(s.identity()?.expiresAt).toBeGreaterThan(Date.now());
  });
});

describe('ECS / EKS Pod Identity container credentials', () => {
  const s = scenario({
    auth: '{ type: aws }',
    env: (aws, dir) => {
      // EKS Pod Identity hands the token as a file; ECS as a variable: the file is the harder path.
      writeFileSync(path.join(dir, 'pod-token'), aws.containerToken);
      return { AWS_CONTAINER_CREDENTIALS_FULL_URI: aws.containerUrl, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: path.join(dir, 'pod-token') };
    },
  });
  it('fetches from the full URI with the authorization token', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.containerCalls).toBe(1);
    expect(lastSigner(s.aws)?.issuer).toBe('container');
    expect(s.identity()).toMatchObject({ source: 'aws:container' });
  });
});

describe('ECS task credentials: the token in AWS_CONTAINER_AUTHORIZATION_TOKEN', () => {
  // ECS itself sets AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, which the SDK resolves against the
  // fixed http://169.254.170.2 (no override: not reachable on loopback). The full URI form is the
  // same provider (fromHttp) with the host given; here with the token as a variable.
  const s = scenario({
    auth: '{ type: aws }',
    env: (aws) => ({ AWS_CONTAINER_CREDENTIALS_FULL_URI: aws.containerUrl, AWS_CONTAINER_AUTHORIZATION_TOKEN: aws.containerToken }),
  });
  it('fetches from the full URI with the token from the variable', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.containerCalls).toBe(1);
    expect(lastSigner(s.aws)?.issuer).toBe('container');
    expect(s.identity()).toMatchObject({ source: 'aws:container' });
  });
});

describe('EC2 instance metadata (IMDSv2)', () => {
  const s = scenario({
    auth: '{ type: aws }',
    env: (aws) => ({ AWS_EC2_METADATA_DISABLED: 'false', AWS_EC2_METADATA_SERVICE_ENDPOINT: aws.imdsUrl }),
  });
  it('takes a session token, the role name, then the role credentials', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.imdsCalls).toBe(1);
    expect(lastSigner(s.aws)?.issuer).toBe('imds');
    expect(s.identity()).toMatchObject({ source: 'aws:imds' });
  });
});

describe('assumeRole chained after the instance role', () => {
  const s = scenario({
    auth: `{ type: aws, assumeRole: { roleArn: "${ROLE}", externalId: ext-1234, sessionName: gw, durationSeconds: 900 } }`,
    env: (aws) => ({ AWS_EC2_METADATA_DISABLED: 'false', AWS_EC2_METADATA_SERVICE_ENDPOINT: aws.imdsUrl }),
  });
  it('STS AssumeRole signed with the instance keys, with external id, session name and duration, and no session policy', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(s.aws.stsCalls).toHaveLength(1);
    const call = s.aws.stsCalls[0];
    expect(call).toMatchObject({ action: 'AssumeRole', params: { RoleArn: ROLE, ExternalId: 'ext-1234', RoleSessionName: 'gw', DurationSeconds: '900' } });
    expect(call.params.Policy).toBeUndefined();
    expect(s.aws.issued.get(call.signedBy ?? '')?.issuer).toBe('imds');
    expect(lastSigner(s.aws)?.issuer).toBe('sts:AssumeRole');
    expect(s.identity()).toMatchObject({ source: 'aws:assume-role' });
  });
});

describe('static keys in the config (auth: { type: aws-keys })', () => {
  let keys: IssuedKeys;
  const s = scenario({
    auth: '{ type: aws-keys, accessKeyId: "${AKID}", secretAccessKey: "${SECRET}" }',
    env: (aws) => {
      keys = aws.staticKeys();
      // gateway.yaml's ${VAR} reads these: the SDK chain never sees them (no AWS_ prefix).
      return { AKID: keys.accessKeyId, SECRET: keys.secretAccessKey };
    },
  });
  afterAll(() => {
    delete process.env.AKID;
    delete process.env.SECRET;
  });
  it('signs with them', async () => {
    expect(await s.chat()).toBe('hello via converse');
    expect(lastSigner(s.aws)?.accessKeyId).toBe(keys.accessKeyId);
    expect(s.identity()).toMatchObject({ source: 'aws:keys' });
  });
});

describe('a Bedrock API key (auth: { type: api-key })', () => {
  const s = scenario({ auth: '{ type: api-key, key: "${BEDROCK_KEY}" }', env: (aws) => ({ BEDROCK_KEY: aws.apiKey }) });
  afterAll(() => {
    delete process.env.BEDROCK_KEY;
  });
  it('sends Authorization: Bearer and no signature', async () => {
    expect(await s.chat()).toBe('hello via converse');
    const sent = s.aws.bedrock.requests.at(-1);
    expect(sent?.headers.authorization).toBe(`Bearer ${s.aws.apiKey}`);
    expect(sent?.headers['x-amz-date']).toBeUndefined();
    expect(s.aws.refused).toEqual([]);
    expect(s.identity()).toMatchObject({ source: 'api-key' });
  });

  it('the key (a nested auth option) is scrubbed from an upstream error that echoes it, and from the log', async () => {
    s.aws.bedrock.setHandler(() => ({ status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message: `bad request from key ${s.aws.apiKey}` } }));
    const err = await failureOf(s.chat());
    expect(err.status).toBe(400);
    expect(String(err.message)).toContain('bad request from key');
    expect(JSON.stringify(err.error)).not.toContain(s.aws.apiKey);
    expect(s.t.logText()).not.toContain(s.aws.apiKey);
    s.aws.bedrock.restore();
  });
});

describe('short-lived web identity credentials under steady load', () => {
  const LIFETIME = 3000;
  const s = scenario({
    lifetimeMs: LIFETIME,
    auth: '{ type: aws }',
    env: (aws, dir) => {
      writeFileSync(path.join(dir, 'token'), aws.webIdentityToken);
      return { AWS_WEB_IDENTITY_TOKEN_FILE: path.join(dir, 'token'), AWS_ROLE_ARN: ROLE };
    },
  });

  it('refreshes ahead of expiry behind the requests: no request fails, STS called about once per refresh window', async () => {
    const started = Date.now();
    const DURATION = 7000;
    let ok = 0;
    const failed: string[] = [];
    const worker = async () => {
      while (Date.now() - started < DURATION) {
        try {
          await s.chat(ok % 2 ? 'nova' : 'claude');
          ok++;
        } catch (err) {
          failed.push(String(err));
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(failed).toEqual([]);
    expect(s.aws.refused).toEqual([]);
    expect(ok).toBeGreaterThan(50);
    // Refreshed at half the lifetime (the refresh-ahead window is capped there): ~DURATION / 1.5 s.
    const calls = s.aws.stsCalls.length;
    expect(calls).toBeGreaterThanOrEqual(Math.floor(DURATION / LIFETIME));
    expect(calls).toBeLessThanOrEqual(Math.ceil(DURATION / (LIFETIME / 2)) + 2);
    expect(s.identity()?.refreshes).toBe(calls);
  });

  it('a failed refresh keeps serving with the old keys until they expire, then 503 in the usual envelope, no secret anywhere', async () => {
    await s.chat();
    s.aws.failing = true;
    const expiresAt = () => s.identity()?.expiresAt ?? 0;
    expect(expiresAt()).toBeGreaterThan(Date.now());
    // Until expiry every request is served, though the refreshes behind them fail (a refresh
    // already under way when STS started failing may still have brought newer keys).
    let served = 0;
    while (Date.now() < expiresAt() - 300) {
      expect(await s.chat()).toBe('hello via converse');
      served++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(served).toBeGreaterThan(3);
    expect(s.identity()?.failures).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt() - Date.now()) + 50));
    const err = await failureOf(s.chat());
    expect(err.status).toBe(503);
    expect(err.error).toMatchObject({ type: expect.any(String), message: expect.stringContaining('no valid credentials') });
    expect(err.headers?.get('x-request-id')).toBeTruthy();
    expect(s.identity()).toMatchObject({ source: 'aws:web-identity' });
    expect(s.identity()?.failures).toBeGreaterThan(0);
    expect(s.identity()?.lastError).toMatch(/AccessDenied|Not authorized/);
    const told = JSON.stringify(err.error) + s.t.logText() + JSON.stringify(s.identity());
    for (const keys of s.aws.issued.values()) {
      expect(told).not.toContain(keys.secretAccessKey);
      if (keys.sessionToken) expect(told).not.toContain(keys.sessionToken);
    }
    expect(told).not.toContain(s.aws.webIdentityToken);
    s.aws.failing = false;
    expect(await s.chat()).toBe('hello via converse');
  });
});

describe('short-lived instance role credentials (IMDSv2) under steady load', () => {
  const LIFETIME = 3000;
  const s = scenario({
    lifetimeMs: LIFETIME,
    auth: '{ type: aws }',
    env: (aws) => ({ AWS_EC2_METADATA_DISABLED: 'false', AWS_EC2_METADATA_SERVICE_ENDPOINT: aws.imdsUrl }),
  });
  it('no request fails, and IMDS is asked about once per refresh window', async () => {
    const started = Date.now();
    const DURATION = 4500;
    let ok = 0;
    const failed: string[] = [];
    const worker = async () => {
      while (Date.now() - started < DURATION) {
        try {
          await s.chat();
          ok++;
        } catch (err) {
          failed.push(String(err));
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(failed).toEqual([]);
    expect(s.aws.refused).toEqual([]);
    expect(ok).toBeGreaterThan(30);
    expect(s.aws.imdsCalls).toBeGreaterThanOrEqual(Math.floor(DURATION / LIFETIME));
    expect(s.aws.imdsCalls).toBeLessThanOrEqual(Math.ceil(DURATION / (LIFETIME / 2)) + 2);
    expect(s.identity()).toMatchObject({ source: 'aws:imds', failures: 0, refreshes: s.aws.imdsCalls });
  });
});

describe('no credentials anywhere', () => {
  const s = scenario({ auth: '{ type: aws }', env: () => ({}) });
  it('the provider answers 503 naming the chain, not a secret', async () => {
    const err = await failureOf(s.chat());
    expect(err.status).toBe(503);
    expect(String(err.message)).toMatch(/no valid credentials/);
    expect(s.identity()?.failures).toBeGreaterThan(0);
  });
});
