/**
 * Whether a CommonJS package is loaded by a gateway started on each config, in a fresh Node
 * process (the module cache of the test runner already holds everything): a library for a
 * feature that is not configured must not be loaded.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './repo.ts';

/** For each config in turn, whether node_modules/<pkg>/ is in the CommonJS module cache once a gateway started on it. */
export function packageLoadedAfterStart(pkg: string, configs: string[], env: NodeJS.ProcessEnv = process.env): boolean[] {
  const script = `
    import { createRequire } from 'node:module';
    import { Gateway } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/index.ts')).href)};
    const cache = createRequire(import.meta.url).cache;
    const loaded = () => Object.keys(cache).some((k) => k.includes(${JSON.stringify(`/node_modules/${pkg}/`)}));
    const seen = [];
    for (const config of ${JSON.stringify(configs)}) {
      const g = await Gateway.start({ config, port: 0, host: '127.0.0.1', env: {} });
      seen.push(loaded());
      await g.close();
    }
    console.log(JSON.stringify(seen));
  `;
  const r = spawnSync(process.execPath, ['--conditions=switchyard-source', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env });
  if (r.status !== 0) throw new Error(`the gateway process failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as boolean[];
}
