/** The HTTP surface with a plain client: every error OpenAI-shaped, every response with x-request-id. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, expectValid, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml } from '../helpers/repo.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway(
    configYaml({
      providers: '  mock: { plugin: mock }\n  off: { plugin: openai, baseUrl: "http://127.0.0.1:9/v1", apiKey: "${NOT_SET_ANYWHERE}" }',
      models: '  demo: { targets: [{ provider: mock, model: mock-1 }] }\n  later: { targets: [{ provider: off, model: x }] }',
      extra: 'server: { bodyLimit: 2kb }',
    }),
  );
});
afterAll(() => t.close());

const auth = { authorization: `Bearer ${DEV_KEY}` };

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${t.url}${path}`, init);
  const text = await res.text();
  return { res, status: res.status, body: text ? JSON.parse(text) : undefined };
}

function expectError(r: { res: Response; status: number; body: { error: { code: string } } }, status: number, code: string) {
  expect(r.status).toBe(status);
  expectValid('ErrorResponse', r.body);
  expect(r.body.error.code).toBe(code);
  expect(r.res.headers.get('x-request-id')).toBeTruthy();
  expect(r.res.headers.get('content-type')).toMatch(/^application\/json/);
}

describe('HTTP errors', () => {
  it('unknown route → 404, wrong method → 405 with Allow', async () => {
    expectError(await call('/v1/embeddingz'), 404, 'not_found');
    const r = await call('/v1/chat/completions', { method: 'GET', headers: auth });
    expectError(r, 405, 'method_not_allowed');
    expect(r.res.headers.get('allow')).toBe('POST');
    expectError(await call('/v1/models', { method: 'DELETE' }), 405, 'method_not_allowed');
  });

  it('non-JSON → 415, broken JSON → 400, empty body → 400, over bodyLimit → 413', async () => {
    const post = (body: string, type = 'application/json') => call('/v1/chat/completions', { method: 'POST', headers: { ...auth, 'content-type': type }, body });
    expectError(await post('hello', 'text/plain'), 415, 'unsupported_media_type');
    const broken = await post('{"model": "demo", "messages": [');
    expectError(broken, 400, 'invalid_json');
    expectError(await post(''), 400, 'invalid_json');
    expectError(await post(JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x'.repeat(4096) }] })), 413, 'request_too_large');
    expectError(await post('[1,2]'), 400, 'invalid_request');
  });

  it('errors before the pipeline are logged like any request', async () => {
    const r = await call('/v1/chat/completions', { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'bad-json-1' }, body: '{' });
    expect(r.status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.logs.find((l) => l.reqId === 'bad-json-1')).toMatchObject({ status: 400, error: 'invalid_json' });
  });

  it('an insane client x-request-id is replaced, a sane one kept', async () => {
    const bad = await call('/healthz', { headers: { 'x-request-id': 'has spaces and <tags>' } });
    expect(bad.res.headers.get('x-request-id')).toMatch(/^req_/);
    const good = await call('/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(good.res.headers.get('x-request-id')).toBe('abc-123');
  });

  it('a malformed Authorization header is 401', async () => {
    const r = await call('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x' }] }),
    });
    expectError(r, 401, 'invalid_api_key');
  });

  it('also serves /chat/completions without the /v1 prefix', async () => {
    const r = await call('/chat/completions', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(r.status).toBe(200);
    expectValid('CreateChatCompletionResponse', r.body);
  });
});

describe('health', () => {
  it('/healthz is live, /readyz reports providers with reasons', async () => {
    expect((await call('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await call('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', generation: 1, models: ['demo', 'later'], providers: { mock: { status: 'ready' }, off: { status: 'unavailable' } } });
    expect(ready.body.providers.off.reason).toContain('NOT_SET_ANYWHERE');
  });

  it('/v1/models needs a key and validates as a list', async () => {
    expectError(await call('/v1/models'), 401, 'invalid_api_key');
    const r = await call('/v1/models', { headers: auth });
    expectValid('ListModelsResponse', r.body);
  });
});
