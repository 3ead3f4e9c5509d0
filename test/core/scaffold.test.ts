/** `switchyard plugin new` writes plugins whose own tests pass as generated. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');
// Inside plugins/ so that vitest's include patterns and the module resolution find it.
const dirs = ['provider', 'stage'].map((kind) => path.join(ROOT, 'plugins', `zz-scaffold-${kind}-${process.pid}`));
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** What the generated test file ran, from vitest's JSON report: each test's full name and status. */
function runGeneratedTests(dir: string): { status: number | null; output: string; results: Array<{ fullName: string; status: string }> } {
  const report = path.join(dir, 'report.json');
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', path.relative(ROOT, dir), '--reporter=json', `--outputFile=${report}`], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (!existsSync(report)) throw new Error(`vitest wrote no report for ${dir}:\n${run.stdout}${run.stderr}`);
  const json = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }> };
  return { status: run.status, output: run.stdout + run.stderr, results: json.testResults.flatMap((f) => f.assertionResults) };
}

// The conformance battery's cases each generated plugin must pass (a provider declaring no tools skips only the tool cases).
const BATTERY = ['plain completion', 'stream: every chunk valid', 'stream with include_usage', 'upstream 400', 'upstream 401', 'upstream 429', 'upstream 500'];

describe('switchyard plugin new', () => {
  for (const [i, kind] of (['provider', 'stage'] as const).entries()) {
    it(`scaffolds a ${kind} whose generated test, the conformance battery included, passes`, () => {
      const name = `acme-${kind}`;
      const made = spawnSync(process.execPath, [BIN, 'plugin', 'new', kind, name, '--dir', dirs[i]], { cwd: ROOT, encoding: 'utf8' });
      expect(made.status, made.stderr).toBe(0);
      expect(existsSync(path.join(dirs[i], 'index.ts'))).toBe(true);
      expect(existsSync(path.join(dirs[i], `${name}.test.ts`))).toBe(true);
      // Only what a plugin published on its own can import: the package's public entry points (and its own files).
      for (const file of ['index.ts', `${name}.test.ts`]) {
        const specifiers = [...readFileSync(path.join(dirs[i], file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
        expect(
          specifiers.filter((s) => !/^(node:|vitest$|switchyard-gateway(\/kit(\/testing)?)?$|\.\/[\w-]+\.ts$)/.test(s)),
          file,
        ).toEqual([]);
      }
      // Formatted and lint-clean as generated, so a repository enforcing `biome ci` accepts it unchanged.
      const biome = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@biomejs/biome/bin/biome'), 'ci', '--colors=off', path.relative(ROOT, dirs[i])], { cwd: ROOT, encoding: 'utf8' });
      expect(biome.status, biome.stdout + biome.stderr).toBe(0);

      const run = runGeneratedTests(dirs[i]);
      expect(run.status, run.output).toBe(0);
      expect(run.results.filter((r) => r.status === 'failed')).toEqual([]);
      const passed = run.results.filter((r) => r.status === 'passed').map((r) => r.fullName);
      const battery = passed.filter((n) => n.startsWith(`conformance: ${kind === 'provider' ? name : 'upstream'} `));
      for (const test of BATTERY)
        expect(
          battery.some((n) => n.includes(test)),
          `battery case "${test}" passed`,
        ).toBe(true);
      // The stage runs in front of a provider with tools, so the battery's tool cases run too.
      if (kind === 'stage') expect(battery.filter((n) => n.includes('tool call'))).toHaveLength(2);
      else expect(run.results.filter((r) => r.status !== 'passed').map((r) => r.fullName)).toEqual(expect.arrayContaining([expect.stringContaining('(skipped: provider has no tools)')]));
      // The plugin's own tests beside the battery.
      expect(passed.filter((n) => !n.startsWith('conformance: ')).length).toBe(2);

      // vitest strips types without checking them: tsc does, with the repository's settings, so a contract change that breaks the templates fails here.
      writeFileSync(path.join(dirs[i], 'tsconfig.json'), JSON.stringify({ extends: path.join(ROOT, 'tsconfig.json'), include: ['.'] }));
      const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dirs[i], '--pretty', 'false'], { cwd: ROOT, encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    }, 180_000);
  }

  it('refuses bad names and existing folders', () => {
    const bad = spawnSync(process.execPath, [BIN, 'plugin', 'new', 'provider', 'Bad Name'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('plugin name must be lowercase');
    const exists = spawnSync(process.execPath, [BIN, 'plugin', 'new', 'stage', 'openai', '--dir', 'plugins/openai'], { cwd: ROOT, encoding: 'utf8' });
    expect(exists.status).toBe(1);
    expect(exists.stderr).toContain('plugins/openai already exists');
  }, 60_000);
});
