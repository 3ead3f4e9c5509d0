/** `${file:<path>}` in gateway.yaml: real files in a temporary folder, through the whole parse and build. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildRuntime } from '../runtime/build.ts';
import { fingerprintOf, MISSING } from './fingerprint.ts';
import { formatIssue } from './issues.ts';
import { interpolate } from './interpolate.ts';
import { parseConfigFile } from './load.ts';
import { SecretFiles, unreadableReason } from './secret-files.ts';
import { ConfigSource } from './source.ts';

const silent = pino({ level: 'silent' });

/** A folder with gateway.yaml and `files` (relative name → content) beside it. */
function folder(yaml: string, files: Record<string, string> = {}): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-secret-files-'));
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, yaml);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return { dir, file };
}

const issuesOf = (parsed: Awaited<ReturnType<typeof parseConfigFile>>, file: string) => parsed.source.issues.map(formatIssue).map((s) => s.replace(file, 'gateway.yaml'));

const CONFIG = (apiKey: string, clientKey = 'sk-client-0123456789') => `keys:
  - { name: app, key: "${clientKey}" }
providers:
  up: { plugin: openai, baseUrl: "http://127.0.0.1:1/v1", apiKey: "${apiKey}" }
models:
  demo: { targets: [{ provider: up, model: m }] }
`;

describe('${file:...}', () => {
  it('reads the file, trimmed, relative to the config file; records what it read and its fingerprint', async () => {
    const { dir, file } = folder(CONFIG('${file:secrets/openai-api-key}'), { 'secrets/openai-api-key': 'sk-from-file-0123456789\n' });
    const parsed = await parseConfigFile(file, {});
    expect(parsed.source.issues).toEqual([]);
    expect(parsed.config?.providers.up).toMatchObject({ apiKey: 'sk-from-file-0123456789' });
    expect(parsed.fileSecrets).toEqual(['sk-from-file-0123456789']);
    const secret = path.join(dir, 'secrets/openai-api-key');
    expect([...parsed.inputs.keys()]).toEqual([file, secret]);
    expect(parsed.inputs.get(secret)).toBe(fingerprintOf(Buffer.from('sk-from-file-0123456789\n')));
  });

  it('an absolute path, a value inside a longer string, and the same file twice read once', () => {
    const { dir } = folder('', { token: 'abc123' });
    const files = new SecretFiles('/nowhere');
    const source = new ConfigSource('gateway.yaml', `a: \${file:${dir}/token}\nb: "Bearer \${file:${dir}/token}"\n`);
    expect(interpolate(source, {}, files)).toEqual([]);
    expect(source.doc.toJS()).toEqual({ a: 'abc123', b: 'Bearer abc123' });
    expect(files.fingerprints.size).toBe(1);
  });

  it('${file:-x} is the variable `file` with a default, $${file:x} is literal text', () => {
    const source = new ConfigSource('gateway.yaml', 'a: ${file:-fallback}\nb: "$${file:x}"\n');
    expect(interpolate(source, {}, new SecretFiles('/nowhere'))).toEqual([]);
    expect(source.doc.toJS()).toEqual({ a: 'fallback', b: '${file:x}' });
  });

  it("a provider's unreadable secret file leaves it unavailable, with the position, as an unset variable does", async () => {
    const { dir, file } = folder(CONFIG('${file:secrets/openai-api-key}'));
    const parsed = await parseConfigFile(file, {});
    const missing = path.join(dir, 'secrets/openai-api-key');
    expect(issuesOf(parsed, file)).toEqual([
      `gateway.yaml:4:67 warning: providers.up.apiKey: cannot read the file ${missing} (no such file): provider "up" is unavailable until the file can be read (a change to it reloads)`,
    ]);
    expect(parsed.unavailable.get('up')).toBe(`cannot read the file ${missing} (no such file) (gateway.yaml:4:67)`.replace('gateway.yaml', parsed.source.file));
    // Watched although missing: when the Secret gains the key, the gateway reloads.
    expect(parsed.inputs.get(missing)).toBe(MISSING);
    const runtime = await buildRuntime(parsed, { generation: 1, log: silent, env: {} });
    expect(runtime.files).toContain(missing);
    await runtime.close();
  });

  it('an unreadable client key, admin key or Redis URL file is an error at its position; an empty file counts as unreadable', async () => {
    const yaml = `keys:
  - { name: app, key: "\${file:client-key}" }
admin:
  keys:
    - { name: ops, key: "\${file:admin-key}" }
state:
  backend: redis
  redis: { url: "\${file:redis-url}" }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: m }] }
`;
    const { dir, file } = folder(yaml, { 'admin-key': '  \n', 'redis-url': 'redis://127.0.0.1:6379' });
    mkdirSync(path.join(dir, 'client-key'));
    const parsed = await parseConfigFile(file, {});
    expect(issuesOf(parsed, file)).toEqual([
      `gateway.yaml:2:23 keys[0].key: cannot read the file ${dir}/client-key (it is a folder, not a file): check the path (relative paths start from the config file's folder) and that the gateway may read it`,
      `gateway.yaml:5:25 admin.keys[0].key: cannot read the file ${dir}/admin-key (it is empty): check the path (relative paths start from the config file's folder) and that the gateway may read it`,
    ]);
    expect(parsed.source.doc.getIn(['state', 'redis', 'url'])).toBe('redis://127.0.0.1:6379');
  });

  it('says why a file cannot be read: missing, a folder, permission denied', () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ELOOP'].map((code) => unreadableReason(err(code)))).toEqual([
      'no such file',
      'no such file',
      'it is a folder, not a file',
      'permission denied',
      'permission denied',
      'ELOOP',
    ]);
  });

  it('values read from files are scrubbed like configured keys, whatever option they went into', async () => {
    const { file } = folder(
      `keys:
  - { name: app, key: sk-client-0123456789 }
providers:
  up: { plugin: openai, baseUrl: "http://127.0.0.1:1/v1", apiKey: "\${file:key}", headers: { x-org: "\${file:org}" } }
models:
  demo: { targets: [{ provider: up, model: m }] }
`,
      { key: 'sk-upstream-secret-0123456789', org: 'org-private-777777' },
    );
    const runtime = await buildRuntime(await parseConfigFile(file, {}), { generation: 1, log: silent, env: {} });
    expect(runtime.redact('upstream said: bad key sk-upstream-secret-0123456789 for org-private-777777')).toBe('upstream said: bad key [REDACTED] for [REDACTED]');
    await runtime.close();
  });
});
