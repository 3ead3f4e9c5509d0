/**
 * The published package as a user gets it: `npm pack` (which builds dist/), the tarball installed
 * offline in a project outside the repository, a provider plugin written there in TypeScript
 * against the installed types (checked with the installed tsc), and the installed `switchyard`
 * bin serving a chat request through that plugin to a fake upstream on 127.0.0.1.
 *
 * Offline: the project's lockfile is derived from the repository's (same versions, tarball URLs
 * from the configured registry), so `npm ci --offline` takes every package from the npm cache
 * that the repository's own `npm ci` filled. Slow (pack and install): one describe, long timeouts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LockEntry, lockEntriesWithUrls, npmPack, repositoryLock, step } from '../helpers/npm-package.ts';
import { ROOT } from '../helpers/repo.ts';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; dependencies: Record<string, string> };
const KEY = 'sk-pack-test-123456';
const UPSTREAM_KEY = 'upstream-secret-abc';

let project: string;
let packed: string[] = [];
let upstream: Server;
let gateway: ChildProcess | undefined;

/**
 * A lockfile for the temporary project: the repository's entries the package needs at run time,
 * plus typescript and @types/node for the type check.
 */
function projectLock(tarball: string, deps: Record<string, string>): object {
  const forTypeCheck = /^node_modules\/(typescript|@typescript\/[^/]+|@types\/node|undici-types)$/;
  const packages: Record<string, LockEntry> = { '': { name: 'switchyard-pack-test', dependencies: deps } };
  for (const [where, entry] of Object.entries(lockEntriesWithUrls((where, entry) => !entry.dev || forTypeCheck.test(where)))) {
    const { dev: _dev, ...kept } = entry;
    packages[where] = kept;
  }
  packages['node_modules/switchyard-gateway'] = { version: pkg.version, resolved: `file:${tarball}`, dependencies: pkg.dependencies, bin: pkg.bin };
  return { name: 'switchyard-pack-test', lockfileVersion: 3, requires: true, packages };
}

