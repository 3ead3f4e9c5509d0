/**
 * `npm start` (scripts/start.mjs) serves the compiled gateway: it builds dist/ when a source is
 * newer than the last build, not otherwise, and the bin then runs dist/ (not the sources through
 * type stripping). Run in a copy of the checkout, so that its builds never race the pack test's
 * over the repository's own dist/.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

let copy: string;

beforeAll(() => {
  copy = mkdtempSync(path.join(tmpdir(), 'switchyard-start-'));
  for (const entry of ['src', 'plugins', 'schemas', 'bin', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'gateway.yaml'])
    cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** `node scripts/start.mjs --port 0`, until its listening line; stderr kept to see whether it built. */
async function start() {
  const child = spawn(process.execPath, ['scripts/start.mjs', '--port', '0', '--no-watch'], { cwd: copy, env: { ...process.env, OPENAI_API_KEY: '', SWITCHYARD_RUN_DIST: '' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const deadline = Date.now() + 60_000;
  let m: RegExpExecArray | null = null;
  while (!(m = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out)) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  if (!m) {
    child.kill('SIGKILL');
    throw new Error(`npm start did not listen:\n${out}\n${err}`);
  }
  const stop = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { child, url: m[1], stderr: () => err, stop };
}

/** A process's command line and environment: Linux only, read from /proc. */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
const environment = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('npm start (scripts/start.mjs)', () => {
  it.runIf(process.platform === 'linux')(
    'builds dist/ when the sources are newer, then serves the compiled code, and does not rebuild when nothing changed',
    async () => {
      const first = await start();
      try {
        expect(first.stderr()).toContain('building dist/');
        expect(existsSync(path.join(copy, 'dist', 'src', 'cli.js'))).toBe(true);
        expect(existsSync(path.join(copy, 'dist', '.built'))).toBe(true);
        // The bin replaced the start script in place: same pid, its V8 flags, told to run dist/.
        const argv = commandLine(first.child.pid as number);
        expect(argv.some((a) => a.endsWith('bin/switchyard.mjs'))).toBe(true);
        expect(argv).toContain('--max-semi-space-size=8');
        expect(environment(first.child.pid as number)).toContain('SWITCHYARD_RUN_DIST=1');
        // glibc's mmap threshold fixed (bin/serving-env.mjs): 16-20 MB less RSS under load.
        expect(environment(first.child.pid as number)).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
        const client = new OpenAI({ baseURL: first.url, apiKey: 'sk-switchyard-dev', maxRetries: 0 });
        const r = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] });
        expect(r.choices[0].message.content).toContain('mock provider');
      } finally {
        await first.stop();
      }

      const second = await start();
      try {
        expect(second.stderr()).not.toContain('building dist/');
      } finally {
        await second.stop();
      }

      // A source edited after the build: built again.
      const later = new Date(Date.now() + 5_000);
      utimesSync(path.join(copy, 'src', 'cli.ts'), later, later);
      const third = await start();
      try {
        expect(third.stderr()).toContain('building dist/');
      } finally {
        await third.stop();
      }
    },
    120_000,
  );
});
