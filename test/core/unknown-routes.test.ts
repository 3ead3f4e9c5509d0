/**
 * A request for a route the gateway does not serve is answered (404, or 405 with Allow) and, so
 * that an operator sees which client called what, logged (method, path, status, key name) and
 * counted by method.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEV_KEY, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

let t: TestGateway;
const base = () => t.url.replace(/\/v1$/, '');

beforeAll(async () => {
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
`);
});
afterAll(() => t.close());

const lineFor = async (reqId: string) => {
  await expect.poll(() => t.logs.some((l) => l.reqId === reqId && l.msg === 'unknown route')).toBe(true);
  return t.logs.find((l) => l.reqId === reqId && l.msg === 'unknown route')!;
};

it('logs a 404 with the method, the path without its query, the status and the key name', async () => {
  const res = await fetch(`${base()}/v1beta/models/demo:predictLongRunning?alt=sse&key=${DEV_KEY}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(404);
  const line = await lineFor(res.headers.get('x-request-id')!);
  expect(line).toMatchObject({ method: 'POST', path: '/v1beta/models/demo:predictLongRunning', status: 404, key: 'dev' });
  expect(JSON.stringify(t.logs)).not.toContain(DEV_KEY);
});

it('logs a wrong method as 405, and a caller without a valid key without a name', async () => {
  const res = await fetch(`${base()}/v1/chat/completions`, { headers: { authorization: 'Bearer sk-unknown-0123456789' } });
  expect(res.status).toBe(405);
  const line = await lineFor(res.headers.get('x-request-id')!);
  expect(line).toMatchObject({ method: 'GET', path: '/v1/chat/completions', status: 405 });
  expect(line.key).toBeUndefined();
});

it('counts them by method and status', async () => {
  const metrics = await (await fetch(`${base()}/metrics`)).text();
  expect(metrics).toMatch(/switchyard_unknown_routes_total\{method="POST",status="404"\} [1-9]/);
  expect(metrics).toMatch(/switchyard_unknown_routes_total\{method="GET",status="405"\} [1-9]/);
});
