/**
 * `server.workers: 2` through the real CLI: both workers serve the port; a key's rpm under the
 * memory backend is counted once for both (through the primary); a file edit and SIGHUP reach
 * both, a broken edit is rejected by both; a killed worker is replaced; SIGTERM lets a running
 * stream finish and every process exits.
 */
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, readinessByWorker, request, type RunningCli, startCli, until } from './helpers.ts';

const KEY = 'sk-cluster-test-0123456789';
const LIMITED_KEY = 'sk-cluster-limited-0123456789';
const RPM = 7;

function configYaml(extraModels = ''): string {
  return `
server: { workers: 2, shutdownGraceMs: 10000 }
log: { level: info, format: json }
keys:
  - { name: open, key: ${KEY}, models: ["*"] }
  - { name: limited, key: ${LIMITED_KEY}, models: ["*"], limits: { rpm: ${RPM} } }
providers:
  mock: { plugin: mock }
  slow: { plugin: mock, chunkDelayMs: 40 }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  slow: { targets: [{ provider: slow, model: mock-1 }] }
${extraModels}`;
}

const chat = (port: number, model: string, key = KEY) => request(port, 'POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });

/** A streamed answer on a connection of its own: `started` once the first event arrived. */
function openStream(port: number) {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const body = JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] });
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (text.includes('\n\n')) markStarted();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  return { started, done };
}

