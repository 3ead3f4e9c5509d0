/**
 * The gateway as Kubernetes runs it: the real `switchyard` bin, gateway.yaml from a ConfigMap
 * volume and provider and admin keys from a Secret volume (`${file:...}`), both rebuilt in a
 * temporary folder exactly as K8S_LAYOUT says and updated by the kubelet's `..data` swap. With one
 * process and with `server.workers: 2`, under a continuous loop of requests: a ConfigMap update and
 * a Secret rotation are applied within 2 s with no failed request, a swap to identical content
 * reloads nothing, a key added to the Secret makes its provider available, and a broken edit is
 * rejected with file:line:col while the old generation keeps serving. The times are printed.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from 'switchyard-gateway/kit/testing';
import { request, type RunningCli, startCli } from '../cluster/helpers.ts';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { ProjectedVolume } from '../helpers/k8s-volume.ts';

const CLIENT_KEY = 'sk-k8s-client-0123456789';
const ADMIN_KEY = 'sk-k8s-admin-0123456789abcdef';
const OLD_KEY = 'sk-upstream-old-0123456789';
const NEW_KEY = 'sk-upstream-new-9876543210';
const SECOND_KEY = 'sk-upstream-second-5555555555';
/** What the issue asks: a change is serving within this long of the swap. */
const APPLY_WITHIN_MS = 2_000;

interface Readiness {
  generation: number;
  models: string[];
  worker?: { pid: number };
  lastReload?: { ok: boolean; generation: number; trigger: string; errors?: string[] };
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await sleep(20)) if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
}

/** Sends chat requests on `loops` connections of their own, back to back, counting every failure. */
function loadLoop(port: number, models: () => string[], loops = 2) {
  const stats = { ok: 0, failed: [] as string[] };
  let running = true;
  const loop = async (n: number) => {
    for (let i = n; running; i++) {
      const list = models();
      const model = list[i % list.length];
      const answer = await request(port, 'POST', '/v1/chat/completions', { key: CLIENT_KEY, body: { model, messages: [{ role: 'user', content: 'hi' }] } }).catch((err: Error) => ({
        status: 0,
        body: err.message,
      }));
      if (answer.status === 200) stats.ok++;
      else stats.failed.push(`${model}: ${answer.status} ${answer.body.slice(0, 200)}`);
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, n) => loop(n)));
  return {
    stats,
    async stop() {
      running = false;
      await done;
      return stats;
    },
  };
}

