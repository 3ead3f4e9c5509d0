/**
 * `server.workers: 2` when the primary is killed (-9) while the workers are streaming: each
 * worker drains instead of exiting at once (Node's cluster child would), so every in-flight stream
 * ends with all its bytes and [DONE], each request is on the books (the SQLite ledger the workers
 * write) at its exact price, the primary's death is logged once per worker, and then the workers
 * exit.
 */
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream, streamAnswer } from '../../src/kit/testing/index.ts';
import { alive, readinessByWorker, type RunningCli, startCli, until } from './helpers.ts';

const KEY = 'sk-cluster-death-0123456789';
const WORDS = 25;
const GAP_MS = 100;
const STREAMS = 6;
/** 10 + 20 tokens at $1,000 per million each: $0.03 a request, exactly. */
const USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
const COST_NANO = 30_000_000;

const event = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
const chunk = (content: string, finish: string | null = null) =>
  event({ id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

/** A streamed answer on a connection of its own (so the cluster spreads them over both workers). */
function openStream(port: number) {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<{ status: number; id: string; text: string }>((resolve, reject) => {
    const body = JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'a long story' }] });
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (text.includes('\n\n')) markStarted();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']), text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  return { started, done };
}

describe('server.workers: 2, the primary killed mid-stream', () => {
  let upstream: FakeUpstream;
  let cli: RunningCli | undefined;
  let dir: string;
  beforeAll(async () => {
    upstream = await startFakeUpstream(() =>
      streamAnswer(
        [
          ...Array.from({ length: WORDS }, (_, i) => chunk(`w${i} `)),
          chunk('', 'stop'),
          event({ id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: USAGE }),
          'data: [DONE]\n\n',
        ],
        {
          gapMs: GAP_MS,
        },
      ),
    );
    dir = mkdtempSync(path.join(tmpdir(), 'switchyard-primary-death-'));
  });
  afterAll(async () => {
    if (cli?.child.exitCode === null) cli.child.kill('SIGKILL');
    await upstream?.close();
  });

  it('every in-flight stream completes, is booked at its price, and the workers then exit', async () => {
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `
server: { workers: 2, shutdownGraceMs: 15000 }
log: { level: info, format: json }
state: { backend: memory, file: state.sqlite, ledger: { flushMs: 100 } }
keys:
  - { name: client, key: ${KEY}, models: ["*"] }
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-upstream-death-test }
models:
  slow: { retry: { attempts: 1 }, targets: [{ provider: up, model: m, price: { input: 1000, output: 1000 } }] }
`,
    );
    cli = await startCli(file, 40_000);
    const pids = [
      ...(
        await until(
          'both workers',
          () => readinessByWorker(cli!.port),
          (w) => w.size === 2,
        )
      ).keys(),
    ];

    const streams = Array.from({ length: STREAMS }, () => openStream(cli!.port));
    await Promise.all(streams.map((s) => s.started));
    cli.child.kill('SIGKILL');

    const answers = await Promise.all(streams.map((s) => s.done));
    for (const { status, text } of answers) {
      expect(status).toBe(200);
      expect(text).not.toContain('shutting_down');
      for (let i = 0; i < WORDS; i++) expect(text).toContain(`w${i} `);
      expect(text).toContain('"finish_reason":"stop"');
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    }
    await until(
      'the workers exiting',
      async () => pids.filter(alive),
      (left) => left.length === 0,
      20_000,
    );

    // Both workers served streams, and each said once that the primary was gone.
    const gone = cli.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the cluster primary is gone'));
    expect(gone.map((l) => l.worker).sort()).toEqual([1, 2]);

    const db = new DatabaseSync(path.join(dir, 'state.sqlite'), { readOnly: true });
    try {
      const rows = answers.map(({ id }) => db.prepare('SELECT status, cost_nano, output_tokens FROM ledger_requests WHERE id = ?').all(id));
      for (const row of rows) expect(row).toEqual([{ status: 200, cost_nano: COST_NANO, output_tokens: USAGE.completion_tokens }]);
    } finally {
      db.close();
    }
    expect(upstream.requests).toHaveLength(STREAMS);
  }, 60_000);
});
