/**
 * A Redis that does not persist (appendonly no, save "") loses every budget on a restart: the
 * gateway warns at startup and `switchyard validate --strict` warns, naming `appendfsync
 * everysec`; once AOF is on, neither does. Needs a real redis-server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway } from 'switchyard-gateway/kit/testing';
import { startRedisServer, type RedisServer } from '../../src/governance/testing/redis-server.ts';
import { ROOT } from '../helpers/repo.ts';
import { eventually } from './helpers.ts';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop('SIGTERM');
});

const config = () =>
  `state: { backend: redis, redis: { url: "${redis.url}" } }\nkeys: [{ name: a, key: sk-persist-0123456789, models: ["*"] }]\nproviders:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n`;

function validateStrict(file: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/switchyard.mjs'), 'validate', file, '--strict'], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

it('warns at startup and in validate --strict while Redis does not persist, and not once AOF is on', async () => {
  const t = await startTestGateway(config());
  const warned = () => t.logs.filter((l) => l.level === 40 && /does not persist/.test(l.msg));
  await eventually(() => expect(warned()).toHaveLength(1));
  expect(warned()[0]!.msg).toContain('appendfsync everysec');
  await t.close();

  const file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-persist-')), 'gateway.yaml');
  writeFileSync(file, config());
  const before = await validateStrict(file);
  expect(before.code).toBe(0);
  expect(before.stderr).toContain('warning: state.redis: redis does not persist its data');

  const admin = new Redis(redis.url);
  await admin.config('SET', 'appendonly', 'yes');
  admin.disconnect();
  const after = await validateStrict(file);
  expect(after.code).toBe(0);
  expect(after.stderr).toBe('');
  const quiet = await startTestGateway(config());
  await eventually(() => expect(quiet.logs.some((l) => l.msg === 'redis connected')).toBe(true));
  await new Promise((r) => setTimeout(r, 200));
  expect(quiet.logs.filter((l) => /does not persist/.test(l.msg))).toEqual([]);
  await quiet.close();
}, 30_000);