describe('server.workers: 2', () => {
  let dir: string;
  let file: string;
  let cli: RunningCli;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cluster-'));
    file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, configYaml());
    cli = await startCli(file);
  });
  afterAll(() => {
    if (cli?.child.exitCode === null) cli.child.kill('SIGKILL');
  });

  it('serves the port from two worker processes, neither of them the primary', async () => {
    const workers = await readinessByWorker(cli.port);
    expect([...workers.keys()].sort()).toHaveLength(2);
    expect(workers.has(cli.child.pid!)).toBe(false);
    expect(new Set([...workers.values()].map((w) => w.worker.id))).toEqual(new Set([1, 2]));
    const answers = await Promise.all(Array.from({ length: 6 }, () => chat(cli.port, 'demo')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    // Request log lines say which worker wrote them (the log is flushed every 200 ms).
    await until(
      'request lines from both workers',
      async () =>
        new Set(
          cli
            .lines()
            .filter((l) => l.msg === 'request' && l.key === 'open')
            .map((l) => l.worker),
        ),
      (workers) => workers.size === 2 && workers.has(1) && workers.has(2),
    );
  });

  it('/metrics on any worker reports the sum of every worker (no counter jumping between scrapes)', async () => {
    const total = (text: string, name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    // The six requests of the test before, which both workers served.
    for (let i = 0; i < 4; i++) {
      const scrape = await request(cli.port, 'GET', '/metrics');
      expect(scrape.status).toBe(200);
      expect(total(scrape.body, 'switchyard_requests_total')).toBe(6);
      // Histograms too (the gateway's own, src/observability/series-histogram.ts): a count per request.
      expect(total(scrape.body, 'switchyard_overhead_seconds_count')).toBe(6);
      expect(total(scrape.body, 'switchyard_config_generation')).toBe(1);
    }
  });

  it('counts a key’s rpm once for both workers (memory backend, through the primary)', async () => {
    // Enough that each worker gets more than RPM even when a loaded machine skews the kernel's
    // spread of connections (5 of 30 to one worker was seen in CI).
    const SENT = 60;
    const answers = await Promise.all(Array.from({ length: SENT }, () => chat(cli.port, 'demo', LIMITED_KEY)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(RPM);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(SENT - RPM);
    // Each worker answered more than RPM of them: counted per worker, more than RPM would have passed.
    const lines = await until(
      'a request line for every request',
      async () => cli.lines().filter((l) => l.msg === 'request' && l.key === 'limited'),
      (l) => l.length === SENT,
    );
    for (const worker of [1, 2]) expect(lines.filter((l) => l.worker === worker).length, `requests worker ${worker} answered`).toBeGreaterThan(RPM);
  });

  it('a file edit reaches every worker', async () => {
    writeFileSync(file, configYaml('  fresh: { targets: [{ provider: mock, model: mock-2 }] }'));
    const workers = await until(
      'both workers on the edited file',
      () => readinessByWorker(cli.port),
      (w) => w.size === 2 && [...w.values()].every((r) => r.models.includes('fresh')),
    );
    for (const r of workers.values()) expect(r.lastReload).toMatchObject({ ok: true, generation: 2, trigger: `file changed: ${file}` });
    const answers = await Promise.all(Array.from({ length: 6 }, () => chat(cli.port, 'fresh')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
  });

  it('a broken edit is rejected by every worker, and the last good config keeps serving', async () => {
    writeFileSync(file, configYaml('  broken: { targets: [{ provider: nowhere, model: x }] }'));
    const workers = await until(
      'both workers rejecting the edit',
      () => readinessByWorker(cli.port),
      (w) => w.size === 2 && [...w.values()].every((r) => r.lastReload?.ok === false),
    );
    for (const r of workers.values()) {
      expect(r.generation).toBe(2);
      expect(r.lastReload?.errors?.join('\n')).toContain('unknown provider "nowhere"');
    }
    const answers = await Promise.all(Array.from({ length: 4 }, () => chat(cli.port, 'fresh')));
    expect(answers.map((a) => a.status)).toEqual(Array(4).fill(200));
  });

  it('SIGHUP to the primary reloads every worker', async () => {
    writeFileSync(file, configYaml('  fresh: { targets: [{ provider: mock, model: mock-2 }] }'));
    await until(
      'both workers back on a good file',
      () => readinessByWorker(cli.port),
      (w) => w.size === 2 && [...w.values()].every((r) => r.lastReload?.ok === true),
    );
    cli.child.kill('SIGHUP');
    const workers = await until(
      'both workers reloaded by SIGHUP',
      () => readinessByWorker(cli.port),
      (w) => w.size === 2 && [...w.values()].every((r) => r.lastReload?.trigger === 'SIGHUP'),
    );
    for (const r of workers.values()) expect(r.lastReload?.ok).toBe(true);
  });

  it('replaces a worker that dies, on the current config', async () => {
    const before = await readinessByWorker(cli.port);
    const [victim, survivor] = [...before.keys()];
    process.kill(victim!, 'SIGKILL');
    const after = await until(
      'a replacement worker',
      () => readinessByWorker(cli.port),
      (w) => w.size === 2 && !w.has(victim!),
    );
    expect(after.has(survivor!)).toBe(true);
    const replacement = [...after.values()].find((r) => r.worker.pid !== survivor)!;
    expect(replacement.worker.id).toBe(3);
    expect(replacement.models).toContain('fresh');
    expect(cli.lines().some((l) => l.level === 50 && typeof l.msg === 'string' && l.msg.includes(`(pid ${victim}) died (signal SIGKILL)`))).toBe(true);
  });

  it('SIGTERM: a running stream finishes intact, then every process exits 0', async () => {
    const pids = [...(await readinessByWorker(cli.port)).keys()];
    const stream = openStream(cli.port);
    await stream.started;
    cli.child.kill('SIGTERM');
    const { status, text } = await stream.done;
    expect(status).toBe(200);
    expect(text).not.toContain('shutting_down');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await cli.exited).toBe(0);
    for (const pid of pids) expect(alive(pid), `worker ${pid} still running`).toBe(false);
  });
});

describe('server.workers: 2, when the primary dies', () => {
  it('the workers shut down too (no orphan keeps the port)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cluster-'));
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, configYaml());
    const cli = await startCli(file);
    try {
      const pids = [
        ...(
          await until(
            'both workers',
            () => readinessByWorker(cli.port),
            (w) => w.size === 2,
          )
        ).keys(),
      ];
      cli.child.kill('SIGKILL');
      await until(
        'the workers exiting',
        async () => pids.filter(alive),
        (left) => left.length === 0,
      );
    } finally {
      cli.child.kill('SIGKILL');
    }
  });
});
