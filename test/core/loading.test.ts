/** Hashed keys, and plugins named by package (resolved from gateway.yaml's node_modules). */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import OpenAI from 'openai';
import { failureOf, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

const SECRET = 'sk-hashed-only-9876543210';
let t: TestGateway;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-pkg-'));
  // An installed stage package, plain JavaScript, with no dependency on switchyard itself.
  const pkg = path.join(dir, 'node_modules', '@acme', 'switchyard-stamp');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: '@acme/switchyard-stamp', version: '1.0.0', type: 'module', main: 'index.js' }));
  writeFileSync(
    path.join(pkg, 'index.js'),
    `export default {
  apiVersion: 1, kind: 'stage', name: 'stamp',
  optionsSchema: { type: 'object', properties: { value: { type: 'string' } } },
  create: (options) => ({ name: 'stamp', async handle(ctx, next) { ctx.responseHeaders['x-stamp'] = options.value; await next(); } }),
};
`,
  );
  const hash = createHash('sha256').update(SECRET).digest('hex');
  const yaml = `keys:
  - { name: hashed, keyHash: "sha256:${hash}" }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: m }] }
pipeline: [auth, validate, { stage: "@acme/switchyard-stamp", options: { value: packaged } }, route, retry, transform-response, log]
`;
  writeFileSync(path.join(dir, 'gateway.yaml'), yaml);
  t = await startTestGateway({ file: path.join(dir, 'gateway.yaml') });
});
afterAll(() => t.close());

it('accepts a key stored only as its sha256 digest, and refuses the digest itself', async () => {
  const { response } = await t
    .client(SECRET)
    .chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  expect(response.status).toBe(200);
  const digest = createHash('sha256').update(SECRET).digest('hex');
  const err = await failureOf(t.client(digest).chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }));
  expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
});

it('loads a stage from an installed package by name', async () => {
  const { response } = await t
    .client(SECRET)
    .chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  expect(response.headers.get('x-stamp')).toBe('packaged');
});
