/**
 * The console shows what a cache hit saved where it shows a request's usage: the requests list's
 * cost cell and the request's detail (Debian's chromium, headless, as browser.test.ts drives it).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTestGateway } from 'switchyard-gateway/kit/testing';
import { ADMIN_KEY, DEV_KEY, good } from './setup.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const config = () =>
  [
    `keys: [{ name: dev, key: ${DEV_KEY}, models: ["*"] }]`,
    `admin: { keys: [{ name: ops, key: ${ADMIN_KEY} }] }`,
    'providers:',
    `  good: { plugin: openai, baseUrl: "${good.url}/v1", apiKey: sk-upstream-0123456789 }`,
    'models:',
    // A price that makes the fixture's answer cost a round figure to read back.
    '  kept: { targets: [{ provider: good, model: gpt-4o, price: { input: 1000, output: 1000 } }] }',
    'pipeline:',
    '  - auth',
    '  - route',
    '  - { stage: cache, options: { ttl: 600 } }',
    '  - retry',
    '  - transform-response',
    '  - log',
  ].join('\n');

const t = useTestGateway(config, { upstreams: [good] });
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the console's browser suite needs chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
});
afterAll(async () => {
  await browser?.close();
});

it("a cache hit's row says what it saved instead of its cost, and its detail says the same", async () => {
  const ask = () =>
    t
      .client(DEV_KEY)
      .chat.completions.create({ model: 'kept', messages: [{ role: 'user', content: 'same question' }] })
      .withResponse();
  const miss = await ask();
  const hit = await ask();
  expect([miss.response.headers.get('x-switchyard-cache'), hit.response.headers.get('x-switchyard-cache')]).toEqual(['miss', 'hit']);
  const cost = Number(miss.response.headers.get('x-switchyard-cost-usd'));
  expect(cost).toBeGreaterThan(0);
  const shown = `$${cost < 1 ? cost.toFixed(4) : cost.toFixed(2)}`;

  await page.goto(`${t.url}/console`);
  await page.fill('#admin-key', ADMIN_KEY);
  await page.press('#admin-key', 'Enter');
  await page.click('#tab-requests');
  const row = (id: string) => page.locator(`#requests tbody tr[data-request="${id}"]`);
  const hitRow = row(hit.response.headers.get('x-request-id')!);
  await hitRow.waitFor();
  const cells = async (r: typeof hitRow) => (await r.locator('td').allInnerTexts()).map((c) => c.trim());
  // The miss paid the cost; the hit paid nothing and shows the saving in that column.
  expect(await cells(row(miss.response.headers.get('x-request-id')!))).toContain(shown);
  expect(await cells(hitRow)).toContain(`saved ${shown}`);
  await hitRow.click();
  await expect.poll(() => page.locator('#request-cache').innerText(), { timeout: 8000 }).toBe(`Cache: hit (saved ${shown})`);
}, 60_000);
