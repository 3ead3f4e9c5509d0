/**
 * The console of `server.workers: 2`, through the real CLI and a real browser: a known number of
 * requests spread over both workers (one fresh connection each), and every figure the console
 * shows is the whole cluster's, whichever worker answers the page; each worker's share, a target
 * cooling on one worker only and a reload rejected by both say which workers they are; every
 * view keeps its columns whole at 1366×768 and 390×844; a worker that cannot answer is named. With UPDATE_CONSOLE_SCREENSHOT=1 the
 * overview replaces docs/console.png.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';
import { request as requestOnce, startCli } from '../cluster/helpers.ts';
import { layoutProblems, painted, VIEWPORTS } from './layout.ts';
import { ADMIN_KEY, bad, consoleConfig, DEV_KEY, good, SEARCH_KEY, serverError } from './setup.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
/** Requests sent before the console is opened: 20 by one key, 4 by a team's key. */
const SENT = { dev: 20, search: 4 };
const TOTAL = SENT.dev + SENT.search;

const SLOW_START = path.join(ROOT, 'test/fixtures/plugins/slow-start-provider.ts');
const clusterConfig = () =>
  `server: { workers: 2, shutdownGraceMs: 2000 }\nlog: { level: info, format: json }\n${consoleConfig().replace('providers:\n', `providers:\n  slow: { plugin: ${SLOW_START}, prefix: "" }\n`)}`;
