#!/usr/bin/env node
/**
 * Runs a command under Node >= 22 (undici 8, vitest 5 and openai 7 need it). On an older Node,
 * Node 24 LTS is first installed into ~/.node24 from the npm registry (the `node` package ships
 * the binary), then put first on PATH. Plain JavaScript that any Node can run.
 *
 *   node scripts/node22.mjs <command> [args...]     e.g. `node scripts/node22.mjs vitest run`
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/node22.mjs <command> [args...]');
  process.exit(2);
}

const env = { ...process.env };
if (Number(process.versions.node.split('.')[0]) < 22) {
  const prefix = join(homedir(), '.node24');
  const bin = join(prefix, 'node_modules', '.bin');
  if (!existsSync(join(bin, 'node'))) {
    console.error(`Node ${process.version} is too old for Switchyard (needs >= 22): installing Node 24 LTS into ${prefix} ...`);
    execFileSync('npm', ['install', '--prefix', prefix, 'node@24', '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' });
  }
  env.PATH = `${bin}${delimiter}${env.PATH ?? ''}`;
}

const child = spawn(command, args, { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
child.on('error', (err) => {
  console.error(`cannot run ${command}: ${err.message}`);
  process.exit(1);
});
