/** `switchyard usage` as an operator runs it, against a running gateway's admin API. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { usageReport, UsageCommandError } from '../../src/admin/usage-table.ts';
import { ROOT } from '../helpers/repo.ts';
import { adminGet, chat, eventually, startUsageUpstream, type UsageUpstream } from './helpers.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');
const ADMIN = 'sk-admin-cli-0123456789';
const SEARCH = 'sk-cli-search-0123456789';
const ADS = 'sk-cli-ads-0123456789';

let upstream: UsageUpstream;
beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 100, cached: 40, completion: 50 });
});
afterAll(() => upstream.close());

const t = useTestGateway(() =>
  [
    'teams:',
    '  search: { budget: { usd: 10, period: monthly } }',
    'keys:',
    `  - { name: search-prod, key: ${SEARCH}, team: search, models: ["*"], limits: { rpm: 60, concurrency: 2 }, budget: { usd: 1, period: daily } }`,
    `  - { name: ads, key: ${ADS}, models: ["*"], expiresAt: "2099-06-30T00:00:00Z" }`,
    'admin:',
    `  keys: [{ name: ops, key: ${ADMIN} }]`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
    'models:',
    '  gpt: { targets: [{ provider: up, model: gpt-4o }] }',
    '  mystery: { targets: [{ provider: up, model: unknown-model-xyz }] }',
  ].join('\n'),
);

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'usage', ...args], { cwd: ROOT, env: { ...process.env, SWITCHYARD_ADMIN_KEY: '', SWITCHYARD_URL: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A loopback port nothing listens on (just freed). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  const ask = (key: string, model: string) => chat(t.url, key, { model, messages: [{ role: 'user', content: 'cli' }], max_tokens: 50 });
  expect((await Promise.all([ask(SEARCH, 'gpt'), ask(SEARCH, 'gpt'), ask(ADS, 'gpt'), ask(ADS, 'mystery')])).map((a) => a.status)).toEqual([200, 200, 200, 200]);
  await eventually(async () => {
    const r = await adminGet(t.url, `/admin/v1/usage?start_time=${Math.floor(Date.now() / 1000) - 86_400}`, ADMIN);
    expect(r.body.data.flatMap((b: { results: Array<{ num_model_requests: number }> }) => b.results).reduce((n: number, x: { num_model_requests: number }) => n + x.num_model_requests, 0)).toBe(4);
  });
});

/** gpt-4o: 60 fresh × $2.50 + 40 cached × $1.25 + 50 out × $10 per million = $0.00070 a request. */
const GPT = (60 * 2.5 + 40 * 1.25 + 50 * 10) / 1e6;

