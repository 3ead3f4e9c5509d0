/** gateway.yaml errors: every kind reported at once, each with its exact file:line:col message. */
import { createHash } from 'node:crypto';
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
    // Where the "{" was opened, not the next line where the parser noticed it.
    const [first] = await problems('providers:\n  mock: { plugin: mock\nmodels: {}\n');
    expect(first).toMatch(/^gateway\.yaml:2:9 the "\{" opened here is never closed/);
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
      'gateway.yaml:3:23 keys[1].key: the same secret as keys[0] ("dev"): each secret may belong to one key only',
    ]);
  });

  it('key rotation: secrets compared by digest within and across keys and with admin keys; a previous secret needs its until', async () => {
    const hashOf = (k: string) => `sha256:${createHash('sha256').update(k).digest('hex')}`;
    const yaml = BASE.replace(
      '  - { name: dev, key: sk-dev-0123456789 }',
      [
        '  - name: dev',
        `    key: [sk-dev-0123456789, "\${NEXT_KEY}"]`,
        `    keyHash: ["${hashOf('sk-dev-0123456789')}"]`,
        '    previous:',
        '      - { key: sk-old-0123456789, until: "2027-01-01T00:00:00Z" }',
        '      - { key: sk-older-0123456789 }',
        '  - name: ci',
        `    previous: [{ keyHash: "${hashOf('sk-old-0123456789')}", until: "2027-01-01T00:00:00Z" }]`,
        'admin:',
        '  keys: [{ name: ops, key: sk-older-0123456789 }]',
      ].join('\n'),
    );
    expect(await problems(yaml, { NEXT_KEY: 'sk-next-0123456789' })).toEqual([
      'gateway.yaml:4:15 keys[0].keyHash[0]: this secret appears twice in this key: remove one of them',
      'gateway.yaml:7:9 keys[0].previous[1]: missing required field "until"',
      'gateway.yaml:8:5 keys[1]: needs "key" or "keyHash"',
      'gateway.yaml:9:27 keys[1].previous[0].keyHash: the same secret as keys[0] ("dev"): each secret may belong to one key only',
      'gateway.yaml:11:28 admin.keys[0].key: an admin key must differ from every client key',
    ]);
  });

  it('a model alias written twice is named by its path', async () => {
    const yaml = `${BASE}  demo:\n    targets: [{ provider: mock, model: other }]\n`;
    expect(await problems(yaml)).toEqual(['gateway.yaml:9:3 models.demo: "demo" appears twice in this mapping (YAML keys must be unique): remove one, or rename it']);
  });

  it('a key needs key or keyHash', async () => {
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
      'gateway.yaml:5:37 providers.local.baseUrl: must be an http:// or https:// URL (got "ftp://nope")',
      'gateway.yaml:5:51 providers.local.apiKye: unknown field "apiKye" (did you mean "apiKey"?)',
    ]);
  });

  it('pipeline: unknown stage, wrong built-in order, missing route', async () => {
    const yaml = `${BASE}pipeline: [auth, validate, retry, route, transform-response, logg]\n`;
    expect(await problems(yaml)).toEqual([
      'gateway.yaml:9:35 pipeline[3]: "route" must come before "retry" (built-in order: auth → validate → route → guardrails → cache → retry → transform-response)',
      'gateway.yaml:9:62 pipeline[5]: unknown stage plugin "logg": not a built-in (auth, validate, route, guardrails, cache, retry, transform-response, log) and no package of that name is installed; use ./path/to/plugin.ts for a file',
    ]);
    const missing = await problems(`${BASE}pipeline: [auth, validate, retry, transform-response]\n`);
    expect(missing).toEqual(['gateway.yaml:9:11 pipeline: the pipeline needs the "route" stage']);
  });

  it('auth without keys is refused', async () => {
    const yaml = BASE.replace('keys:\n  - { name: dev, key: sk-dev-0123456789 }\n', '');
    expect(await problems(yaml)).toEqual(['gateway.yaml:1:1 keys: the pipeline has the "auth" stage but no keys are defined, so every request would be refused; add a key or remove "auth"']);
  });
});

/**
 * Bad configs of every kind an ops engineer writes, each with the exact message and place. None
 * may read as the parser's or the schema's internals: no schema keyword, no regex, no token name.
 */
