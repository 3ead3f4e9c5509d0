/**
 * A library for a feature that is not configured is not loaded: ioredis (about 2 MB of heap, its
 * code compiled and kept) comes in only with a cache, limits or a response store in Redis, not
 * with the default memory backend or a cache in memory. Checked in a fresh Node process
 * (test/helpers/lazy-load.ts; ioredis is a CommonJS package, so an import of it lands in the cache).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { packageLoadedAfterStart } from '../helpers/lazy-load.ts';

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
  expect(packageLoadedAfterStart('ioredis', files)).toEqual([false, false, true]);
});
