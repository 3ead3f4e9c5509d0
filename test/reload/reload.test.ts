/**
 * Hot reload under load: gateway.yaml is edited while a client sends plain and streamed
 * requests; no request may fail, valid changes apply within a second, a broken file is never
 * applied, and streams finish on the generation they started on.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { DEV_KEY, type FakeUpstream, logLineFor, startFakeUpstream, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

const KEYS = `keys: [{ name: dev, key: ${DEV_KEY} }]\n`;
let t: TestGateway | undefined;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  await t?.close();
  await upstream?.close();
  t = undefined;
  upstream = undefined;
});

function configWith(
  models: string,
  providers = '  v1: { plugin: mock, reply: "from v1" }\n  v2: { plugin: mock, reply: "from v2" }\n  slow: { plugin: mock, reply: "slow one two three four five six seven eight nine ten", chunkDelayMs: 60 }',
) {
  return `${KEYS}providers:\n${providers}\nmodels:\n${models}\n`;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 1000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

/** Sends requests back to back on `loops` connections, plain and streamed, counting failures. */
function loadGenerator(url: string, models: () => string[], loops = 6) {
  const pool = new Pool(url, { connections: loops });
  const stats = { ok: 0, failed: [] as string[] };
  let running = true;
  const loop = async (n: number) => {
    for (let i = 0; running; i++) {
      const list = models();
      const model = list[i % list.length];
      const stream = (i + n) % 2 === 0;
      try {
        const res = await pool.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
        });
        const text = await res.body.text();
        if (res.statusCode !== 200 || (stream && (!text.endsWith('data: [DONE]\n\n') || text.includes('"error"')))) stats.failed.push(`${model} ${res.statusCode} ${text.slice(0, 200)}`);
        else stats.ok++;
      } catch (err) {
        stats.failed.push(`${model} ${(err as Error).message}`);
      }
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, n) => loop(n)));
  return {
    stats,
    async stop() {
      running = false;
      await done;
      await pool.close();
    },
  };
}

async function ask(model: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${t!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, text: await res.text() };
}

