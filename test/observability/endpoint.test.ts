/**
 * Where the metrics are served (main port, own listener, off), who may read them
 * (`metrics.auth` with admin keys), and the timing every answer and log line carries.
 */
import { describe, expect, it } from 'vitest';
import { DEV_KEY, logLineFor, startTestGateway, useTestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml } from '../helpers/repo.ts';
import { scrape } from './helpers.ts';

const ADMIN_KEY = 'sk-admin-0123456789';
const mock = { providers: '  mock: { plugin: mock }', models: '  demo: { targets: [{ provider: mock, model: mock-1 }] }' };

function chat(baseURL: string, stream = false) {
  return fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', stream, messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (res) => ({ headers: res.headers, status: res.status, text: await res.text() }));
}

describe('metrics on their own port, behind an admin key', () => {
  const t = useTestGateway(() => configYaml({ ...mock, extra: `admin:\n  keys: [{ name: ops, key: ${ADMIN_KEY} }]\nmetrics: { port: 0, path: /internal/metrics, auth: true }` }));

  it('serves them on the metrics listener only', async () => {
    const url = t.gateway.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/internal\/metrics$/);
    expect(url.startsWith(t.url)).toBe(false);
    expect((await scrape(url, { authorization: `Bearer ${ADMIN_KEY}` })).status).toBe(200);
    expect((await scrape(`${t.url}/internal/metrics`, { authorization: `Bearer ${ADMIN_KEY}` })).status).toBe(404);
    expect((await scrape(url.replace('/internal/metrics', '/metrics'))).status).toBe(404);
  });

  it('asks for an admin key: none, a client key and a wrong one are refused with 401', async () => {
    const url = t.gateway.metricsUrl!;
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${DEV_KEY}` }, { authorization: 'Bearer sk-admin-wrong-0000' }]) {
      const res = await scrape(url, headers);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text).error.code).toBe('invalid_api_key');
    }
    const ok = await scrape(url, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(ok.text).toContain('# TYPE switchyard_requests_total counter');
  });
});

describe('timing on every answer', () => {
  const t = useTestGateway(() => configYaml(mock));

  it('JSON answers say the gateway and upstream time; the log line has them and no ttft', async () => {
    const res = await chat(t.baseURL);
    expect(res.status).toBe(200);
    const overhead = Number(res.headers.get('x-switchyard-overhead-ms'));
    expect(overhead).toBeGreaterThanOrEqual(0);
    expect(res.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+$/);
    expect(res.headers.get('server-timing')).toContain(`gateway;dur=${res.headers.get('x-switchyard-overhead-ms')}`);
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ overheadMs: expect.any(Number), upstreamMs: expect.any(Number) });
    expect(line.ttftMs).toBeUndefined();
  });

  it('streams add time to first token, in Server-Timing and the log line', async () => {
    const res = await chat(t.baseURL, true);
    expect(res.status).toBe(200);
    const timing = res.headers.get('server-timing')!;
    expect(timing).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+, ttft;dur=[\d.]+$/);
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line.ttftMs).toBe(Number(/ttft;dur=([\d.]+)/.exec(timing)![1]));
  });

  it('errors carry them too', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=0$/);
    expect(res.headers.get('x-switchyard-overhead-ms')).not.toBeNull();
  });

  it('serves /metrics on the main port without auth by default', async () => {
    expect(t.gateway.metricsUrl).toBe(`${t.url}/metrics`);
    expect((await scrape(t.gateway.metricsUrl!)).status).toBe(200);
  });
});

it('metrics.enabled: false serves no metrics', async () => {
  const g = await startTestGateway(configYaml({ ...mock, extra: 'metrics: { enabled: false }' }));
  try {
    expect(g.gateway.metricsUrl).toBeUndefined();
    expect((await scrape(`${g.url}/metrics`)).status).toBe(404);
    expect((await chat(g.baseURL)).status).toBe(200);
  } finally {
    await g.close();
  }
});
