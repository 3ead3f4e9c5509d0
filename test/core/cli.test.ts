/** The switchyard command as an operator runs it. */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import YAML from 'yaml';
import { ROOT } from '../helpers/repo.ts';
import { parseConfigFile } from '../../src/config/load.ts';
import { buildKeyIndex, keyFinder } from '../../src/runtime/keys.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');

function run(args: string[], opts: { env?: NodeJS.ProcessEnv; node?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(opts.node ?? process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `switchyard --port 0 ...` and waits for its listening line. */
async function serve(args: string[], cwd: string) {
  const child = spawn(process.execPath, [BIN, '--port', '0', ...args], { cwd, env: { ...process.env, OPENAI_API_KEY: '' } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const deadline = Date.now() + 15_000;
  let m: RegExpExecArray | null = null;
  while (!(m = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (!m) {
    child.kill();
    throw new Error(`no listening line in: ${out}`);
  }
  return { child, url: m[1], output: () => out };
}

/** A Node on this machine older than package.json's engines minimum (e.g. the distribution's), if any. */
function olderNode(): string | undefined {
  const minimum = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node.replace(/^>=/, '');
  const older = (v: string) =>
    v
      .split('.')
      .map(Number)
      .reduce((cmp, part, i) => cmp || part - Number(minimum.split('.')[i]), 0) < 0;
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (older(version)) return candidate;
  }
  return undefined;
}

describe('switchyard --version and --help', () => {
  it('prints the package version', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}\n`);
  });

  it('lists every subcommand', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const usage of ['switchyard [serve]', 'switchyard validate [FILE] [--strict]', 'switchyard plugin new provider|stage NAME', 'switchyard key new', 'switchyard --version', 'switchyard --help'])
      expect(r.stdout).toContain(usage);
  });
});

describe('switchyard key new', () => {
  it('prints a fresh random key and its keyHash line, as YAML; a gateway with that keyHash accepts the key', async () => {
    const [first, second] = [await run(['key', 'new']), await run(['key', 'new'])];
    expect(first.code, first.stderr).toBe(0);
    const printed = YAML.parse(first.stdout) as { key: string; keyHash: string };
    expect(Object.keys(printed)).toEqual(['key', 'keyHash']);
    expect(printed.key).toMatch(/^sk-sy-[A-Za-z0-9_-]{43}$/);
    expect(printed.keyHash).toBe(`sha256:${createHash('sha256').update(printed.key).digest('hex')}`);
    expect((YAML.parse(second.stdout) as { key: string }).key).not.toBe(printed.key);
    expect(first.stdout).toMatch(/^keyHash: sha256:[0-9a-f]{64}$/m);

    // The printed line, pasted into a key entry, is a valid config that knows the key.
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cli-'));
    const file = path.join(dir, 'gateway.yaml');
    const keyHashLine = first.stdout.split('\n').find((l) => l.startsWith('keyHash: '));
    writeFileSync(file, `keys:\n  - name: fresh\n    ${keyHashLine}\nproviders:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n`);
    const parsed = await parseConfigFile(file, {});
    expect(parsed.source.issues).toEqual([]);
    expect(keyFinder(buildKeyIndex(parsed.config!.keys))(printed.key)?.name).toBe('fresh');
  });

  it('anything else is a usage mistake (exit 2)', async () => {
    const r = await run(['key', 'old']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('usage: switchyard key new\n');
  });
});

describe('switchyard validate', () => {
  it('accepts the repository gateway.yaml (exit 0) and warns about unset provider keys', async () => {
    const r = await run(['validate', 'gateway.yaml'], { env: { OPENAI_API_KEY: '' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^gateway\.yaml: OK \(\d+ models, \d+ providers, 6 stages\)/);
    expect(r.stderr).toContain('warning: providers.openai.apiKey: environment variable OPENAI_API_KEY is not set');
  });

  it('--strict fails (exit 1) when a provider would be unavailable, and passes once its variable is set', async () => {
    const unset = await run(['validate', 'gateway.yaml', '--strict'], { env: { OPENAI_API_KEY: '' } });
    expect(unset.code).toBe(1);
    expect(unset.stdout).toBe('');
    expect(unset.stderr).toContain('warning: providers.openai.apiKey: environment variable OPENAI_API_KEY is not set');
    expect(unset.stderr).toContain('gateway.yaml: --strict: provider openai would be unavailable');
    const set = await run(['validate', 'gateway.yaml', '--strict'], { env: { OPENAI_API_KEY: 'sk-test-strict' } });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^gateway\.yaml: OK/);
  });

  it('rejects a broken file with every error on stderr (exit 1)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-cli-'));
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(file, 'providers:\n  mock: { plugin: mock }\nmodels:\n  demo:\n    targets: [{ provider: mokc, model: m }]\n    retries: 3\npipeline: [route, transform-response]\n');
    const r = await run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `${file}:5:27 models.demo.targets[0].provider: unknown provider "mokc" (did you mean "mock"?) (known: mock)`,
      `${file}:6:5 models.demo.retries: unknown field "retries" (known: description, dropUnsupportedParams, strict, strategy, retry, targets, timeout, cooldown, fallbacks)`,
      '2 errors: the configuration was not loaded',
    ]);
  });
});

describe('switchyard serve', () => {
  it('npm start serves the embedded demo on the port asked for and logs how to call it', async () => {
    const { child, url, output } = await serve(['--config', 'gateway.yaml'], ROOT);
    try {
      expect(output()).toContain('demo → mock/mock-1');
      // The example's dev key is public: the hint can be pasted as is.
      expect(output()).toMatch(/curl http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions -H \\?"Authorization: Bearer sk-switchyard-dev\\?"/);
      const client = new OpenAI({ baseURL: url, apiKey: 'sk-switchyard-dev', maxRetries: 0 });
      const r = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] });
      expect(r.choices[0].message.content).toContain('mock provider');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('switchyard serve: V8 heap flags', () => {
  // Linux only: the flags are read back from /proc. The bin replaces itself (process.execve), so
  // the pid the test started is the gateway's.
  it.runIf(process.platform === 'linux')('applies --max-semi-space-size, --heap-growing-percent and --no-concurrent-recompilation by itself, and a fixed malloc mmap threshold', async () => {
    const { child } = await serve(['--config', 'gateway.yaml'], ROOT);
    try {
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toContain('--max-semi-space-size=8');
      expect(argv).toContain('--heap-growing-percent=25');
      expect(argv).toContain('--no-concurrent-recompilation');
      expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('switchyard on a Node older than package.json engines', () => {
  const old = olderNode();
  it.skipIf(!old)(
    old ? `validate and --version work under ${old} (re-run under Node 24 from ~/.node24)` : 'skipped: no Node older than the engines minimum on this machine',
    async () => {
      const version = await run(['--version'], { node: old });
      expect(version.code).toBe(0);
      const r = await run(['validate', 'gateway.yaml'], { node: old, env: { OPENAI_API_KEY: '' } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^gateway\.yaml: OK/);
    },
    180_000,
  );
});

describe('switchyard serve: reloading a multi-file plugin', () => {
  it('re-imports every file of a plugin folder when one of them changes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-reload-'));
    const pluginDir = path.join(dir, 'plugins', 'canned');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(pluginDir, { recursive: true });
    writeFileSync(path.join(pluginDir, 'reply.ts'), "export const reply: string = 'first reply';\n");
    writeFileSync(
      path.join(pluginDir, 'index.ts'),
      `import { reply } from './reply.ts';
export default {
  apiVersion: 1, kind: 'provider', id: 'canned', optionsSchema: { type: 'object' },
  create: () => ({
    send: async () => ({ kind: 'json', body: {}, headers: {} }),
    toCompletion: (_body: unknown, call: { model: string }) => ({ id: 'x', object: 'chat.completion', created: 0, model: call.model, choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }] }),
    createStreamTranslator: () => ({ push: () => undefined }),
  }),
};
`,
    );
    writeFileSync(
      path.join(dir, 'gateway.yaml'),
      'keys: [{ name: k, key: sk-reload-12345678 }]\nproviders:\n  canned: { plugin: ./plugins/canned }\nmodels:\n  demo: { targets: [{ provider: canned, model: c }] }\nlog: { level: info, format: json }\n',
    );
    const { child, url, output } = await serve(['--config', path.join(dir, 'gateway.yaml')], dir);
    try {
      expect(output()).toContain('Bearer <a key from'); // a real key is never printed
      const client = new OpenAI({ baseURL: url, apiKey: 'sk-reload-12345678', maxRetries: 0 });
      const content = async () => (await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content;
      expect(await content()).toBe('first reply');
      writeFileSync(path.join(pluginDir, 'reply.ts'), "export const reply: string = 'second reply';\n");
      const deadline = Date.now() + 5000;
      let now = await content();
      while (now !== 'second reply' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        now = await content();
      }
      expect(now).toBe('second reply');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('switchyard serve: SIGHUP', () => {
  it('reloads the configuration on SIGHUP (with watching off)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-hup-'));
    const file = path.join(dir, 'gateway.yaml');
    const config = (models: string) => `keys: [{ name: k, key: sk-hup-123456789 }]\nproviders:\n  mock: { plugin: mock }\nmodels:\n${models}\nlog: { level: info, format: json }\n`;
    writeFileSync(file, config('  demo: { targets: [{ provider: mock, model: m }] }'));
    const { child, url, output } = await serve(['--config', file, '--no-watch'], dir);
    try {
      const client = new OpenAI({ baseURL: url, apiKey: 'sk-hup-123456789', maxRetries: 0 });
      writeFileSync(file, config('  demo: { targets: [{ provider: mock, model: m }] }\n  added: { targets: [{ provider: mock, model: m2 }] }'));
      await new Promise((r) => setTimeout(r, 300));
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(['demo']); // not watching
      child.kill('SIGHUP');
      const deadline = Date.now() + 5000;
      while (!output().includes('reloaded') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(output()).toContain('models +added');
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(['demo', 'added']);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