describe('hot reload', () => {
  it('applies valid edits under load with zero failed requests, never a broken one, and lets streams finish on their generation', async () => {
    t = await startTestGateway(configWith('  demo: { targets: [{ provider: v1, model: m1 }] }\n  talk: { targets: [{ provider: slow, model: s1 }] }'), { watch: true, watchDebounceMs: 50 });
    let models = ['demo'];
    const load = loadGenerator(t.url, () => models);
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 400));

    // A slow stream started on generation 1, on provider `slow`.
    const slowStream = fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', 'x-request-id': 'long-stream' },
      body: JSON.stringify({ model: 'talk', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 100));

    // 1. Add a model and move `talk` to another provider while its stream is running.
    writeFileSync(
      t.configFile,
      configWith('  demo: { targets: [{ provider: v1, model: m1 }] }\n  extra: { targets: [{ provider: v2, model: m2 }] }\n  talk: { targets: [{ provider: v2, model: m2 }] }'),
    );
    await until(async () => (await ask('extra')).status === 200);
    models = ['demo', 'extra'];
    expect(t.gateway.runtime.generation).toBe(2);
    await new Promise((r) => setTimeout(r, 500));

    // 2. Move `demo` to v2.
    writeFileSync(
      t.configFile,
      configWith('  demo: { targets: [{ provider: v2, model: m2 }] }\n  extra: { targets: [{ provider: v2, model: m2 }] }\n  talk: { targets: [{ provider: v2, model: m2 }] }'),
    );
    await until(async () => (await ask('demo')).text.includes('from v2'));
    await new Promise((r) => setTimeout(r, 500));

    // 3. Break the file: never applied, the precise error is visible at /readyz.
    writeFileSync(t.configFile, configWith('  demo: { targets: [{ provider: v3, model: m2 }] }\n  extra: { targets: [{ provider: v2, model: m2 }] }'));
    await until(() => t!.gateway.lastReload?.ok === false);
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { generation: number; lastReload: { errors: string[] } };
    expect(ready.generation).toBe(3);
    expect(ready.lastReload).toMatchObject({ ok: false, generation: 3 });
    expect(ready.lastReload.errors[0]).toMatch(/gateway\.yaml:\d+:\d+ models\.demo\.targets\[0\]\.provider: unknown provider "v3"/);
    expect((await ask('demo')).text).toContain('from v2');
    expect((await ask('talk')).status).toBe(200); // still generation 3, which has `talk`
    await new Promise((r) => setTimeout(r, 500));

    // 4. Fix it: applies.
    writeFileSync(t.configFile, configWith('  demo: { targets: [{ provider: v1, model: m1 }] }\n  extra: { targets: [{ provider: v2, model: m2 }] }'));
    await until(async () => (await ask('demo')).text.includes('from v1'));
    expect(t.gateway.runtime.generation).toBe(4);
    expect((await ask('talk')).status).toBe(404);

    // The stream that started on generation 1 finished there, on `slow`, complete.
    const body = await slowStream;
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(body).not.toContain('"error"');
    expect(body).toContain('ten');
    expect(await logLineFor(t, 'long-stream')).toMatchObject({ provider: 'slow', status: 200 });

    await new Promise((r) => setTimeout(r, 300));
    await load.stop();
    const seconds = (Date.now() - started) / 1000;
    expect(load.stats.failed).toEqual([]);
    expect(load.stats.ok / seconds).toBeGreaterThan(100); // the edits happened under real load
    const reloads = t.logs.filter((l) => /^reloaded /.test(l.msg));
    expect(reloads.map((l) => l.msg.replace(/^reloaded \S+ /, ''))).toEqual(['(generation 2): models +extra ~talk', '(generation 3): models ~demo', '(generation 4): models ~demo -talk']);
  });

  it('serves a provider plugin edited on disk without a restart', async () => {
    const plugin = (reply: string) => `import { defineProvider } from '${path.resolve('src/index.ts')}';
export default defineProvider({
  apiVersion: 1, kind: 'provider', id: 'canned', optionsSchema: { type: 'object' },
  create: () => ({
    async send(call) { return { kind: 'json', body: { reply: ${JSON.stringify(reply)} }, headers: {} }; },
    toCompletion: (body, call) => ({ id: 'x', object: 'chat.completion', created: 0, model: call.model, choices: [{ index: 0, message: { role: 'assistant', content: body.reply }, finish_reason: 'stop' }] }),
    createStreamTranslator: () => ({ push: () => undefined }),
  }),
});
`;
    t = await startTestGateway(`${KEYS}providers:\n  canned: { plugin: ./canned.ts }\nmodels:\n  demo: { targets: [{ provider: canned, model: c1 }] }\n`, {
      files: { 'canned.ts': plugin('first version') },
      watch: true,
      watchDebounceMs: 50,
    });
    expect((await ask('demo')).text).toContain('first version');
    writeFileSync(path.join(t.dir, 'canned.ts'), plugin('second version'));
    await until(async () => (await ask('demo')).text.includes('second version'), 2000);
    expect(t.gateway.runtime.generation).toBe(2);
    // The reload says what changed: the plugin's code, not "no effective change".
    expect(t.gateway.lastReload?.changes).toMatch(/^plugin code changed: .*canned\.ts$/);
  });

  it('a removed provider keeps serving its in-flight stream, then its pool is closed', async () => {
    const chunk = (i: number, finish = false) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-1', choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: finish ? 'stop' : null }] })}\n\n`;
    upstream = await startFakeUpstream(() => ({ status: 200, chunks: [...Array.from({ length: 10 }, (_, i) => chunk(i)), chunk(10, true), 'data: [DONE]\n\n'], gapMs: 50 }));
    const withUp = `${KEYS}providers:\n  up: { plugin: openai, baseUrl: "${upstream.url}/v1" }\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: up, model: up-1 }] }\n`;
    t = await startTestGateway(withUp);
    const stream = fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }).then((r) => r.text());
    await until(() => upstream!.openConnections === 1);

    writeFileSync(t.configFile, `${KEYS}providers:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n`);
    const outcome = await t.gateway.reload('test');
    expect(outcome).toMatchObject({ ok: true, generation: 2, changes: 'models ~demo; providers -up' });
    expect((await ask('demo')).text).toContain('mock provider');
    expect(upstream.openConnections).toBe(1); // the old generation still streams

    const body = await stream;
    expect(body).toContain('w9');
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    await until(() => upstream!.openConnections === 0); // the retired pool closed its connection
  });

  it('a reload keeps the cooldown of targets it did not change', async () => {
    upstream = await startFakeUpstream(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } }));
    const config = (extra: string) =>
      `${KEYS}providers:\n  up: { plugin: openai, baseUrl: "${upstream!.url}/v1" }\n  mock: { plugin: mock }\nmodels:\n  demo: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 60000, durationMs: 60000 }, targets: [{ provider: up, model: u }, { provider: mock, model: m }] }\n${extra}`;
    t = await startTestGateway(config(''));
    expect((await ask('demo')).status).toBe(200); // up failed, mock answered; up now cools down
    expect(upstream.requests).toHaveLength(1);
    writeFileSync(t.configFile, config('  other: { targets: [{ provider: mock, model: m }] }\n'));
    expect(await t.gateway.reload('test')).toMatchObject({ ok: true, changes: 'models +other' });
    expect((await ask('demo')).status).toBe(200);
    expect(upstream.requests).toHaveLength(1); // still cooling after the reload
  });
});
