/** The README's request ledger example is a valid `state:` section, read as the docs say. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.ts';
import { ledgerEngineOf } from '../../src/ledger/index.ts';
import { ROOT } from '../helpers/repo.ts';

const REST = 'keys: [{ name: a, key: sk-docs-example-0123456789, models: ["*"] }]\nproviders:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n';

it("the README's PostgreSQL ledger example parses, with the password from its file", () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const example = /### The request ledger[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toContain('postgres:');
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-ledger-docs-'));
  mkdirSync(path.join(dir, 'secrets'));
  writeFileSync(path.join(dir, 'secrets', 'pg-password'), 's3cret\n');
  const yaml = `${example}${REST}`;
  const parsed = parseConfigText(yaml, path.join(dir, 'gateway.yaml'), {});
  expect(parsed.source.issues.map((i) => i.message)).toEqual([]);
  expect(parsed.config!.state.ledger).toEqual({ postgres: { url: 'postgres://switchyard:s3cret@pg.internal:5432/switchyard', poolSize: 4 }, retentionDays: 400, maxQueued: 100_000, flushMs: 200 });
  expect(ledgerEngineOf(parsed.config!.state)).toBe('postgres');
  // Without `ledger:`, the memory backend keeps one in its state file and Redis none.
  const plain = (backend: string) =>
    parseConfigText(`state: { backend: ${backend}${backend === 'redis' ? ', redis: { url: "redis://127.0.0.1:6379" }' : ''} }\n${REST}`, path.join(dir, 'gateway.yaml'), {});
  expect(ledgerEngineOf(plain('memory').config!.state)).toBe('sqlite');
  expect(ledgerEngineOf(plain('redis').config!.state)).toBeUndefined();
});
