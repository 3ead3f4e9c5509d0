/**
 * More Google credential sources for Vertex, through google-auth-library against the emulators on
 * loopback (vertex.test.ts has the service account, ADC, the metadata server, OIDC federation and
 * Express keys): service account impersonation, its source credentials buying the target's token
 * at the URL the file names, and Workload Identity Federation from AWS, whose subject token is a
 * GetCallerIdentity request signed with the instance role's keys (the AWS emulator's IMDSv2) and
 * checked by the AWS emulator for the Google emulator's STS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValid, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startAwsEmulator, type AwsEmulator } from '../helpers/aws-emulator.ts';
import { fakeVertex } from '../helpers/fake-vertex.ts';
import { googleEmulator, useGoogleEmulator } from '../helpers/google-emulator.ts';
import { configYaml } from '../helpers/repo.ts';

const PROJECT = 'switchyard-test';
const emulator = googleEmulator();
useGoogleEmulator(emulator);

const identityOf = (t: TestGateway, provider: string) => t.gateway.runtime.providers.get(provider)?.instance?.identity?.();

/** No token the emulator issued, and no private key, in an answer or the log. */
function expectNoSecrets(t: TestGateway, text: string) {
  for (const issued of emulator.issued) {
    expect(text).not.toContain(issued.token);
    expect(t.logText()).not.toContain(issued.token);
  }
  expect(t.logText()).not.toContain('PRIVATE KEY');
}

describe('impersonated_service_account: source credentials buy a target service account token', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const TARGET = 'vertex-caller@switchyard-test.iam.gserviceaccount.com';
  const t = useTestGateway(
    () =>
      configYaml({
        providers: [
          `  imp-user: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: imp-user.json } }`,
          `  imp-sa: { plugin: vertex-anthropic, project: ${PROJECT}, location: us-east5, baseUrl: "${vertex.url}", auth: { type: google, credentials: "\${file:imp-sa.json}" } }`,
        ].join('\n'),
        models: [
          '  imp-flash: { retry: { attempts: 1 }, targets: [{ provider: imp-user, model: gemini-2.5-flash }] }',
          '  imp-claude: { retry: { attempts: 1 }, targets: [{ provider: imp-sa, model: claude-sonnet-4-5@20250929 }] }',
        ].join('\n'),
      }),
    {
      upstreams: [vertex],
      files: {
        // What `gcloud auth application-default login --impersonate-service-account` writes (a user's credentials as the source), and a key as the source.
        get 'imp-user.json'() {
          return JSON.stringify(emulator.impersonatedServiceAccount(TARGET, emulator.authorizedUser()));
        },
        get 'imp-sa.json'() {
          return JSON.stringify(emulator.impersonatedServiceAccount(TARGET, emulator.serviceAccount()));
        },
      },
    },
  );

  it("the source's token calls generateAccessToken at the file's URL; the target's token serves, fetched once", async () => {
    for (const model of ['imp-flash', 'imp-flash', 'imp-claude']) {
      const r = await t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expectValid('CreateChatCompletionResponse', r);
      expect(emulator.valid(String(vertex.requests.at(-1)!.headers.authorization).replace('Bearer ', ''))?.source).toBe('impersonated');
    }
    // One impersonation per provider (at startup), not per request; each by its own source.
    const made = emulator.impersonations.filter((m) => m.target === TARGET);
    expect(made.map((m) => m.by).sort()).toEqual(['authorized-user', 'service-account']);
    for (const m of made) expect(m).toMatchObject({ target: TARGET, scope: ['https://www.googleapis.com/auth/cloud-platform'], delegates: [], lifetime: '3600s' });
    for (const name of ['imp-user', 'imp-sa']) expect(identityOf(t, name)).toMatchObject({ source: 'google:impersonated-service-account', refreshes: 1, failures: 0 });
    expect(emulator.refusals).toEqual([]);
    expectNoSecrets(t, JSON.stringify(await (await fetch(`${t.url}/readyz`)).json()));
  });
});

describe('Workload Identity Federation from AWS: an external_account with environment_id aws1', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  let aws: AwsEmulator | undefined;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    aws = await startAwsEmulator();
    const verify = aws.verifySignedRequest.bind(aws);
    emulator.verifyAws = (signed) => verify(signed);
    // Neither keys nor a region in the environment: the library asks the instance metadata for both.
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION']) {
      saved[k] = process.env[k];
      delete process.env[k];
    }
  });
  afterAll(async () => {
    emulator.verifyAws = undefined;
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
    await aws?.close();
  });
  const t = useTestGateway(
    () =>
      configYaml({
        providers: `  wif-aws: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: wif-aws.json } }`,
        models: '  wif-aws-flash: { retry: { attempts: 1 }, targets: [{ provider: wif-aws, model: gemini-2.5-flash }] }',
      }),
    {
      upstreams: [vertex],
      files: {
        get 'wif-aws.json'() {
          return JSON.stringify(emulator.externalAccountFromAws(aws!.imdsUrl));
        },
      },
    },
  );

  it('the instance role (IMDSv2) signs GetCallerIdentity; STS has it checked and answers the token that serves', async () => {
    const r = await t.client().chat.completions.create({ model: 'wif-aws-flash', messages: [{ role: 'user', content: 'hi' }] });
    expectValid('CreateChatCompletionResponse', r);
    expect(emulator.valid(String(vertex.requests.at(-1)!.headers.authorization).replace('Bearer ', ''))?.source).toBe('external-account');
    expect(emulator.awsExchanges).toBe(1);
    expect(aws!.imdsCalls).toBe(1);
    expect(identityOf(t, 'wif-aws')).toMatchObject({ source: 'google:external-account', refreshes: 1, failures: 0 });
    expect(emulator.refusals).toEqual([]);
  });
});
