/**
 * `${file:...}` secrets in a running gateway: a secret file rewritten in place (not only swapped)
 * is applied, and a rejected edit's errors, which reach the log and the public /readyz, never
 * quote a value read from a file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/console/config-view.ts';
import { DEV_KEY, type FakeUpstream, startFakeUpstream, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

let t: TestGateway | undefined;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  await t?.close();
  await upstream?.close();
  t = undefined;
  upstream = undefined;
});

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 2000): Promise<void> {
  for (const started = Date.now(); !(await check()); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
  }
}

describe('${file:...} secrets, reloaded', () => {
  it('a secret file rewritten in place is applied; a rejected edit does not quote what it read', async () => {
    upstream = await startFakeUpstream((req) => ({
      status: 200,
      body: {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: req.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: String(req.headers.authorization) }, finish_reason: 'stop' }],
      },
    }));
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-secret-reload-'));
    const yaml = (hash: string) => `keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: ci, keyHash: "${hash}" }
providers:
  up: { plugin: openai, baseUrl: "${upstream!.url}/v1", apiKey: "\${file:openai-api-key}" }
models:
  demo: { targets: [{ provider: up, model: m }] }
`;
    writeFileSync(path.join(dir, 'openai-api-key'), 'sk-first-0123456789\n');
    writeFileSync(path.join(dir, 'gateway.yaml'), yaml(`sha256:${'a'.repeat(64)}`));
    t = await startTestGateway({ file: path.join(dir, 'gateway.yaml') }, { watch: true, watchDebounceMs: 30 });
    const ask = async () => (await t!.client().chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content;
    expect(await ask()).toBe('Bearer sk-first-0123456789');

    writeFileSync(path.join(dir, 'openai-api-key'), 'sk-second-0123456789\n');
    await until(async () => (await ask()) === 'Bearer sk-second-0123456789');
    expect(t.gateway.lastReload).toMatchObject({ ok: true, generation: 2, trigger: `file changed: ${path.join(dir, 'openai-api-key')}` });

    // A keyHash read from a file, malformed: the schema message would quote it.
    writeFileSync(path.join(dir, 'ci-key-hash'), 'sha256:not-hex-but-a-secret-value\n');
    writeFileSync(path.join(dir, 'gateway.yaml'), yaml('${file:ci-key-hash}'));
    await until(() => t!.gateway.lastReload?.ok === false);
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { generation: number; lastReload: { errors: string[] } };
    expect(ready.generation).toBe(2);
    expect(ready.lastReload.errors).toHaveLength(1);
    // (The wording after the path is config/schema-errors.ts's; only the position and the mask matter here.)
    expect(ready.lastReload.errors[0].startsWith(`${path.join(dir, 'gateway.yaml')}:3:26 keys[1].keyHash: `)).toBe(true);
    expect(ready.lastReload.errors[0]).toContain('[REDACTED]');
    expect(JSON.stringify(ready)).not.toContain('not-hex-but-a-secret-value');
    expect(t.logText()).not.toContain('not-hex-but-a-secret-value');
    expect(t.logText()).not.toContain('sk-second-0123456789');
    expect(await ask()).toBe('Bearer sk-second-0123456789');
  });

  it("the console's dry run of an edit does not quote what the edit read from a file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-secret-dry-run-'));
    writeFileSync(path.join(dir, 'private'), 'sk-private-value-0123456789\n');
    const config = `keys:\n  - { name: dev, key: ${DEV_KEY} }\nproviders:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n`;
    writeFileSync(path.join(dir, 'gateway.yaml'), config);
    t = await startTestGateway({ file: path.join(dir, 'gateway.yaml') });
    // An enum message quotes the value it got: here, the file's content.
    const result = await validateConfigText(`log: { level: "\${file:private}" }\n${config}`, t.gateway.runtime, {});
    expect(result.ok).toBe(false);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/:1:\d+ log\.level: /);
    expect(result.errors[0]).toContain('[REDACTED]');
    expect(JSON.stringify(result)).not.toContain('private-value');
  });
});
