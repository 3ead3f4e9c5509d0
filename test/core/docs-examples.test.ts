/**
 * The docs' runnable examples run: the README's client snippets against the gateway serving the
 * repository's own gateway.yaml (what the quick start starts), and the stage and provider
 * examples of the README and docs/plugins.md loaded by path into a real gateway. Their types are
 * checked by `npm run check:docs`; this checks that they do what the docs say.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { chatRequests, failureOf, fakeUpstream, startTestGateway, streamAnswer, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { codeBlocks, type CodeBlock } from '../../scripts/check-docs.mjs';
import { ROOT } from '../helpers/repo.ts';

const blocksOf = (doc: string) => codeBlocks(readFileSync(path.join(ROOT, doc), 'utf8')).map((b) => ({ ...b, doc }));

/** The one block of `doc` in `lang` that contains `marker`; fails naming the doc when it is gone. */
function example(doc: string, lang: string, marker: string): CodeBlock & { doc: string } {
  const found = blocksOf(doc).filter((b) => b.lang === lang && b.text.includes(marker));
  if (found.length !== 1) throw new Error(`${doc}: expected one \`\`\`${lang} block containing ${JSON.stringify(marker)}, found ${found.length}`);
  return found[0];
}

describe("the README's client examples, against the repository's gateway.yaml", () => {
  // Inside the repository, so that the snippets' `import OpenAI from 'openai'` resolves.
  const work = path.join(ROOT, `node_modules/.cache/docs-examples-${process.pid}`);
  let t: TestGateway | undefined;
  afterAll(async () => {
    await t?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const clients = blocksOf('README.md').filter((b) => b.lang === 'js' && b.text.includes('http://127.0.0.1:8080'));
  it('there are client examples to run', () => expect(clients.length).toBeGreaterThanOrEqual(2));

  for (const block of clients) {
    it(`README.md:${block.line} runs and prints what its comments say`, async () => {
      t ??= await startTestGateway({ file: path.join(ROOT, 'gateway.yaml') });
      mkdirSync(work, { recursive: true });
      const file = path.join(work, `readme-${block.line}.mjs`);
      writeFileSync(file, block.text.replaceAll('http://127.0.0.1:8080', t.url));
      // Asynchronously: the gateway answering the snippet runs in this process.
      const run = await promisify(execFile)(process.execPath, [file], { cwd: work, encoding: 'utf8', timeout: 30_000 });
      // `console.log(...);   // what it prints` (a trailing `...` stands for the rest of the line).
      const promised = [...block.text.matchAll(/console\.log\(.*\);\s*\/\/\s*(.+)$/gm)].map((m) => m[1].replace(/\s*\.\.\.$/, ''));
      const printed = run.stdout.trimEnd().split('\n');
      promised.forEach((text, i) => expect(printed[i]).toMatch(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)));
    });
  }
});

describe('the stage and provider examples, loaded by path', () => {
  const tagTeam = example('docs/plugins.md', 'ts', "name: 'tag-team'");
  const blockSecrets = example('README.md', 'ts', "name: 'block-secrets'");
  const acme = example('docs/plugins.md', 'ts', "id: 'acme'");
  // The Acme API the provider example speaks: POST /generate, answers with text and token counts.
  const upstream = fakeUpstream((req) =>
    req.body.stream
      ? streamAnswer(['data: {"text":"Hel","done":false}\n\n', 'data: {"text":"lo","done":true}\n\n'])
      : { status: 200, body: { id: 'gen-1', model: 'large-v2', text: `echo: ${req.body.prompt}`, tokens_in: 3, tokens_out: 2 } },
  );
  const t = useTestGateway(
    () => ({
      providers: { mock: { plugin: 'mock' }, acme: { plugin: './acme.ts', baseUrl: upstream.url, apiKey: 'acme-test-key' } },
      models: { demo: { targets: [{ provider: 'mock', model: 'mock-1' }] }, acme: { targets: [{ provider: 'acme', model: 'large-v2' }] } },
      pipeline: [
        'auth',
        'validate',
        { stage: './tag-team.ts', options: { team: 'search' } },
        { stage: './block-secrets.ts', options: { pattern: 'AKIA[0-9A-Z]{16}' } },
        'route',
        'retry',
        'transform-response',
        'log',
      ],
    }),
    { upstreams: [upstream], files: { 'tag-team.ts': tagTeam.text, 'block-secrets.ts': blockSecrets.text, 'acme.ts': acme.text } },
  );
  const { chat, streamed } = chatRequests(t, { model: 'demo' });

  it(`docs/plugins.md:${tagTeam.line} (tag-team) adds its response header`, async () => {
    const { response } = await chat().withResponse();
    expect(response.headers.get('x-team')).toBe('search');
  });

  it(`README.md:${blockSecrets.line} (block-secrets) refuses what matches its pattern with a 400 naming messages`, async () => {
    const err = await failureOf(chat({ messages: [{ role: 'user', content: 'my key is AKIAABCDEFGHIJKLMNOP' }] }));
    expect(err.status).toBe(400);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'messages' });
    expect((await chat({ messages: [{ role: 'user', content: 'nothing secret here' }] })).choices[0].message.content).toBeTruthy();
  });

  it(`docs/plugins.md:${acme.line} (the acme provider) answers and streams through the gateway`, async () => {
    const r = await chat({}, 'acme');
    expect(upstream.requests[0]).toMatchObject({ url: '/generate', headers: { 'x-acme-key': 'acme-test-key' }, body: { model: 'large-v2', prompt: 'hi', stream: false } });
    expect(r.choices[0].message.content).toBe('echo: hi');
    expect(r.usage?.total_tokens).toBe(5);
    const { text, finishes } = await streamed({}, 'acme');
    expect(text).toBe('Hello');
    expect(finishes).toEqual(['stop']);
  });
});
