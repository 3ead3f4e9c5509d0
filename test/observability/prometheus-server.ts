/**
 * A real Prometheus server for the tests: loopback only, a free port, its TSDB in a temporary
 * folder, scraping every second and evaluating the repo's rules file every second. Queries go
 * through its HTTP API, as Grafana's would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prometheusTool } from './helpers.ts';

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  url: string;
  /** An instant query now; throws with Prometheus's error when it fails. */
  query(expr: string): Promise<PromSample[]>;
  /** Polls `expr` until `accept` holds (the scrape and rule intervals are 1 s). */
  waitFor(expr: string, accept: (samples: PromSample[]) => boolean, what: string, timeoutMs?: number): Promise<PromSample[]>;
  /** GET an API path (e.g. /api/v1/rules) and return its `data`. */
  api<T>(pathAndQuery: string): Promise<T>;
  close(): Promise<void>;
}

/** A port free on 127.0.0.1 now (Prometheus takes an address, not port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPrometheus(opts: { target: string; metricsPath: string; ruleFiles: string[] }): Promise<PrometheusServer> {
  const binary = prometheusTool('prometheus');
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: ${JSON.stringify(opts.ruleFiles)}`,
      'scrape_configs:',
      `  - { job_name: switchyard, metrics_path: ${JSON.stringify(opts.metricsPath)}, static_configs: [{ targets: [${JSON.stringify(opts.target)}] }] }`,
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(binary, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d));
  child.stderr!.on('data', (d: Buffer) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };

  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 300) {
      await close();
      throw new Error(`prometheus was not ready after 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const api = async <T>(pathAndQuery: string): Promise<T> => {
    const res = await fetch(`${url}${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string; warnings?: string[] };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error}`);
    if (body.warnings?.length) throw new Error(`prometheus ${pathAndQuery} warned: ${body.warnings.join('; ')}`);
    return body.data;
  };
  const query = async (expr: string): Promise<PromSample[]> => {
    const data = await api<{ resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
    if (data.resultType !== 'vector') throw new Error(`${expr}: a ${data.resultType}, not a vector`);
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  return {
    url,
    query,
    api,
    async waitFor(expr, accept, what, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      let last: PromSample[] = [];
      while (Date.now() < until) {
        last = await query(expr);
        if (accept(last)) return last;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`prometheus never showed ${what}; ${expr} gave ${JSON.stringify(last)}`);
    },
    close,
  };
}
