/**
 * The console in a real browser: Debian's chromium driven headless by playwright-core (no
 * browser download). Logs in with the admin key, watches the numbers move under traffic, a
 * target cool down (on the overview too, with how long), a key's and a team's spend grow, a
 * broken config edit reported at file:line:col (and as the overview's last reload); a wrong
 * admin key and a client key are refused; every view at 1366×768 and on a phone (390×844) shows
 * every column whole and no stray `null`; the page never asks anything of another origin.
 * A screenshot of each view goes to test/console/artifacts/ (not committed); with
 * UPDATE_CONSOLE_SCREENSHOT=1 the light-mode overview also replaces docs/console.png.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { layoutProblems, painted, VIEWPORTS } from './layout.ts';
import { ADMIN_KEY, bad, consoleConfig, DEV_KEY, good, SEARCH_KEY, serverError } from './setup.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');

const t = useTestGateway(consoleConfig, { upstreams: [good, bad] });
let browser: Browser;
let page: Page;
const requested: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the console's browser suite needs chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: VIEWPORTS.laptop, colorScheme: 'light' });
  page.on('request', (r) => requested.push(r.url()));
});
afterAll(async () => {
  await browser?.close();
});

const ask = (model: string, key = DEV_KEY, stream = false) =>
  stream
    ? t
        .client(key)
        .chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'x' }] })
        .then(async (s) => {
          for await (const _ of s);
        })
    : t.client(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
const text = (selector: string) => page.locator(selector).first().innerText();
/** Polling refreshes every 2 s: wait for the page to show what is expected. */
const until = (fn: () => Promise<boolean>, timeout = 8000) => expect.poll(fn, { timeout, interval: 200 }).toBe(true);

async function login(key: string): Promise<void> {
  await page.fill('#admin-key', key);
  await page.press('#admin-key', 'Enter');
}

