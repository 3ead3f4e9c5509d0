/** `switchyard plugin new` writes plugins whose own tests pass as generated. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

const BIN = path.join(ROOT, 'bin/switchyard.mjs');
// Inside plugins/ so that vitest's include patterns and the module resolution find it.
const dirs = ['provider', 'stage'].map((kind) => path.join(ROOT, 'plugins', `zz-scaffold-${kind}-${process.pid}`));
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('switchyard plugin new', () => {
  for (const [i, kind] of (['provider', 'stage'] as const).entries()) {
    it(`scaffolds a ${kind} whose generated test passes`, () => {
      const made = spawnSync(process.execPath, [BIN, 'plugin', 'new', kind, `acme-${kind}`, '--dir', dirs[i]], { cwd: ROOT, encoding: 'utf8' });
      expect(made.status).toBe(0);
      expect(existsSync(path.join(dirs[i], 'index.ts'))).toBe(true);
      expect(existsSync(path.join(dirs[i], `acme-${kind}.test.ts`))).toBe(true);
      // Only what a plugin published on its own can import: the package's public entry points.
      for (const file of ['index.ts', `acme-${kind}.test.ts`]) {
        const specifiers = [...readFileSync(path.join(dirs[i], file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
        expect(
          specifiers.filter((s) => !/^(node:|vitest$|switchyard-gateway(\/kit(\/testing)?)?$)/.test(s)),
          file,
        ).toEqual([]);
      }
      const lint = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@biomejs/biome/bin/biome'), 'lint', '--colors=off', path.relative(ROOT, dirs[i])], { cwd: ROOT, encoding: 'utf8' });
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
      const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
      const run = spawnSync(process.execPath, [vitest, 'run', path.relative(ROOT, dirs[i])], { cwd: ROOT, encoding: 'utf8' });
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/Tests\s+.*2 passed/);
    });
  }

  it('refuses bad names and existing folders', () => {
    const bad = spawnSync(process.execPath, [BIN, 'plugin', 'new', 'provider', 'Bad Name'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('plugin name must be lowercase');
    const exists = spawnSync(process.execPath, [BIN, 'plugin', 'new', 'stage', 'openai', '--dir', 'plugins/openai'], { cwd: ROOT, encoding: 'utf8' });
    expect(exists.status).toBe(1);
    expect(exists.stderr).toContain('plugins/openai already exists');
  });
});
