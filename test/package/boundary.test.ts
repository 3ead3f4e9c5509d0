/**
 * The lint rule that keeps built-in plugins on the public API (biome.jsonc, noRestrictedImports):
 * a plugin's non-test file that imports from src/ by relative path fails `npm run lint`; the same
 * import in a test file, and imports of switchyard-gateway[/kit], pass.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

const BIOME = path.join(ROOT, 'node_modules/@biomejs/biome/bin/biome');
// Inside plugins/ so that biome.jsonc's override for plugins/** applies to it.
const probe = path.join(ROOT, 'plugins', `zz-boundary-${process.pid}`);
afterAll(() => rmSync(probe, { recursive: true, force: true }));

function lint(files: Record<string, string>): { status: number | null; output: string } {
  rmSync(probe, { recursive: true, force: true });
  mkdirSync(probe, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(probe, name), text);
  const r = spawnSync(process.execPath, [BIOME, 'lint', '--colors=off', path.relative(ROOT, probe)], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('lint: built-in plugins import only switchyard-gateway and switchyard-gateway/kit', () => {
  it('fails on a relative import of src/ (import, export from, dynamic import)', () => {
    const r = lint({
      'index.ts':
        "import { GatewayError } from '../../src/errors.ts';\nexport { readSse } from '../../src/protocol/sse.ts';\nexport const later = () => import('../../src/index.ts');\nexport default GatewayError;\n",
    });
    expect(r.status, r.output).not.toBe(0);
    expect(r.output.match(/lint\/style\/noRestrictedImports/g)?.length, r.output).toBe(3);
    expect(r.output).toContain("A plugin imports only what a plugin outside this repository can: 'switchyard-gateway' (the contract) and 'switchyard-gateway/kit' (helpers)");
  });

  it('passes for the public entry points, sibling files and tests', () => {
    const r = lint({
      'index.ts':
        "import { defineHttpProvider } from 'switchyard-gateway';\nimport { GatewayError } from 'switchyard-gateway/kit';\nimport { shape } from './shape.ts';\nexport default { defineHttpProvider, GatewayError, shape };\n",
      'shape.ts': 'export const shape = 1;\n',
      'index.test.ts': "import { GatewayError } from '../../src/errors.ts';\nexport default GatewayError;\n",
    });
    expect(r.status, r.output).toBe(0);
  });
});