const IN_PLAIN_WORDS: Array<[what: string, yaml: string, expected: string[]]> = [
  ['an alternative of a number and a constant', `server: { workers: many }\n${BASE}`, ['gateway.yaml:1:20 server.workers: must be an integer from 1 to 256 or "auto" (got string "many")']],
  ['a number below its minimum', `server: { workers: 0 }\n${BASE}`, ['gateway.yaml:1:20 server.workers: must be at least 1 (got 0)']],
  [
    'a value outside an enum, with a suggestion',
    `log: { level: debg }\n${BASE}`,
    ['gateway.yaml:1:15 log.level: must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent" (got "debg"); did you mean "debug"?'],
  ],
  [
    'a date without its form',
    BASE.replace('key: sk-dev-0123456789 }', 'key: sk-dev-0123456789, expiresAt: tomorrow }'),
    ['gateway.yaml:2:53 keys[0].expiresAt: must be a date and time with a zone, such as 2027-01-01T00:00:00Z (got "tomorrow")'],
  ],
  [
    'a keyHash without its form',
    BASE.replace('key: sk-dev-0123456789 }', 'keyHash: "sha256:abc" }'),
    ['gateway.yaml:2:27 keys[0].keyHash: must be sha256: followed by 64 lowercase hex digits (switchyard key new prints one) (got "sha256:abc")'],
  ],
  ['a key too short, not echoed', BASE.replace('key: sk-dev-0123456789 }', 'key: short }'), ['gateway.yaml:2:23 keys[0].key: must be at least 8 characters long']],
  [
    'a Redis URL that is not one, and Redis left out',
    `state: { backend: redis, redis: { url: "http://x" } }\n${BASE}`,
    ['gateway.yaml:1:40 state.redis.url: must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379 (got "http://x")'],
  ],
  ['a field needed because of another', `state: { backend: redis }\n${BASE}`, ['gateway.yaml:1:1 state: missing required field "redis" (needed when backend is "redis")']],
  ['a path without its slash', `metrics: { path: metrics }\n${BASE}`, ['gateway.yaml:1:18 metrics.path: must be a path starting with "/" (got "metrics")']],
  [
    'a name with a space',
    `teams:\n  "search team": {}\n${BASE}`,
    ['gateway.yaml:2:3 teams.search team: name "search team" may only use letters, digits, "_", "." and "-", starting with a letter or digit'],
  ],
  ['an unknown field', `servr:\n  port: 1\n${BASE}`, ['gateway.yaml:1:1 servr: unknown field "servr" (did you mean "server"?)']],
  ['a key glued to its value', `server:\n  port:8080\n${BASE}`, ['gateway.yaml:2:3 server: must be a mapping (got string "port:8080"); put a space after the colon: "port: 8080"']],
  [
    'a mapping where a list goes',
    BASE.replace('keys:\n  - { name: dev,', 'keys:\n  { name: dev,'),
    ['gateway.yaml:2:3 keys: must be a list (got a mapping); start each item with "- " or write [ ... ]'],
  ],
  ['an empty value', `server:\n${BASE}`, ['gateway.yaml:1:8 server: must be a mapping (got null, an empty value)']],
  [
    'one bad item of a list, next to a good one with its own mistake',
    `${BASE}pipeline: [auth, 3, { stage: validate, opts: 1 }, route, retry, transform-response, log]\n`,
    ['gateway.yaml:9:18 pipeline[1]: must be a string or a mapping (got number 3)', 'gateway.yaml:9:40 pipeline[2].opts: unknown field "opts" (known: stage, options)'],
  ],
  [
    'a list item\'s field not indented under its "- "',
    `${BASE}  fast:\n    targets:\n    - provider: mock\n    model: m\n`,
    [
      'gateway.yaml:11:7 models.fast.targets[0]: missing required field "model"',
      'gateway.yaml:12:5 models.fast.model: unknown field "model" (known: description, dropUnsupportedParams, strict, strategy, retry, targets, timeout, cooldown, fallbacks); "model" belongs to each item of "targets": indent it under the item\'s "- "',
    ],
  ],
  ['yes for a boolean', `metrics: { enabled: yes }\n${BASE}`, ['gateway.yaml:1:21 metrics.enabled: must be true or false (got string "yes"); YAML reads it as text: write true or false']],
  [
    "a plugin's option of the wrong form",
    BASE.replace('local: { plugin: openai, baseUrl: "http://127.0.0.1:1/v1" }', 'local: { plugin: bedrock, region: US_EAST }'),
    ['gateway.yaml:5:37 providers.local.region: must be lowercase letters, digits and "-", such as us-east-1 (got "US_EAST")'],
  ],
  ['a value starting with @', `server: { host: @home }\n${BASE}`, ['gateway.yaml:1:17 a plain value cannot start with "@": put the value in quotes']],
  [
    'an unknown escape in double quotes',
    `server: { host: "a\\qb" }\n${BASE}`,
    ['gateway.yaml:1:19 this escape is not one YAML knows inside "double quotes": write \\\\ for a backslash, or use \'single quotes\''],
  ],
  // YAML syntax: where the mistake is, not where the parser noticed it.
  [
    'an unclosed { (noticed a line later)',
    `server: { port: 1\n${BASE}`,
    ['gateway.yaml:1:9 the "{" opened here is never closed: end the mapping with "}" (on the same line, or on lines indented more than its key)'],
  ],
  [
    'an unclosed [ closed by }',
    BASE.replace('key: sk-dev-0123456789 }', 'key: sk-dev-0123456789, models: ["*" }'),
    ['gateway.yaml:2:50 the "[" opened here is never closed: end the list with "]" (on the same line, or on lines indented more than its key)'],
  ],
  [
    'an unclosed quote (noticed at the end of the file)',
    `server:\n  host: "127.0.0.1\n${BASE}`,
    ['gateway.yaml:2:9 the text opened with " here is never closed: add the closing " (on the same line)'],
  ],
  ['a } that closes nothing', `server: { port: 1 }}\n${BASE}`, ['gateway.yaml:1:20 "}" closes nothing: remove it, or add the "{" it should close']],
  ['a doubled comma', `server: { port: 1,, host: x }\n${BASE}`, ['gateway.yaml:1:19 unexpected "," inside { ... }: separate the entries with one "," each']],
  ['a tab as indentation', `server:\n\tport: 1\n${BASE}`, ['gateway.yaml:2:1 a tab is used for indentation; YAML indents with spaces only: replace the tab with spaces']],
  [
    'a line indented too far (noticed on the line above)',
    `server:\n  port: 8080\n   host: x\n${BASE}`,
    ['gateway.yaml:3:4 "host" at column 4 is indented more than the line above, whose value is already set: move it to column 3 (beside "port")'],
  ],
  [
    'a line indented between two levels',
    `server:\n    port: 1\n  host: x\n${BASE}`,
    ['gateway.yaml:3:3 "host" at column 3 lines up with nothing above it: move it to column 5 (beside "port"), or to column 1 (beside "server")'],
  ],
  [
    'a list item out of line',
    BASE.replace('keys:\n  - { name: dev, key: sk-dev-0123456789 }\n', 'keys:\n  - name: dev\n    key: sk-dev-0123456789\n   models: ["*"]\n'),
    ['gateway.yaml:4:4 "models" at column 4 lines up with nothing above it: move it to column 5 (beside "key"), or to column 3 (beside "-")'],
  ],
  ['a key without its colon', `server\n  port: 2\n${BASE}`, ['gateway.yaml:1:1 "server" has no ":" after it, so the indented lines below cannot belong to it: write "server:"']],
  [
    'a mapping standing alone',
    `server:\n  host: x\n  {port: 1}\n${BASE}`,
    ['gateway.yaml:3:3 a { ... } cannot stand alone here: give it a key ("name: {port: 1}") or write its entries as "key: value" lines'],
  ],
  ['a repeated key', `server:\n  port: 1\n  port: 2\n${BASE}`, ['gateway.yaml:3:3 server.port: "port" appears twice in this mapping (YAML keys must be unique): remove one, or rename it']],
  [
    'an alias without its anchor',
    `server: *defaults\n${BASE}`,
    ['gateway.yaml:1:9 "*defaults" refers to no anchor: define "&defaults" on a value above it, or put the text in quotes if "*" was meant literally'],
  ],
  [
    'a second document',
    `${BASE}---\nserver: {}\n`,
    ['gateway.yaml:9:1 a second YAML document starts here ("---"); gateway.yaml holds one: remove this line and merge what follows into the document above'],
  ],
];

describe('config errors in plain words', () => {
  it.each(IN_PLAIN_WORDS)('%s', async (_what, yaml, expected) => {
    const found = await problems(yaml);
    expect(found).toEqual(expected);
    for (const line of found) expect(line).not.toMatch(/must match|equal to constant|must NOT|schema|flow-(map|seq)|token|\^|\$\)|YAML:/);
  });
});
