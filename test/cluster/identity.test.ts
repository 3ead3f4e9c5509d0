/**
 * Provider identity with `server.workers: 2`, through the real CLI: each worker fetches its own
 * AWS credentials (web identity, against the AWS emulator on loopback), and the console's
 * Providers view is the same whichever worker answers it: both workers' identities merged (the
 * soonest expiry, refreshes summed), each worker's own line beside it. /readyz stays the answering
 * worker's own view (a probe must not wait on the others) and says which worker that is.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAwsEmulator, type AwsEmulator } from '../helpers/aws-emulator.ts';
import { request, startCli, until, type RunningCli } from './helpers.ts';

const ADMIN_KEY = 'sk-admin-cluster-identity-0123456789';
const DEV_KEY = 'sk-test-cluster-identity-0123456789';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-caller';

let aws: AwsEmulator;
let cli: RunningCli;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  aws = await startAwsEmulator();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cluster-identity-'));
  writeFileSync(path.join(dir, 'empty'), '');
  writeFileSync(path.join(dir, 'token'), aws.webIdentityToken);
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    [
      'server: { workers: 2, shutdownGraceMs: 2000 }',
      'log: { level: info, format: json }',
      `admin: { keys: [{ name: ops, key: ${ADMIN_KEY} }] }`,
      `keys: [{ name: dev, key: ${DEV_KEY}, models: ["*"] }]`,
      'providers:',
      `  aws: { plugin: bedrock, region: us-east-1, endpoint: "${aws.bedrock.url}", auth: { type: aws } }`,
      'models:',
      '  nova: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "us.amazon.nova-micro-v1:0" }] }',
    ].join('\n'),
  );
  // What IRSA puts in a pod's environment; the workers inherit it from the CLI.
  const env: Record<string, string> = {
    AWS_CONFIG_FILE: path.join(dir, 'empty'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'empty'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_STS: aws.stsUrl,
    AWS_WEB_IDENTITY_TOKEN_FILE: path.join(dir, 'token'),
    AWS_ROLE_ARN: ROLE,
  };
  for (const k of Object.keys(process.env).filter((k) => k.startsWith('AWS_'))) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
  for (const [k, v] of Object.entries(env)) {
    saved[k] ??= process.env[k];
    process.env[k] = v;
  }
  try {
    // Three processes starting on a busy 2-core machine can take 20 s.
    cli = await startCli(file, 60_000);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}, 90_000);
afterAll(async () => {
  if (cli?.child.exitCode === null) {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
  await aws?.close();
});

/** On a connection of its own, so the cluster hands it to the next worker. */
const get = async (url: string, key?: string) => {
  const r = await request(cli.port, 'GET', url, { key, timeoutMs: 20_000 });
  expect(r.status, r.body).toBe(200);
  return { text: r.body, json: JSON.parse(r.body) };
};

describe('provider identity with server.workers: 2', () => {
  it("the Providers view is every worker's, merged, whichever worker answers; /readyz is the answering worker's, labelled", async () => {
    // Each worker fetched its own credentials at startup.
    await until(
      'both workers fetched credentials',
      async () => aws.stsCalls.length,
      (n) => n === 2,
      30_000,
    );
    expect(aws.stsCalls.every((c) => c.action === 'AssumeRoleWithWebIdentity')).toBe(true);
    const chat = await request(cli.port, 'POST', '/v1/chat/completions', { key: DEV_KEY, body: { model: 'nova', messages: [{ role: 'user', content: 'hi' }] }, timeoutMs: 20_000 });
    expect(chat.status, chat.body).toBe(200);

    const expiries = [...aws.issued.values()].filter((k) => k.issuer === 'sts:AssumeRoleWithWebIdentity').map((k) => k.expiresAt ?? 0);
    const soonest = Math.min(...expiries);
    const answeredBy = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const { text, json } = await get('/admin/v1/console/providers', ADMIN_KEY);
      expect(json.scope.missing).toEqual([]);
      expect(json.scope.workers.map((w: { id: number }) => w.id)).toEqual([1, 2]);
      const [provider] = json.data;
      expect(provider).toMatchObject({ name: 'aws', state: 'ready', identity: { source: 'aws:web-identity', refreshes: 2, failures: 0 } });
      // The library stamps expiry in whole seconds.
      expect(Math.abs(Date.parse(provider.identity.expiresAt) - soonest)).toBeLessThan(1000);
      expect(provider.workers.map((w: { id: number }) => w.id)).toEqual([1, 2]);
      for (const w of provider.workers) expect(w.identity).toMatchObject({ source: 'aws:web-identity', refreshes: 1 });
      for (const keys of aws.issued.values()) expect(text).not.toContain(keys.secretAccessKey);
      expect(text).not.toContain(aws.webIdentityToken);

      // Three requests a round, so the cluster's round robin hands the providers view to each worker in turn.
      for (let j = 0; j < 2; j++) {
        const readyz = (await get('/readyz')).json;
        answeredBy.add(readyz.worker.id);
        expect(readyz.providers.aws.identity).toMatchObject({ source: 'aws:web-identity', refreshes: 1 });
      }
    }
    // Fresh connections reached both workers.
    expect([...answeredBy].sort()).toEqual([1, 2]);
  }, 90_000);
});
