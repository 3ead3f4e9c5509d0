#!/usr/bin/env node
/**
 * The `switchyard` command. Plain JavaScript that any Node can parse: it first makes sure it runs
 * on a Node that satisfies package.json's engines (re-running itself under Node 24 from
 * ~/.node24 otherwise, see ensure-node.mjs) and, when serving, with the V8 flags and environment of serving-env.mjs;
 * then it runs the gateway: the compiled dist/ in an installed package, the TypeScript sources
 * (Node's own type stripping) in a repository checkout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rerun, suitableNodeOrExit, watchLauncher } from './ensure-node.mjs';
import { SERVE_FLAGS, servingEnv } from './serving-env.mjs';

/** Options of src/cli.ts that take a value, to find the subcommand among the arguments. */
const VALUE_OPTIONS = ['--config', '-c', '--port', '-p', '--host', '-H', '--dir'];

const args = process.argv.slice(2);
const self = fileURLToPath(import.meta.url);

if (args.includes('--version') || args.includes('-v')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  const node = suitableNodeOrExit();
  const serve = serving(args);
  // V8 reads its flags at startup only, hence the re-run (an exec in place of this process, not a
  // child) when serving without them.
  const flags = serve && !hasHeapFlags() ? SERVE_FLAGS : [];
  if (node !== process.execPath || flags.length > 0) rerun(node, flags.concat(process.execArgv, [self], args), serve ? servingEnv(process.env) : process.env);
  else runGateway();
}

/** Serving is the default command; validate, plugin and --help are one-shot. */
function serving(argv) {
  if (argv.includes('--help') || argv.includes('-h')) return false;
  for (let i = 0; i < argv.length; i++) {
    if (VALUE_OPTIONS.includes(argv[i])) i++;
    else if (!argv[i].startsWith('-')) return argv[i] === 'serve';
  }
  return true;
}

/** Heap or compiler flags given by the caller (npm start, a user's own) win over ours. */
function hasHeapFlags() {
  const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS || ''}`;
  return /--max-semi-space-size|--heap-growing-percent|--(no-)?concurrent-recompilation/.test(given);
}

async function runGateway() {
  watchLauncher();
  // A checkout runs its sources, unless `npm start` (scripts/start.mjs) built dist/ and asks for it.
  const fromSource = existsSync(new URL('../src/cli.ts', import.meta.url)) && process.env.SWITCHYARD_RUN_DIST !== '1';
  const root = new URL(fromSource ? '../src/' : '../dist/src/', import.meta.url);
  if (!fromSource && !existsSync(new URL('cli.js', root))) {
    process.stderr.write(`${fileURLToPath(root)} is missing: run \`npm run build\` in the package first\n`);
    process.exit(1);
  }
  const { registerHooks } = await import('node:module');
  const { generationHooks } = await import(new URL('plugins/generation-hooks.mjs', root).href);
  // In a checkout the built-in plugins' imports of `switchyard-gateway[/kit]` resolve to the
  // sources, through package.json's "switchyard-source" export condition.
  registerHooks(generationHooks({ core: root.href, conditions: fromSource ? ['switchyard-source'] : [] }));
  await import(new URL(fromSource ? 'cli.ts' : 'cli.js', root).href);
}