const PLUGIN = `/** A tiny provider for any OpenAI-compatible server, written against the installed package. */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type HttpRequestSpec } from 'switchyard-gateway';
import { openAiStyleFailure, type SseJsonEvent } from 'switchyard-gateway/kit';

export interface Options {
  baseUrl: string;
  apiKey: string;
}

export default defineHttpProvider<Options>({
  id: 'tiny',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['baseUrl', 'apiKey'],
    properties: { baseUrl: { type: 'string' }, apiKey: { type: 'string' } },
  },
  secretOptions: ['apiKey'],
  capabilities: { streaming: true, tools: false },
  endpoint: (options) => ({ baseUrl: options.baseUrl, headers: { authorization: \`Bearer \${options.apiKey}\` } }),
  buildRequest: (call) => ({ path: '/chat/completions', body: { ...call.request, model: call.model } }),
  toCompletion: (body): ChatCompletion => body as ChatCompletion,
  createStreamTranslator: () => ({ push: (event) => (event as SseJsonEvent).data as ChatCompletionChunk }),
  readError: openAiStyleFailure,
});

// The installed declarations are real types, not any: a request without its path is an error
// (were it not, the unused directive would be one).
// @ts-expect-error HttpRequestSpec requires a path
export const wrong: HttpRequestSpec = { body: {} };
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'es2023',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2023'],
    types: ['node'],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    skipLibCheck: false,
  },
  include: ['plugins'],
};

describe('the npm package, installed from its tarball outside the repository', () => {
  beforeAll(async () => {
    project = mkdtempSync(path.join(tmpdir(), 'switchyard-pack-'));
    const report = npmPack('npm pack (prepack builds dist/)', ROOT, project);
    packed = report.files;
    const tarball = report.tarball;
    if (!existsSync(path.join(project, tarball))) throw new Error(`npm pack reported ${tarball} but it is not in ${project}`);

    const repoLock = repositoryLock().packages;
    const deps = { 'switchyard-gateway': `file:${tarball}`, typescript: repoLock['node_modules/typescript'].version!, '@types/node': repoLock['node_modules/@types/node'].version! };
    writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name: 'switchyard-pack-test', private: true, type: 'module', dependencies: deps }, null, 2)}\n`);
    writeFileSync(path.join(project, 'package-lock.json'), `${JSON.stringify(projectLock(tarball, deps), null, 2)}\n`);
    step('installing the tarball offline from the npm cache (run `npm ci` in the repository first to fill it)', 'npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);

    mkdirSync(path.join(project, 'plugins', 'tiny'), { recursive: true });
    writeFileSync(path.join(project, 'plugins', 'tiny', 'index.ts'), PLUGIN);
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));

    upstream = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        if (req.url !== '/v1/chat/completions' || req.headers.authorization !== `Bearer ${UPSTREAM_KEY}`) {
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `unexpected ${req.url} ${req.headers.authorization}`, type: 'invalid_request_error' } }));
          return;
        }
        const body = JSON.parse(raw) as { model: string; messages: Array<{ content: string }> };
        const completion = {
          id: 'chatcmpl-tiny',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: `tiny heard: ${body.messages[0].content}` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    writeFileSync(
      path.join(project, 'gateway.yaml'),
      [
        `keys: [{ name: test, key: ${KEY} }]`,
        'providers:',
        `  tiny: { plugin: ./plugins/tiny/index.ts, baseUrl: "${upstreamUrl}", apiKey: "\${TINY_API_KEY}" }`,
        'models:',
        '  hello: { targets: [{ provider: tiny, model: tiny-1 }] }',
        'log: { level: info, format: json }',
        '',
      ].join('\n'),
    );
  }, 300_000);

  afterAll(async () => {
    gateway?.kill('SIGTERM');
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('ships compiled JavaScript, declarations, the bin and the built-in plugins; no sources or tests', () => {
    const builtins = readdirSync(path.join(ROOT, 'plugins'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'examples' && !e.name.startsWith('zz-'))
      .map((e) => e.name);
    const required = [
      'package.json',
      'LICENSE',
      'README.md',
      'gateway.yaml',
      'bin/switchyard.mjs',
      'bin/ensure-node.mjs',
      'bin/serving-env.mjs',
      'dist/src/cli.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/kit/index.js',
      'dist/src/kit/index.d.ts',
      'dist/src/kit/testing/index.js',
      'dist/src/plugins/generation-hooks.mjs',
      'dist/schemas/gateway.schema.json',
      'dist/schemas/chat-request.schema.json',
    ];
    for (const id of builtins) required.push(`dist/plugins/${id}/index.js`);
    expect(required.filter((f) => !packed.includes(f))).toEqual([]);
    const unwanted = packed.filter(
      (f) => /^(src|test|bench|scripts|plugins)\//.test(f) || f.startsWith('dist/plugins/examples/') || /\.test\.|\.tgz$/.test(f) || (/\.(ts|mts)$/.test(f) && !/\.d\.m?ts$/.test(f)),
    );
    expect(unwanted).toEqual([]);
    expect(existsSync(path.join(project, 'node_modules', 'switchyard-gateway', 'src'))).toBe(false);
  });

  it('type-checks a TypeScript provider plugin against the installed declarations', () => {
    const tsc = path.join(project, 'node_modules', '.bin', 'tsc');
    expect(existsSync(tsc), 'typescript was not installed in the temporary project').toBe(true);
    step('type-checking the plugin with the installed tsc', tsc, ['-p', 'tsconfig.json'], project);
  });

  it('answers --version under both bin names', () => {
    for (const name of ['switchyard', 'switchyard-gateway']) {
      expect(step(`${name} --version`, path.join(project, 'node_modules', '.bin', name), ['--version'], project).trim()).toBe(pkg.version);
    }
  });

  it('serves a chat request through the installed bin and the plugin loaded by path', async () => {
    const bin = path.join(project, 'node_modules', '.bin', 'switchyard');
    const child = spawn(bin, ['--config', 'gateway.yaml', '--port', '0'], { cwd: project, env: { ...process.env, TINY_API_KEY: UPSTREAM_KEY } });
    gateway = child;
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let exited = false;
    child.on('exit', () => (exited = true));
    let url: string | undefined;
    for (const deadline = Date.now() + 30_000; !url && !exited && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      url = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output)?.[1];
    }
    expect(url, `the installed bin did not start listening:\n${output}`).toBeDefined();

    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hello', messages: [{ role: 'user', content: 'ping' }] }),
    });
    const body = (await res.json()) as { model: string; choices: Array<{ message: { content: string } }> };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.model).toBe('tiny-1');
    expect(body.choices[0].message.content).toBe('tiny heard: ping');
  });
});
