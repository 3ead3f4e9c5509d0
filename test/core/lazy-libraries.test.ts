/**
 * A library for a feature that is not configured is not loaded: ioredis (about 2 MB of heap, its
 * code compiled and kept) comes in only with a cache, limits or a response store in Redis, not
 * with the default memory backend or a cache in memory. Checked in a fresh Node process, by
 * whether the library's files are in the CommonJS module cache (ioredis is a CommonJS package, so
 * an import of it lands there).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

function config(dir: string, name: string, cacheOptions: string): string {
  const file = path.join(dir, `${name}.yaml`);
  const pipeline = cacheOptions ? `[auth, validate, route, { stage: cache, options: ${cacheOptions} }, retry, transform-response, log]` : '[auth, validate, route, retry, transform-response, log]';
  writeFileSync(
    file,
    `log: { level: silent }
keys: [{ name: dev, key: sk-test-dev-0123456789, models: ["*"] }]
providers: { p: { plugin: mock } }
models: { m: { targets: [{ provider: p, model: mock-1 }] } }
pipeline: ${pipeline}
`,
  );
  return file;
}

it('a gateway loads ioredis only for a cache in Redis, not for the memory backend or a cache in memory', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-lazy-'));
  const files = [
    config(dir, 'plain', ''),
    config(dir, 'memory-cache', '{ ttl: 60 }'),
    // Nothing listens on port 9: the client is made (the library loaded) and its connection fails quietly.
    config(dir, 'redis-cache', '{ redis: { url: "redis://127.0.0.1:9" }, ttl: 60 }'),
  ];
  const script = `
    import { createRequire } from 'node:module';
    import { Gateway } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/index.ts')).href)};
    const cache = createRequire(import.meta.url).cache;
    const loaded = () => Object.keys(cache).some((k) => k.includes('/node_modules/ioredis/'));
    const seen = [];
    for (const config of ${JSON.stringify(files)}) {
      const g = await Gateway.start({ config, port: 0, host: '127.0.0.1', env: {} });
      seen.push(loaded());
      await g.close();
    }
    console.log(JSON.stringify(seen));
  `;
  const r = spawnSync(process.execPath, ['--conditions=switchyard-source', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual([false, false, true]);
});
