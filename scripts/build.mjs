/**
 * npm run build (and prepack): dist/ from scratch with tsc (tsconfig.build.json), then a check
 * that everything the compiled package loads at run time is there: the CLI, the resolve hook the
 * bin registers, the JSON schemas the sources import, and every built-in plugin.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
// Sources changed after this instant may not be in the build: the stamp carries it, not the end.
const started = new Date();

const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
if (tsc.status !== 0) {
  console.error(tsc.error ? `cannot run tsc: ${tsc.error.message}` : 'build failed: tsc reported errors (above)');
  process.exit(1);
}

// The console's page, script and stylesheet are served as they are (tsc does not copy them).
cpSync(path.join(root, 'src/console/assets'), path.join(dist, 'src/console/assets'), { recursive: true });

const plugins = readdirSync(path.join(root, 'plugins'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'examples' && !e.name.startsWith('zz-'))
  .map((e) => `plugins/${e.name}/index.js`);
const expected = [
  'src/cli.js',
  'src/index.d.ts',
  'src/kit/index.d.ts',
  'src/kit/testing/index.d.ts',
  'src/plugins/generation-hooks.mjs',
  'schemas/gateway.schema.json',
  'schemas/chat-request.schema.json',
  'src/console/assets/index.html',
  'src/console/assets/console.js',
  'src/console/assets/console.css',
  ...plugins,
];
const missing = expected.filter((file) => !existsSync(path.join(dist, file)));
if (missing.length > 0) {
  console.error(`build incomplete: dist/ lacks ${missing.join(', ')}`);
  process.exit(1);
}
// The stamp scripts/start.mjs compares the sources with: written last, so a broken build has none.
writeFileSync(path.join(dist, '.built'), `${started.toISOString()}\n`);
utimesSync(path.join(dist, '.built'), started, started);
console.log(`dist/: built (${expected.length} entry points checked)`);
