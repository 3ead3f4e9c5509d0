#!/usr/bin/env node
/**
 * `npm start`: serves the compiled gateway, as an installed package runs it. dist/ is rebuilt
 * first when a source changed since the last build (about 3 s); then the bin runs dist/ in
 * place of this process. Compiled code starts faster and stays smaller than the sources run
 * through Node's type stripping (which keeps a TypeScript transformer in memory: about 28 MB).
 * `node bin/switchyard.mjs` in a checkout still runs the sources, for development.
 * Plain JavaScript that any Node can run (the bin then finds a Node that suits).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rerun, suitableNodeOrExit } from '../bin/ensure-node.mjs';
import { servingEnv } from '../bin/serving-env.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Written by scripts/build.mjs once dist/ is complete. */
const STAMP = path.join(root, 'dist', '.built');
/** What dist/ is compiled or copied from. */
const SOURCES = ['src', 'plugins', 'schemas', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestChange(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  return newest;
}

function fresh() {
  if (!existsSync(STAMP)) return false;
  const built = statSync(STAMP).mtimeMs;
  return SOURCES.every((s) => !existsSync(path.join(root, s)) || newestChange(path.join(root, s)) <= built);
}

// The Node that builds and serves: this one when it fits, else Node 24 from ~/.node24 (installed
// first if needed). Chosen here, once: the bin refuses to bootstrap again when run as a re-run.
const node = suitableNodeOrExit();

if (!fresh()) {
  process.stderr.write('switchyard: building dist/ (the sources changed since the last build)\n');
  const env = { ...process.env, PATH: [path.join(root, 'node_modules', '.bin'), path.dirname(node), process.env.PATH ?? ''].join(path.delimiter) };
  const build = spawnSync(node, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Node flags given to this script (a profiler's, heap flags) go on to the gateway.
rerun(node, [...process.execArgv, path.join(root, 'bin', 'switchyard.mjs'), ...process.argv.slice(2)], servingEnv({ ...process.env, SWITCHYARD_RUN_DIST: '1' }));
