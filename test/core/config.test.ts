/** gateway.yaml errors: every kind reported at once, each with its exact file:line:col message. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { parseConfigFile } from '../../src/config/load.ts';
import { buildRuntime } from '../../src/runtime/build.ts';
import { ConfigError, formatIssue } from '../../src/config/issues.ts';

const silent = pino({ level: 'silent' });

/** Writes the yaml as gateway.yaml in a fresh directory and returns every issue, formatted. */
async function problems(yaml: string, env: NodeJS.ProcessEnv = {}, files: Record<string, string> = {}): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-config-'));
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, yaml);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const parsed = await parseConfigFile(file, env);
  // Shown relative to the working directory when inside it; here the file is elsewhere.
  const shorten = (s: string) => s.replace(file, 'gateway.yaml');
  try {
    const runtime = await buildRuntime(parsed, { generation: 1, log: silent, env });
    await runtime.close();
    return runtime.warnings.map(formatIssue).map(shorten);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map(formatIssue).map(shorten);
  }
}

const BASE = `keys:
  - { name: dev, key: sk-dev-0123456789 }
providers:
  mock: { plugin: mock }
  local: { plugin: openai, baseUrl: "http://127.0.0.1:1/v1" }
models:
  demo:
    targets: [{ provider: mock, model: m }]
`;

