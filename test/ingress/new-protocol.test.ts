/**
 * A way in added by an embedder: a Gemini-shaped stub protocol (test/fixtures/protocols, not
 * shipped) given to the gateway beside the built-in ones gets keys, routing, streams, errors in
 * its own envelope and the log line, with no other change. (The built-in Gemini way in,
 * src/ingress/gemini, is tested in gemini.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEV_KEY, logLineFor, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { geminiStubProtocol } from '../fixtures/protocols/gemini-stub/protocol.ts';

let t: TestGateway;
const base = () => t.url.replace(/\/v1$/, '');
const call = (path: string, body: unknown, key = DEV_KEY) =>
  fetch(`${base()}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const HELLO = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] };

beforeAll(async () => {
  t = await startTestGateway(
    `keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
`,
    { protocols: [geminiStubProtocol] },
  );
});
afterAll(() => t.close());

it('answers in its own shape, through the pipeline, with a log line', async () => {
  const res = await call('/stub/models/demo:generateContent', HELLO);
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body).toMatchObject({ modelVersion: 'mock-1', candidates: [{ content: { role: 'model', parts: [{ text: expect.stringContaining('Hello from Switchyard') }] } }] });
  const line = await logLineFor(t, res.headers.get('x-request-id')!);
  expect(line).toMatchObject({ ingress: 'gemini', model: 'demo', provider: 'mock', status: 200, key: 'dev' });
});

it('streams in its own events', async () => {
  const res = await call('/stub/models/demo:streamGenerateContent', HELLO);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text();
  const parts = text
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((e) => JSON.parse(e.replace(/^data: /, '')).candidates[0].content.parts[0].text);
  expect(parts.join('')).toContain('Hello from Switchyard');
});

it('keys, routing and errors come with the pipeline, in its envelope', async () => {
  const unknownKey = await call('/stub/models/demo:generateContent', HELLO, 'sk-wrong-0123456789');
  expect(unknownKey.status).toBe(401);
  expect(await unknownKey.json()).toMatchObject({ error: { code: 401 } });
  const unknownModel = await call('/stub/models/nope:generateContent', HELLO);
  expect(unknownModel.status).toBe(404);
  expect(await unknownModel.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  const wrongMethod = await fetch(`${base()}/stub/models/demo:generateContent`);
  expect(wrongMethod.status).toBe(405);
});
