/**
 * The README's crash table ("What a crash can cost") is backed by tests: every test file it names
 * exists, and every case of the fault battery is named there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

it('names only test files that exist, and every file of the fault battery', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = /### What a crash can cost\n([\s\S]*?)\n### /.exec(readme)?.[1];
  expect(section, 'the section "What a crash can cost"').toBeDefined();
  const named = new Set([...section!.matchAll(/`(test\/[\w/.-]+\.test\.ts)`/g)].map((m) => m[1]!));
  expect(named.size).toBeGreaterThanOrEqual(8);
  for (const file of named) expect(existsSync(path.join(ROOT, file)), file).toBe(true);
  const battery = readdirSync(path.join(ROOT, 'test/faults'))
    .filter((f) => f.endsWith('.test.ts') && f !== 'docs.test.ts')
    .map((f) => `test/faults/${f}`);
  for (const file of battery) expect(named, `${file} is named in the crash table`).toContain(file);
});