describe('config errors, with positions', () => {
  it('accepts the base config with no issue', async () => {
    expect(await problems(BASE)).toEqual([]);
  });

  it('unknown provider in a target, with a suggestion', async () => {
    const yaml = `${BASE}  fast:
    strategy: fallback
    targets:
      - { provider: mock, model: m }
      - { provider: lcoal, model: llama }
`;
    expect(await problems(yaml)).toEqual(['gateway.yaml:13:21 models.fast.targets[1].provider: unknown provider "lcoal" (did you mean "local"?) (known: mock, local)']);
  });

  it('unknown fields, missing fields and wrong types, all at once', async () => {
    const yaml = `server:
  port: "eighty"
  hots: 0.0.0.0
keys:
  - { name: dev, key: sk-dev-0123456789 }
providers:
  mock: { plugin: mock }
models:
  demo:
    targts: [{ provider: mock, model: m }]
`;
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:2:9 server.port: must be an integer (got string "eighty")',
      'gateway.yaml:3:3 server.hots: unknown field "hots" (did you mean "host"?)',
      'gateway.yaml:9:3 models.demo: missing required field "targets"',
      'gateway.yaml:10:5 models.demo.targts: unknown field "targts" (did you mean "targets"?)',
    ]);
  });

  it('YAML syntax errors point at the offending line', async () => {
    const [first] = await problems('providers:\n  mock: { plugin: mock\nmodels: {}\n');
    expect(first).toMatch(/^gateway\.yaml:3:1 YAML: /);
    expect(await problems('providers:\n  mock: { plugin: mock\nmodels: {}\n')).toHaveLength(1);
  });

  it('an unset variable outside providers is an error naming it; inside providers it leaves the provider unavailable', async () => {
    const yaml = BASE.replace('key: sk-dev-0123456789 }', 'key: "${DEV_KEY}" }').replace('"http://127.0.0.1:1/v1"', '"http://127.0.0.1:1/v1", apiKey: "${LOCAL_KEY}"');
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:2:23 keys[0].key: environment variable DEV_KEY is not set and has no default (write ${DEV_KEY:-default} to give one)',
      'gateway.yaml:5:70 warning: providers.local.apiKey: environment variable LOCAL_KEY is not set: provider "local" is unavailable until it is',
    ]);
    expect(await problems(yaml, { DEV_KEY: 'sk-from-env-123456', LOCAL_KEY: 'x' })).toEqual([]);
  });

  it('defaults and typed interpolation: ${PORT:-8080} is a number', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-config-'));
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, `server:\n  port: \${PORT:-8081}\n${BASE}`);
    const parsed = await parseConfigFile(file, {});
    expect(parsed.config?.server.port).toBe(8081);
    const withEnv = await parseConfigFile(file, { PORT: '9000' });
    expect(withEnv.config?.server.port).toBe(9000);
  });

  it('key globs that match no model, and duplicate keys', async () => {
    const yaml = BASE.replace('  - { name: dev, key: sk-dev-0123456789 }', '  - { name: dev, key: sk-dev-0123456789, models: ["gpt-*"] }\n  - { name: dev, key: sk-dev-0123456789 }');
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:2:51 keys[0].models[0]: "gpt-*" matches no model (models: demo)',
      'gateway.yaml:3:13 keys[1].name: duplicate key name "dev" (also keys[0])',
      'gateway.yaml:3:23 keys[1].key: the same key as keys[0] ("dev")',
    ]);
  });

  it('a model alias written twice is named by its path', async () => {
    const yaml = `${BASE}  demo:\n    targets: [{ provider: mock, model: other }]\n`;
    expect(await problems(yaml)).toEqual(['gateway.yaml:9:3 models.demo: "demo" appears twice in this mapping (YAML keys must be unique)']);
  });

  it('a key needs exactly one of key or keyHash', async () => {
    const yaml = BASE.replace('  - { name: dev, key: sk-dev-0123456789 }', '  - { name: dev }');
    expect(await problems(yaml)).toEqual(['gateway.yaml:2:5 keys[0]: needs "key" or "keyHash"']);
  });

  it('plugins that cannot be found, with what was tried', async () => {
    const yaml = BASE.replace('mock: { plugin: mock }', 'mock: { plugin: mokc }\n  acme: { plugin: ./plugins/acme.ts }');
    const found = await problems(yaml);
    expect(found[0]).toMatch(
      /^gateway\.yaml:4:19 providers\.mock\.plugin: unknown provider plugin "mokc": not a built-in \((\S+, )*mock, openai(, \S+)*\) and no package of that name is installed; use \.\/path\/to\/plugin\.ts for a file$/,
    );
    expect(found[1]).toMatch(/^gateway\.yaml:5:19 providers\.acme\.plugin: provider plugin file not found: \.\/plugins\/acme\.ts \(looked for .*acme\.ts\)$/);
  });

  it("a plugin's own options are checked against its schema", async () => {
    const yaml = BASE.replace('baseUrl: "http://127.0.0.1:1/v1"', 'baseUrl: "ftp://nope", apiKye: x');
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:5:37 providers.local.baseUrl: "ftp://nope" does not have the expected form (an http:// or https:// URL)',
      'gateway.yaml:5:51 providers.local.apiKye: unknown field "apiKye" (did you mean "apiKey"?)',
    ]);
  });

  it('pipeline: unknown stage, wrong built-in order, missing route', async () => {
    const yaml = `${BASE}pipeline: [auth, validate, retry, route, transform-response, logg]\n`;
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:9:35 pipeline[3]: "route" must come before "retry" (built-in order: auth → validate → route → retry → transform-response)',
      'gateway.yaml:9:62 pipeline[5]: unknown stage plugin "logg": not a built-in (auth, validate, route, retry, transform-response, log) and no package of that name is installed; use ./path/to/plugin.ts for a file',
    ]);
    const missing = await problems(`${BASE}pipeline: [auth, validate, retry, transform-response]\n`);
    expect(missing).toEqual(['gateway.yaml:9:11 pipeline: the pipeline needs the "route" stage']);
  });

  it('auth without keys is refused', async () => {
    const yaml = BASE.replace('keys:\n  - { name: dev, key: sk-dev-0123456789 }\n', '');
    expect(await problems(yaml)).toEqual(['gateway.yaml:1:1 keys: the pipeline has the "auth" stage but no keys are defined, so every request would be refused; add a key or remove "auth"']);
  });
});