describe.each([1, 2])('Kubernetes ConfigMap and Secret volumes, server.workers: %i', (workers) => {
  let root: string;
  let config: ProjectedVolume;
  let secrets: ProjectedVolume;
  let upstream: FakeUpstream;
  let cli: RunningCli;
  /** The upstream keys the fake provider accepts right now (a real rotation overlaps old and new). */
  let accepted = new Set([OLD_KEY]);
  const times: Record<string, number> = {};
  /** Requests answered during each step's load loop (none failed, or the step fails). */
  const served: Record<string, number> = {};

  const gatewayYaml = (extraModels = '') => `server: { workers: ${workers}, shutdownGraceMs: 3000 }
log: { level: info, format: json }
state: { backend: memory, file: ${path.join(root, K8S_LAYOUT.stateDir, 'state.sqlite')} }
keys:
  - { name: app, key: ${CLIENT_KEY}, models: ["*"] }
admin:
  keys:
    - { name: ops, key: "\${file:secrets/admin-key}" }
providers:
  mock: { plugin: mock }
  upstream: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: "\${file:secrets/openai-api-key}" }
  second: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: "\${file:${path.join(root, K8S_LAYOUT.secretsDir)}/second-api-key}" }
models:
  demo: { targets: [{ provider: mock, model: m }] }
  up: { targets: [{ provider: upstream, model: up-1 }] }
  later: { targets: [{ provider: second, model: up-2 }] }
${extraModels}`;
  const secretFiles = (openaiKey: string, extra: Record<string, string> = {}) => ({ 'openai-api-key': `${openaiKey}\n`, 'admin-key': ADMIN_KEY, ...extra });

  /** /readyz of every process serving the port, by pid (0 for a lone process). */
  async function readiness(): Promise<Map<number, Readiness>> {
    const seen = new Map<number, Readiness>();
    for (let i = 0; i < 12 && seen.size < workers; i++) {
      const r = await request(cli.port, 'GET', '/readyz').catch(() => undefined);
      if (r?.status !== 200) continue;
      const body = JSON.parse(r.body) as Readiness;
      seen.set(body.worker?.pid ?? 0, body);
    }
    return seen;
  }

  /** Milliseconds from now until every process's readiness satisfies `done`; fails after `ms`. */
  async function timeUntil(what: string, done: (r: Readiness) => boolean, ms = 8_000): Promise<number> {
    const started = performance.now();
    let last: Map<number, Readiness> = new Map();
    while (performance.now() - started < ms) {
      last = await readiness();
      if (last.size === workers && [...last.values()].every(done)) return Math.round(performance.now() - started);
      await sleep(20);
    }
    throw new Error(`${what}: not within ${ms} ms; last seen ${JSON.stringify([...last])}`);
  }

  /**
   * The gateway's own times, without the test's polling (log lines carry the epoch ms they were
   * written at): from the swap to the line saying it was noticed, and to the last process's line
   * saying it serves `generation`.
   */
  async function loggedTimes(swappedAt: number, generation: number): Promise<{ noticed: number; reloaded: number }> {
    const said = (prefix: string) => cli.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith(prefix) && Number(l.time) >= swappedAt);
    const reloaded = () => said('reloaded ').filter((l) => String(l.msg).includes(`(generation ${generation}):`));
    // Log lines are written in batches, at least every 200 ms.
    await waitFor(() => reloaded().length === workers && said('noticed ').length > 0, 3_000);
    return { noticed: Number(said('noticed ')[0]?.time) - swappedAt, reloaded: Math.max(...reloaded().map((l) => Number(l.time))) - swappedAt };
  }

  const generations = async () => [...(await readiness()).values()].map((r) => r.generation);

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'switchyard-k8s-'));
    mkdirSync(path.join(root, K8S_LAYOUT.stateDir), { recursive: true });
    upstream = await startFakeUpstream((req) => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!accepted.has(key)) return { status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };
      return {
        status: 200,
        body: {
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: req.body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'from upstream' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
        },
      };
    });
    config = new ProjectedVolume(path.join(root, K8S_LAYOUT.configDir), { [K8S_LAYOUT.configFile]: gatewayYaml() });
    secrets = new ProjectedVolume(path.join(root, K8S_LAYOUT.secretsDir), secretFiles(OLD_KEY));
    // Three processes start slowly on a busy 2-core machine; the times measured are after the start.
    cli = await startCli(config.path(K8S_LAYOUT.configFile), 60_000);
  }, 70_000);

  afterAll(async () => {
    if (cli?.child.exitCode === null) {
      cli.child.kill('SIGTERM');
      await Promise.race([cli.exited, sleep(8_000)]);
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    await upstream?.close();
    console.info(
      `[k8s reload, workers: ${workers}] ${Object.entries(times)
        .map(([k, v]) => `${k} ${v} ms`)
        .join(', ')}; requests served: ${JSON.stringify(served)}`,
    );
  }, 20_000);

  it('serves with the keys read from the Secret files, and a provider whose file is missing is unavailable', async () => {
    expect(await generations()).toEqual(Array(workers).fill(1));
    const up = await request(cli.port, 'POST', '/v1/chat/completions', { key: CLIENT_KEY, body: { model: 'up', messages: [{ role: 'user', content: 'hi' }] } });
    expect(up.status).toBe(200);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${OLD_KEY}`);
    expect((await request(cli.port, 'GET', '/admin/v1/keys', { key: ADMIN_KEY })).status).toBe(200);
    expect((await request(cli.port, 'GET', '/admin/v1/keys', { key: CLIENT_KEY })).status).toBe(401);
    const later = await request(cli.port, 'POST', '/v1/chat/completions', { key: CLIENT_KEY, body: { model: 'later', messages: [{ role: 'user', content: 'hi' }] } });
    expect(later.status).toBe(503);
    expect(JSON.parse(later.body).error.code).toBe('provider_unavailable');
    // The operator is told why, with the position; the client is not shown file paths.
    const warning = cli.lines().find((l) => typeof l.msg === 'string' && l.msg.includes('second-api-key'));
    expect(warning).toMatchObject({ line: 12, path: 'providers.second.apiKey' });
    expect(warning?.msg).toBe(
      `config warning: cannot read the file ${secrets.path('second-api-key')} (no such file): provider "second" is unavailable until the file can be read (a change to it reloads)`,
    );
  });

  it('applies a ConfigMap ..data swap within 2 s under load, with no failed request', async () => {
    let models = ['demo', 'up'];
    const load = loadLoop(cli.port, () => models);
    await waitFor(() => load.stats.ok >= 5);
    const before = load.stats.ok;
    const swappedAt = Date.now();
    config.update({ [K8S_LAYOUT.configFile]: gatewayYaml('  extra: { targets: [{ provider: mock, model: m2 }] }\n') });
    times.configMapSwap = await timeUntil('the new alias on every process', (r) => r.generation === 2 && r.models.includes('extra'));
    const configMapLogged = await loggedTimes(swappedAt, 2);
    times.configMapNoticed = configMapLogged.noticed;
    times.configMapReloaded = configMapLogged.reloaded;
    models = ['demo', 'up', 'extra'];
    await sleep(400);
    const stats = await load.stop();
    served.configMapSwap = stats.ok;
    expect(stats.failed).toEqual([]);
    expect(stats.ok - before).toBeGreaterThan(5);
    expect(times.configMapSwap).toBeLessThan(APPLY_WITHIN_MS);
    const noticed = cli.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('noticed file changed:'));
    expect(noticed.map((l) => l.msg)).toEqual([`noticed file changed: ${config.path(K8S_LAYOUT.configFile)}: ${workers > 1 ? 'reloading every worker' : 'reloading'}`]);
  });

  it('rotates the provider key from the Secret within 2 s under load, with no failed request', async () => {
    accepted = new Set([OLD_KEY, NEW_KEY]);
    const load = loadLoop(cli.port, () => ['up', 'demo']);
    await waitFor(() => load.stats.ok >= 5);
    const swappedAt = Date.now();
    secrets.update(secretFiles(NEW_KEY));
    times.secretRotation = await timeUntil('the rotated key on every process', (r) => r.generation === 3);
    const secretLogged = await loggedTimes(swappedAt, 3);
    times.secretNoticed = secretLogged.noticed;
    times.secretReloaded = secretLogged.reloaded;
    // The old key is revoked upstream: every process must be using the new one now.
    const sentBefore = upstream.requests.length;
    accepted = new Set([NEW_KEY]);
    await sleep(600);
    const stats = await load.stop();
    served.secretRotation = stats.ok;
    expect(stats.failed).toEqual([]);
    const after = upstream.requests.slice(sentBefore);
    expect(after.length).toBeGreaterThan(5);
    expect(after.every((r) => r.headers.authorization === `Bearer ${NEW_KEY}`)).toBe(true);
    expect(times.secretRotation).toBeLessThan(APPLY_WITHIN_MS);
    expect(cli.lines().some((l) => l.msg === `noticed file changed: ${secrets.path('openai-api-key')}: ${workers > 1 ? 'reloading every worker' : 'reloading'}`)).toBe(true);
  });

  it('a swap to identical content, of the ConfigMap or the Secret, reloads nothing', async () => {
    const linesBefore = cli.lines().length;
    config.update({ [K8S_LAYOUT.configFile]: gatewayYaml('  extra: { targets: [{ provider: mock, model: m2 }] }\n') });
    secrets.update(secretFiles(NEW_KEY));
    await sleep(1_000);
    expect(await generations()).toEqual(Array(workers).fill(3));
    const said = cli
      .lines()
      .slice(linesBefore)
      .map((l) => l.msg);
    expect(said.some((m) => typeof m === 'string' && m.includes('no watched file did (same content): not reloading'))).toBe(true);
    expect(said.filter((m) => typeof m === 'string' && /^(noticed|reloaded)/.test(m))).toEqual([]);
  });

  it('a key added to the Secret makes the provider that names it available', async () => {
    secrets.update(secretFiles(NEW_KEY, { 'second-api-key': SECOND_KEY }));
    accepted = new Set([NEW_KEY, SECOND_KEY]);
    times.secretKeyAdded = await timeUntil('the new key on every process', (r) => r.generation === 4);
    for (let i = 0; i < 4; i++) {
      const later = await request(cli.port, 'POST', '/v1/chat/completions', { key: CLIENT_KEY, body: { model: 'later', messages: [{ role: 'user', content: 'hi' }] } });
      expect(later.status).toBe(200);
    }
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECOND_KEY}`);
  });

  it('a broken ConfigMap edit is rejected with file:line:col and the old generation keeps serving', async () => {
    const load = loadLoop(cli.port, () => ['demo', 'up', 'extra']);
    await waitFor(() => load.stats.ok >= 5);
    config.update({ [K8S_LAYOUT.configFile]: gatewayYaml('  extra: { targets: [{ provider: mocks, model: m2 }] }\n') });
    times.brokenEditRejected = await timeUntil('the rejection on every process', (r) => r.lastReload?.ok === false);
    await sleep(300);
    const stats = await load.stop();
    served.brokenEdit = stats.ok;
    expect(stats.failed).toEqual([]);
    for (const r of (await readiness()).values()) {
      expect(r.generation).toBe(4);
      expect(r.lastReload?.errors).toEqual(['gateway.yaml:17:34 models.extra.targets[0].provider: unknown provider "mocks" (did you mean "mock"?) (known: mock, upstream, second)']);
    }
    // Nothing a log line said gives a secret away.
    for (const secret of [ADMIN_KEY, OLD_KEY, NEW_KEY, SECOND_KEY]) expect(cli.output()).not.toContain(secret);
  });
});
