/**
 * The console in a real browser: Debian's chromium driven headless by playwright-core (no
 * browser download). Logs in with the admin key, watches the numbers move under traffic, a
 * target cool down, a key's spend grow, a broken config edit reported at file:line:col; a wrong
 * admin key and a client key are refused; the page never asks anything of another origin.
 * A screenshot of each view goes to test/console/artifacts/ (not committed); with
 * UPDATE_CONSOLE_SCREENSHOT=1 the light-mode overview also replaces docs/console.png.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { ROOT } from '../helpers/repo.ts';
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
  page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
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
    // The key lives in this tab's sessionStorage only.
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate((k) => Object.values(sessionStorage).includes(k), ADMIN_KEY)).toBe(true);
    await shot('overview');
    if (process.env.UPDATE_CONSOLE_SCREENSHOT) writeFileSync(path.join(ROOT, 'docs/console.png'), await page.screenshot());
  });

  it('shows a target cooling after its upstream fails', async () => {
    await page.click('#tab-targets');
    const row = page.locator('table[data-alias="flaky"] tr[data-target="bad/gpt-4o"]');
    await row.waitFor();
    expect(await row.innerText()).toContain('healthy');
    bad.setHandler(serverError);
    await ask('flaky');
    await until(async () => (await row.innerText()).includes('cooling until'));
    expect(await row.innerText()).toContain('500');
    await shot('targets');
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
    await until(async () => (await text('#reload')).includes('rejected') && at.test(await text('#reload')));
    await shot('config');
    writeFileSync(t.configFile, consoleConfig());
  });

  it('is usable on a phone and in dark mode', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.click('#tab-overview');
    await page.locator('#m-total').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
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