describe('switchyard usage', () => {
  it('by key (the default): a row per day and key, a total, then each key now', async () => {
    const r = await run(['--url', t.url, '--days', '2'], { SWITCHYARD_ADMIN_KEY: ADMIN });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^Usage by key, \\d{4}-\\d{2}-\\d{2} to ${today()} \\(UTC days\\), from ${t.url.replace(/\./g, '\\.')}$`));
    expect(lines[2]).toMatch(/^day\s+key\s+requests\s+input\s+cached\s+cache write\s+output\s+cost \(USD\)$/);
    const row = (key: string) => lines.find((l) => l.startsWith(today()) && l.includes(` ${key} `))!.split(/\s{2,}/);
    expect(row('search-prod')).toEqual([today(), 'search-prod', '2', '200', '80', '0', '100', String(2 * GPT)]);
    // One of ads' requests had no price: its cost is never shown as 0.
    expect(row('ads')).toEqual([today(), 'ads', '2', '200', '80', '0', '100', `${GPT} + 1 unpriced`]);
    expect(lines.find((l) => l.startsWith('total'))!.split(/\s{2,}/)).toEqual(['total', '4', '400', '160', '0', '200', `${Number((3 * GPT).toFixed(6))} + 1 unpriced`]);
    const keys = r.stdout.slice(r.stdout.indexOf('Keys now'));
    expect(keys.split('\n')[2]).toMatch(/^key\s+team\s+requests left\s+tokens left\s+in flight\s+budget \(USD\)\s+spent\s+left\s+resets\s+expires$/);
    const search = keys
      .split('\n')
      .find((l) => l.startsWith('search-prod'))!
      .split(/\s{2,}/);
    const tomorrow = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000).toISOString().slice(0, 16);
    expect(search).toEqual(['search-prod', 'search', '58/60', '-', '0/2', '1 daily', String(2 * GPT), String(1 - 2 * GPT), `${tomorrow}Z`, '-']);
    // No limits, no budget: the spend is the request ledger's (its priced request; the unpriced one adds nothing).
    expect(
      keys
        .split('\n')
        .find((l) => l.startsWith('ads'))!
        .split(/\s{2,}/),
    ).toEqual(['ads', '-', '-', '-', '-', '-', String(GPT), '-', '-', '2099-06-30']);
    for (const secret of [ADMIN, SEARCH, ADS]) expect(r.stdout).not.toContain(secret);
  });

  it('mistakes exit 2 before any request; a refused gateway exits 1 saying why', async () => {
    const [noKey, badBy, clientKey] = await Promise.all([
      run(['--url', t.url]),
      run(['--url', t.url, '--by', 'project'], { SWITCHYARD_ADMIN_KEY: ADMIN }),
      run(['--url', t.url], { SWITCHYARD_ADMIN_KEY: SEARCH }),
    ]);
    expect(noKey).toMatchObject({ code: 2, stdout: '' });
    expect(noKey.stderr).toContain('switchyard usage needs an admin key (one of admin.keys in gateway.yaml): set SWITCHYARD_ADMIN_KEY or pass --admin-key');
    expect(badBy).toMatchObject({ code: 2, stderr: '--by must be key, team or model (got "project")\n' });
    expect(clientKey.code).toBe(1);
    expect(clientKey.stderr).toBe(`${t.url} answered 401: Incorrect admin key provided. Client keys cannot read the admin API.\n`);
  });
});

// The same report in process (each CLI run costs a Node start): the other groupings and failures.
describe('usageReport', () => {
  it('by team: a row per day and team (none: -), then each team now; the clients base URL works too', async () => {
    const report = await usageReport({ url: `${t.url}/v1`, adminKey: ADMIN, by: 'team', days: 1 });
    expect(report).toMatch(new RegExp(`^${today()}\\s+search\\s+2\\s+200`, 'm'));
    expect(report).toMatch(new RegExp(`^${today()}\\s+-\\s+2\\s+200`, 'm'));
    expect(report).toContain('Teams now');
    expect(report).toMatch(/^search\s+search-prod\s+-\s+-\s+-\s+10 monthly\s+/m);
  });

  it('by model: an unpriced model costs "unknown", never 0; no key table', async () => {
    const report = await usageReport({ url: t.url, adminKey: ADMIN, by: 'model', days: 7 });
    expect(report).toMatch(new RegExp(`^${today()}\\s+gpt\\s+3\\s+300\\s+120\\s+0\\s+150\\s+${3 * GPT}$`, 'm'));
    expect(report).toMatch(new RegExp(`^${today()}\\s+mystery\\s+1\\s+100\\s+40\\s+0\\s+50\\s+unknown \\(1 unpriced\\)$`, 'm'));
    expect(report).not.toContain('Keys now');
  });

  it('an unreachable gateway is a UsageCommandError naming the URL and the cause', async () => {
    const closed = await closedPort();
    const err = await usageReport({ url: `http://127.0.0.1:${closed}`, adminKey: ADMIN, by: 'key', days: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageCommandError);
    expect((err as Error).message).toBe(`cannot reach the gateway at http://127.0.0.1:${closed}: connect ECONNREFUSED 127.0.0.1:${closed}`);
  });
});
