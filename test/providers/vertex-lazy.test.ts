/**
 * google-auth-library is loaded only when a Vertex provider with a Google identity is prepared: a
 * gateway without one (or with an Express mode key only) never loads it. Checked in a fresh Node
 * process, by whether the library's files are in the CommonJS module cache (it is a CommonJS
 * package, so an import of it lands there).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { packageLoadedAfterStart } from '../helpers/lazy-load.ts';

const KEYS = 'keys: [{ name: dev, key: sk-test-dev-0123456789, models: ["*"] }]';

function config(dir: string, name: string, providers: string): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, `log: { level: silent }\n${KEYS}\nproviders:\n${providers}\nmodels:\n  m: { targets: [{ provider: p, model: gemini-2.5-flash }] }\n`);
  return file;
}

it('a gateway loads google-auth-library only for a Vertex provider with a Google identity', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-vertex-lazy-'));
  // An external_account whose token source is a file that is not there: the library is loaded and
  // fails at once, on the machine, without reaching anything.
  const wif = JSON.stringify({
    type: 'external_account',
    audience: '//iam.googleapis.com/x',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: 'http://127.0.0.1:9/v1/token',
    credential_source: { file: path.join(dir, 'missing-token') },
  });
  writeFileSync(path.join(dir, 'wif.json'), wif);
  const files = [
    config(dir, 'mock', '  p: { plugin: mock }'),
    config(dir, 'express', '  p: { plugin: vertex, auth: { type: api-key, key: AQ.express-0123456789 } }'),
    config(dir, 'google', '  p: { plugin: vertex, project: proj, auth: { type: google, credentialsFile: wif.json } }'),
  ];
  expect(packageLoadedAfterStart('google-auth-library', files, { ...process.env, GCE_METADATA_HOST: '127.0.0.1:9' })).toEqual([false, false, true]);
});