const chat = (port: number, model: string, key: string) => request(port, 'POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: 'x' }] } });

/** One request on a connection of its own (the cluster hands each new connection to the next worker), with time to spare on a loaded machine. */
const request = (port: number, method: string, url: string, options: { body?: unknown; key?: string }) => requestOnce(port, method, url, { ...options, timeoutMs: 20_000 });

let cli: Awaited<ReturnType<typeof startCli>>;
let file: string;
let browser: Browser;
let page: Page;
let base: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the console's browser suite needs chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await Promise.all([good.start(), bad.start()]);
  file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-console-cluster-')), 'gateway.yaml');
  writeFileSync(file, clusterConfig());
  // Three processes starting on a busy 2-core machine took 21 s.
  cli = await startCli(file, 60_000);
  base = `http://127.0.0.1:${cli.port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: VIEWPORTS.laptop, colorScheme: 'light' });
}, 90_000);
afterAll(async () => {
  await browser?.close();
  if (cli?.child.exitCode === null) {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
  await Promise.all([good.close(), bad.close()]);
});

const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `cluster-${name}.png`), fullPage: true });
const text = (selector: string) => page.locator(selector).first().innerText();
const until = (fn: () => Promise<boolean>, timeout = 8000) => expect.poll(fn, { timeout, interval: 200 }).toBe(true);
const overviewJson = async () => JSON.parse((await request(cli.port, 'GET', '/admin/v1/console/overview', { key: ADMIN_KEY })).body);

describe('console with server.workers: 2', () => {
  it('counts every request of the cluster, whichever worker answers', async () => {
    const keys = [...Array<string>(SENT.dev).fill(DEV_KEY), ...Array<string>(SENT.search).fill(SEARCH_KEY)];
    const answers = [];
    // Six at a time: dev's concurrency limit is 8.
    for (let i = 0; i < keys.length; i += 6) answers.push(...(await Promise.all(keys.slice(i, i + 6).map((key) => chat(cli.port, 'chat', key)))));
    expect(answers.map((a) => a.status)).toEqual(Array(TOTAL).fill(200));
    // Fresh connections: the cluster hands them to both workers in turn, so both answer here.
    for (let i = 0; i < 6; i++) {
      const o = await overviewJson();
      expect(o.last_15m.requests).toBe(TOTAL);
      expect(o.scope.missing).toEqual([]);
      expect(o.scope.workers.map((w: { id: number }) => w.id)).toEqual([1, 2]);
      const shares = o.scope.workers.map((w: { requests_15m: number }) => w.requests_15m);
      expect(shares.reduce((a: number, b: number) => a + b, 0)).toBe(TOTAL);
      // Both workers served some: a console showing one worker's figures would show less than TOTAL above.
      for (const share of shares) expect(share).toBeGreaterThan(0);
    }
    // Every request is listed, and each one's attempt log is found by whichever worker is asked.
    const list = JSON.parse((await request(cli.port, 'GET', '/admin/v1/console/requests?limit=200', { key: ADMIN_KEY })).body);
    expect(list.data).toHaveLength(TOTAL);
    expect(new Set(list.data.map((r: { worker: number }) => r.worker))).toEqual(new Set([1, 2]));
    for (const r of list.data.slice(0, 6)) {
      const one = await request(cli.port, 'GET', `/admin/v1/console/requests/${r.id}`, { key: ADMIN_KEY });
      expect(one.status).toBe(200);
      expect(JSON.parse(one.body)).toMatchObject({ id: r.id, worker: r.worker, status: 200 });
    }
  });

  it('shows the whole cluster in the browser, and each worker’s share', async () => {
    await page.goto(`${base}/console`);
    await page.fill('#admin-key', ADMIN_KEY);
    await page.press('#admin-key', 'Enter');
    await page.locator('#m-total').waitFor();
    expect(await text('#m-total')).toBe(String(TOTAL));
    expect(await text('#scope')).toBe('Figures cover all 2 workers (1, 2).');
    expect(await text('#meta')).toMatch(/config generation 1 · 0 in flight · 2 workers$/);
    const rows = await page.locator('#overview-workers tbody tr').allInnerTexts();
    expect(rows.map((r) => r.split(/\s+/)[1])).toEqual(['1', '2']);
    expect(rows.reduce((sum, r) => sum + Number(r.trim().split(/\s+/).at(-1)), 0)).toBe(TOTAL);
    // Requests per second over the last minute covers both workers: at least TOTAL/60.
    expect(Number(await text('#m-rps'))).toBeGreaterThanOrEqual(TOTAL / 60);

    await page.click('#tab-requests');
    await page.locator('#requests tbody tr').first().waitFor();
    const servedBy = await page.locator('#requests tbody td.col-worker').allInnerTexts();
    expect(servedBy).toHaveLength(TOTAL);
    expect(new Set(servedBy)).toEqual(new Set(['1', '2']));

    await page.click('#tab-keys');
    const dev = page.locator('#keys tr[data-key="dev"]');
    await dev.waitFor();
    expect(await dev.innerText()).toMatch(/\$0\.00\d\d of \$5\.00 daily/);
    await page.click('#tab-teams');
    const team = page.locator('#teams tr[data-team="search"]');
    await team.waitFor();
    expect(await team.innerText()).toMatch(/search-prod/);
    expect(Number((await team.locator('.spent').innerText()).replace(/[^0-9.]/g, ''))).toBeGreaterThan(0);
  });

  it('says on which worker a target cools, and for how long', async () => {
    bad.setHandler(serverError);
    expect((await chat(cli.port, 'flaky', DEV_KEY)).status).toBe(200);
    await page.click('#tab-overview');
    const cooling = page.locator('#cooling-list li[data-target="flaky/bad/gpt-4o"]');
    await cooling.waitFor();
    expect(await cooling.innerText()).toMatch(/: (9 min 5\d s|10 min 0 s) left \(until .+\) on worker [12] of 2$/);
    await shot('overview');
    if (process.env.UPDATE_CONSOLE_SCREENSHOT) writeFileSync(path.join(ROOT, 'docs/console.png'), await page.screenshot());
    await page.click('#tab-targets');
    const row = page.locator('table[data-alias="flaky"] tr[data-target="bad/gpt-4o"]');
    await until(async () => /cooling\s+.* left, until .* on worker [12] of 2/.test(await row.innerText()));
    expect(await row.innerText()).toMatch(/\s1\s/);
  });

  it('shows a reload rejected by both workers, with its message', async () => {
    const broken = clusterConfig().replace('retry: { attempts: 1 }', 'retry: { atempts: 1 }');
    writeFileSync(file, broken);
    await page.click('#tab-overview');
    await until(async () => (await text('#overview-reload')).startsWith('Rejected'), 10_000);
    const shown = await text('#overview-reload');
    expect(shown).toMatch(/on all 2 workers/);
    expect(shown).toMatch(/gateway\.yaml:\d+:\d+ models\.flaky\.retry/);
    writeFileSync(file, clusterConfig());
    await until(async () => (await text('#overview-reload')).startsWith('Accepted'), 10_000);
    expect(await text('#overview-reload')).toMatch(/on all 2 workers/);
  });

  for (const [name, viewport] of Object.entries(VIEWPORTS))
    it(`keeps every column whole, with the worker column, at ${viewport.width}×${viewport.height}`, async () => {
      await page.setViewportSize(viewport);
      for (const view of ['overview', 'targets', 'keys', 'teams', 'requests', 'config']) {
        const answered = page.waitForResponse((r) => r.url().includes(`/admin/v1/console/${view}`));
        await page.click(`#tab-${view}`);
        await answered;
        await painted(page);
        await shot(`${view}-${name}`);
        expect(await layoutProblems(page), `${view} at ${viewport.width} px`).toEqual([]);
      }
    }, 60_000);

  it('names a worker that cannot answer, and leaves its figures out rather than guessing', async () => {
    const before = await overviewJson();
    const [survivor, victim] = before.scope.workers as Array<{ id: number; pid: number; requests_15m: number }>;
    process.kill(victim.pid, 'SIGKILL');
    await page.setViewportSize(VIEWPORTS.laptop);
    await page.click('#tab-overview');
    // The replacement (worker 3) is forked at once and spends 3 s loading the slow-start plugin:
    // until it listens the overview names it as missing. Asked every 50 ms, not through the page,
    // which polls every 2 s and may not look in that window.
    let during: { scope: { workers: Array<{ id: number; requests_15m: number }>; missing: Array<{ worker: number; reason: string }> }; last_15m: { requests: number } } | undefined;
    await expect
      .poll(
        async () => {
          const o = await overviewJson();
          if (o.scope.missing.some((m: { worker: number }) => m.worker === 3)) during = o;
          return during !== undefined;
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBe(true);
    expect(during!.scope.missing).toEqual([expect.objectContaining({ worker: 3, reason: expect.stringMatching(/starting|no answer within 3000 ms/) })]);
    expect(during!.scope.workers.map((w) => w.id)).toEqual([survivor.id]);
    expect(during!.last_15m.requests).toBe(during!.scope.workers[0].requests_15m);
    // Once it listens, it is counted again (from zero: a dead worker's figures die with it).
    await until(async () => (await text('#scope')) === `Figures cover all 2 workers (${survivor.id}, 3).`, 60_000);
  }, 90_000);
});