describe('console in a browser', () => {
  it('refuses a wrong admin key and a client key', async () => {
    await page.goto(`${t.url}/console`);
    for (const key of ['sk-wrong-admin-0123456789', DEV_KEY, SEARCH_KEY]) {
      await login(key);
      await until(async () => (await text('#login-error')).includes('Refused'));
      expect(await page.locator('#app').isHidden()).toBe(true);
      await page.evaluate("document.getElementById('login-error').textContent = ''");
    }
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await shot('login-refused');
  });

  it('logs in with the admin key and shows the overview numbers change with traffic', async () => {
    await login(ADMIN_KEY);
    await page.locator('#m-total').waitFor();
    expect(await text('#m-total')).toBe('0');
    await Promise.all([...Array.from({ length: 6 }, () => ask('chat')), ask('chat', DEV_KEY, true), ask('chat', DEV_KEY, true)]);
    await until(async () => (await text('#m-total')) === '8');
    expect(await text('#m-rps')).not.toBe('0');
    expect(await text('#m-p50')).toMatch(/\d+ ms/);
    expect(await text('#m-ttft')).toMatch(/\d+ ms/);
    expect(await text('#meta')).toMatch(/config generation 1/);
    // One process: no worker count, the one process listed, nothing cooling, no reload yet.
    expect(await text('#meta')).not.toMatch(/workers/);
    expect(await page.locator('#overview-workers tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^this process\s+\d+\s.*\s8$/)]);
    expect(await text('#overview-cooling')).toBe('No target is cooling.');
    expect(await text('#overview-reload')).toContain('No reload since start');
    // The key lives in this tab's sessionStorage only.
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate((k) => Object.values(sessionStorage).includes(k), ADMIN_KEY)).toBe(true);
    await shot('overview');
  });

  it('shows a target cooling after its upstream fails', async () => {
    await page.click('#tab-targets');
    const row = page.locator('table[data-alias="flaky"] tr[data-target="bad/gpt-4o"]');
    await row.waitFor();
    expect(await row.innerText()).toContain('healthy');
    bad.setHandler(serverError);
    await ask('flaky');
    await until(async () => (await row.innerText()).includes('cooling'));
    expect(await row.innerText()).toMatch(/cooling\s+(9 min 5\d s|10 min 0 s) left, until \d/);
    expect(await row.innerText()).toContain('500');
    await shot('targets');
    await page.click('#tab-overview');
    const cooling = page.locator('#cooling-list li[data-target="flaky/bad/gpt-4o"]');
    await cooling.waitFor();
    expect(await cooling.innerText()).toMatch(/^cooling flaky → bad\/gpt-4o: (9 min 5\d s|10 min 0 s) left \(until \d/);
  });

  it("shows a key's spend grow", async () => {
    await page.click('#tab-keys');
    const spent = page.locator('#keys tr[data-key="dev"] .spent');
    await spent.waitFor();
    const before = Number((await spent.innerText()).replace(/[^0-9.]/g, ''));
    expect(before).toBeGreaterThan(0);
    await Promise.all([ask('chat'), ask('chat'), ask('chat')]);
    await until(async () => Number((await spent.innerText()).replace(/[^0-9.]/g, '')) > before);
    expect(await page.locator('#keys tbody tr').first().getAttribute('data-key')).toBe('dev');
    await shot('keys');
  });

  it("shows each team's keys, budget and spend", async () => {
    await page.click('#tab-teams');
    const row = page.locator('#teams tr[data-team="search"]');
    await row.waitFor();
    expect(await row.locator('td').first().innerText()).toBe('search-prod');
    expect(await row.innerText()).toMatch(/\$0\.0000 of \$50\.00 monthly/);
    await ask('chat', SEARCH_KEY);
    await until(async () => Number((await row.locator('.spent').innerText()).replace(/[^0-9.]/g, '')) > 0);
    expect(await row.innerText()).toMatch(/s ago/);
    await shot('teams');
  });

  it('lists recent requests and shows the attempt log of one', async () => {
    await page.click('#tab-requests');
    const flaky = page.locator('#requests tbody tr', { hasText: 'flaky' }).first();
    await flaky.waitFor();
    await flaky.focus();
    await page.keyboard.press('Enter');
    await page.locator('#attempts').waitFor();
    const attempts = await page.locator('#attempts tbody tr').allInnerTexts();
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toContain('bad/gpt-4o');
    expect(attempts[0]).toContain('error');
    expect(attempts[1]).toContain('ok');
    await shot('requests');
  });

  it('reports a broken config edit with its file:line:column, in the validate box and after a reload', async () => {
    await page.click('#tab-config');
    // The view fetches the file after it opens: wait for its text, not only for the element (polled
    // from outside: a string predicate would be evaluated in the page, which its CSP forbids).
    await until(async () => (await text('#config-text')).length > 0);
    expect(await text('#config-text')).toContain('apiKey: "********"');
    expect(await text('#reload')).toContain('No reload since start');
    const broken = consoleConfig().replace('retry: { attempts: 1 }', 'retry: { atempts: 1 }');
    const line = broken.split('\n').findIndex((l) => l.includes('atempts')) + 1;
    const at = new RegExp(`gateway\\.yaml:${line}:\\d+ models\\.flaky\\.retry`);
    await page.fill('#validate-text', broken);
    await page.click('#validate');
    await until(async () => at.test(await text('#validate-result')));
    expect(t.gateway.runtime.generation).toBe(1);
    writeFileSync(t.configFile, broken);
    await t.gateway.reload('test');
    await page.click('#tab-overview');
    await page.click('#tab-config');
    await until(async () => (await text('#reload')).includes('Rejected') && at.test(await text('#reload')));
    await shot('config');
    // The overview says so too, with the message.
    await page.click('#tab-overview');
    await until(async () => /^Rejected: still serving generation 1\n.*test\n/s.test(await text('#overview-reload')) && at.test(await text('#overview-reload')));
    writeFileSync(t.configFile, consoleConfig());
  });

  for (const [name, viewport] of Object.entries(VIEWPORTS))
    it(`shows every column whole and no stray null in every view at ${viewport.width}×${viewport.height}`, async () => {
      await page.setViewportSize(viewport);
      for (const view of ['overview', 'targets', 'keys', 'teams', 'requests', 'providers', 'config']) {
        // Wait for this view's own answer, so what is checked is what it shows now.
        const answered = page.waitForResponse((r) => r.url().includes(`/admin/v1/console/${view}`));
        await page.click(`#tab-${view}`);
        await answered;
        if (view === 'requests') {
          await page.locator('#requests tbody tr', { hasText: 'flaky' }).first().click();
          await page.locator('#attempts').waitFor();
        }
        if (view === 'config') {
          await page.fill('#validate-text', consoleConfig());
          await page.click('#validate');
          await page.locator('#validate-result .status-ok').waitFor();
        }
        await painted(page);
        await shot(`${view}-${name}`);
        expect(await layoutProblems(page), `${view} at ${viewport.width} px`).toEqual([]);
      }
    }, 60_000);

  it('is usable on a phone in dark mode', async () => {
    await page.setViewportSize(VIEWPORTS.phone);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.click('#tab-overview');
    await page.locator('#m-total').waitFor();
    expect(await layoutProblems(page)).toEqual([]);
    await shot('overview-phone-dark');
  });

  it('asked nothing of any origin but the gateway, and never put the key in a URL', () => {
    expect(requested.length).toBeGreaterThan(10);
    for (const url of requested) {
      expect(new URL(url).origin).toBe(t.url);
      expect(url).not.toContain(ADMIN_KEY);
    }
  });
});
