/** The switchyard command as an operator runs it. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { ROOT } from '../helpers/paths.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');

function run(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('switchyard validate', () => {
  it('accepts the repository gateway.yaml (exit 0) and warns about unset provider keys', async () => {
    const r = await run(['validate', 'gateway.yaml'], { env: { OPENAI_API_KEY: '' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^gateway\.yaml: OK \(\d+ models, \d+ providers, 6 stages\)/);
    expect(r.stderr).toContain('warning: providers.openai.apiKey: environment variable OPENAI_API_KEY is not set');
  });

  it('rejects a broken file with every error on stderr (exit 1)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cli-'));
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(file, 'providers:\n  mock: { plugin: mock }\nmodels:\n  demo:\n    targets: [{ provider: mokc, model: m }]\n    retries: 3\npipeline: [route, transform-response]\n');
    const r = await run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `${file}:5:27 models.demo.targets[0].provider: unknown provider "mokc" (did you mean "mock"?) (known: mock)`,
      `${file}:6:5 models.demo.retries: unknown field "retries" (known: description, dropUnsupportedParams, strategy, retry, targets, timeout, cooldown, fallbacks)`,
      '2 errors: the configuration was not loaded',
    ]);
  });
});

describe('switchyard serve', () => {
  it('npm start serves the embedded demo on the port asked for and logs how to call it', async () => {
    const child = spawn(process.execPath, [BIN, '--port', '0', '--config', 'gateway.yaml'], { cwd: ROOT, env: { ...process.env, OPENAI_API_KEY: '' } });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no listening line in: ${out}`)), 15_000);
        child.stdout.on('data', (d) => {
          out += d;
          const m = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out);
          if (m) {
            clearTimeout(timer);
            expect(out).toContain('demo → mock/mock-1');
            resolve(m[1]);
          }
        });
      });
      const client = new OpenAI({ baseURL: url, apiKey: 'sk-switchyard-dev', maxRetries: 0 });
      const r = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] });
      expect(r.choices[0].message.content).toContain('mock provider');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
