/**
 * The console's HTTP side without a browser: the page's headers, who may read the JSON
 * endpoints, what they report after traffic, secrets masked in the config view, and a pasted
 * edit validated (file:line:col) without being applied.
 */
import { describe, expect, it } from 'vitest';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { ADMIN_KEY, adminFetch, bad, consoleConfig, DEV_KEY, good, serverError, SEARCH_KEY, UPSTREAM_SECRET } from './setup.ts';

const t = useTestGateway(consoleConfig, { upstreams: [good, bad] });
// biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field by the assertions below
const json = async (r: Promise<Response>): Promise<any> => (await r).json();
const ask = (model: string, key = DEV_KEY) => t.client(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'a secret prompt' }] });

describe('console: the page', () => {
  it('is served with a strict Content-Security-Policy, its assets from the gateway itself', async () => {
    const page = await fetch(`${t.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const [asset, type] of [
      ['console.js', 'text/javascript'],
      ['views.js', 'text/javascript'],
      ['console.css', 'text/css'],
      ['favicon.svg', 'image/svg+xml'],
    ]) {
      const r = await fetch(`${t.url}/console/assets/${asset}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain(type);
    }
    expect((await fetch(`${t.url}/console/assets/..%2f..%2fgateway.ts`)).status).toBe(404);
    expect((await fetch(`${t.url}/console/assets/index.html`)).status).toBe(404);
  });
});

describe('console: the JSON endpoints', () => {
  it('refuse a missing, wrong or client key with 401', async () => {
    for (const key of ['', 'sk-wrong-0123456789', DEV_KEY, SEARCH_KEY])
      for (const view of ['overview', 'teams']) {
        const r = await adminFetch(t.url, `/admin/v1/console/${view}`, {}, key);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
    const r = await adminFetch(t.url, '/admin/v1/console/validate', { method: 'POST', body: 'x: 1', headers: { 'content-type': 'text/plain' } }, DEV_KEY);
    expect(r.status).toBe(401);
  });

  it('report traffic, a failing target, spend and the attempt log, with nothing of the prompt', async () => {
    await ask('chat');
    await ask('chat', SEARCH_KEY);
    bad.setHandler(serverError);
    await ask('flaky');
    const overview = await json(adminFetch(t.url, '/admin/v1/console/overview'));
    expect(overview.last_15m.requests).toBe(3);
    expect(overview.series).toHaveLength(90);
    expect(overview.generation).toBe(1);
    expect(overview.now.p50_ms).toBeGreaterThan(0);
    // One process: the scope says so, and the target that just failed is listed as cooling, with how long.
    expect(overview.scope).toEqual({ workers: [expect.objectContaining({ id: null, pid: process.pid, requests_15m: 3 })], missing: [] });
    expect(overview.cooling).toEqual([expect.objectContaining({ alias: 'flaky', provider: 'bad', model: 'gpt-4o', workers: [null], of: 1 })]);
    expect(overview.cooling[0].left_ms).toBeGreaterThan(590_000);
    expect(overview.cooling[0].left_ms).toBeLessThanOrEqual(600_000);
    expect(overview.last_reload).toBeNull();

    const { data: targets } = await json(adminFetch(t.url, '/admin/v1/console/targets'));
    const flaky = targets.find((a: { alias: string }) => a.alias === 'flaky');
    expect(flaky.targets[0]).toMatchObject({ provider: 'bad', state: 'cooling', errors: 1, lastError: { status: 500 } });
    expect(flaky.targets[0].cooling_until).toBeGreaterThan(Date.now());
    expect(flaky.targets[1]).toMatchObject({ provider: 'good', state: 'healthy', errors: 0, lastError: null });

    const { data: keys } = await json(adminFetch(t.url, '/admin/v1/console/keys'));
    expect(keys.map((k: { name: string }) => k.name)).toEqual(['dev', 'search-prod']);
    expect(keys[0].spent_usd).toBeGreaterThan(0);
    expect(keys[0].budget.usd).toBe(5);
    expect(keys[0].last_request_at).toBeGreaterThan(Date.now() - 60_000);

    const { data: teams } = await json(adminFetch(t.url, '/admin/v1/console/teams'));
    expect(teams).toEqual([expect.objectContaining({ name: 'search', keys: ['search-prod'], budget: expect.objectContaining({ usd: 50, period: 'monthly' }), spent_period: 'monthly' })]);
    expect(teams[0].spent_usd).toBeGreaterThan(0);
    expect(teams[0].last_request_at).toBeGreaterThan(Date.now() - 60_000);

    const { data: recent } = await json(adminFetch(t.url, '/admin/v1/console/requests'));
    expect(recent).toHaveLength(3);
    expect(recent[0]).toMatchObject({ alias: 'flaky', key: 'dev', status: 200, target: 'good/gpt-4o' });
    expect(recent[0].attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['error', 'ok']);
    const one = await json(adminFetch(t.url, `/admin/v1/console/requests/${recent[0].id}`));
    expect(one.attempts).toHaveLength(2);
    expect((await adminFetch(t.url, '/admin/v1/console/requests/nope')).status).toBe(404);
    expect(JSON.stringify([overview, targets, keys, teams, recent])).not.toContain('a secret prompt');
  });

  it('show gateway.yaml with every secret masked, lines where they were', async () => {
    const c = await json(adminFetch(t.url, '/admin/v1/console/config'));
    expect(c.file).toMatch(/gateway\.yaml$/);
    expect(c.last_reload).toBeNull();
    for (const secret of [UPSTREAM_SECRET, DEV_KEY, SEARCH_KEY, ADMIN_KEY]) expect(c.text).not.toContain(secret);
    expect(c.text.split('\n')).toHaveLength(consoleConfig().split('\n').length);
    expect(c.text).toContain('apiKey: "********"');
    expect(c.text).toContain('key: "********"');
  });

  it('validate a pasted edit without applying it, errors at file:line:col', async () => {
    const broken = consoleConfig().replace('models: ["*"], limits', 'models: ["*"], limtis');
    const r = await adminFetch(t.url, '/admin/v1/console/validate', { method: 'POST', body: broken, headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(200);
    const result = (await r.json()) as { ok: boolean; errors: string[] };
    expect(result.ok).toBe(false);
    expect(result.errors[0]).toMatch(/gateway\.yaml:4:\d+ keys\[0\]/);
    const fine = await json(adminFetch(t.url, '/admin/v1/console/validate', { method: 'POST', body: consoleConfig(), headers: { 'content-type': 'application/yaml' } }));
    expect(fine).toMatchObject({ ok: true, errors: [] });
    expect(t.gateway.runtime.generation).toBe(1);
    const asJson = await adminFetch(t.url, '/admin/v1/console/validate', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(asJson.status).toBe(415);
  });
});
