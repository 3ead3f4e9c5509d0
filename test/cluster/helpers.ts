/**
 * Driving `switchyard` with `server.workers` as an operator would: the real bin, real processes,
 * one fresh TCP connection per request (the cluster hands each connection to the next worker, so
 * a kept-alive connection would always reach the same one).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../helpers/repo.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');

export interface Answer {
  status: number;
  body: string;
}

/** One request on a connection of its own. */
export function request(port: number, method: string, url: string, options: { body?: unknown; key?: string; timeoutMs?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = payload ? { 'content-type': 'application/json' } : {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    const timeoutMs = options.timeoutMs ?? 2_000;
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface Readiness {
  generation: number;
  models: string[];
  worker: { id: number; pid: number };
  lastReload?: { ok: boolean; trigger: string; generation: number; errors?: string[] };
}

/** /readyz asked `tries` times on fresh connections: what each worker that answered said, by pid. */
export async function readinessByWorker(port: number, tries = 6): Promise<Map<number, Readiness>> {
  const seen = new Map<number, Readiness>();
  for (let i = 0; i < tries; i++) {
    // A connection handed to a worker at the moment it is killed gets no answer: ask again.
    const r = await request(port, 'GET', '/readyz').catch(() => undefined);
    if (r?.status !== 200) continue;
    const body = JSON.parse(r.body) as Readiness;
    seen.set(body.worker.pid, body);
  }
  return seen;
}

/** Polls `probe` until `done` holds, or fails naming what was last seen. */
export async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 8_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; last seen ${JSON.stringify(last instanceof Map ? [...last] : last)}`);
    await sleep(50);
    last = await probe();
  }
  return last;
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** Every JSON log line so far (the primary's and the workers'). */
  lines(): Array<Record<string, unknown>>;
  output(): string;
  exited: Promise<number | null>;
}

/** `switchyard --port 0 --config <file>`, once it says it is listening (within `startMs`: more on a busy machine). */
export async function startCli(config: string, startMs = 45_000): Promise<RunningCli> {
  const child = spawn(process.execPath, [BIN, '--port', '0', '--config', config], { cwd: path.dirname(config), env: { ...process.env } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let m: RegExpExecArray | null = null;
  for (const deadline = Date.now() + startMs; !(m = /Switchyard listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(out)) && Date.now() < deadline && child.exitCode === null; ) await sleep(20);
  if (!m) {
    child.kill('SIGKILL');
    throw new Error(`no listening line in: ${out}`);
  }
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, port: Number(m[1]), lines, output: () => out, exited };
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
