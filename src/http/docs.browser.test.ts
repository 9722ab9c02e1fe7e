// /docs in a real browser (docs/style.md §11): Swagger UI renders every operation of the served
// document under the page's strict CSP (a violation would show here), loads nothing from
// another origin, and without JavaScript the test-card table still reads.
// Runs on one engine: Swagger UI draws the served document, built from the route table, the same on either engine.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
let browser: Browser;
let origin = '';

before(async () => {
  gw = await testGateway();
  origin = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({
    executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
  await gw.close();
});

test('Swagger UI shows every operation under the strict CSP, from this origin only', async () => {
  const page = await browser.newPage();
  const violations: string[] = [];
  const elsewhere: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(String(e)));
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) elsewhere.push(r.url());
  });
  // Through Swagger UI's own deep link, which opens its operation (one page load: drawing the
  // 1 MB document takes Chromium 15 s on a quiet machine).
  await page.goto(`${origin}/docs#/payments/authorise`);
  await page.waitForSelector('.opblock-summary-path', { timeout: 60_000 });
  const paths = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path')));
  const documented = Object.keys((await gw.app.inject('/openapi.json')).json().paths);
  for (const p of documented) assert.ok(paths.includes(p), `Swagger UI shows ${p}`);
  // The linked operation is open: its answers (XML respon for /v1/authorise) render too.
  await page.waitForSelector('#operations-payments-authorise .responses-table', { timeout: 60_000 });
  assert.equal(await page.evaluate('location.hash'), '#/payments/authorise');
  assert.match((await page.textContent('#operations-payments-authorise .responses-wrapper')) ?? '', /application\/xml/);
  assert.deepEqual(violations, []);
  assert.deepEqual(elsewhere, []);
  await page.close();
});

test('without JavaScript the description and the test-card table read as HTML', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${origin}/docs`);
  const table = await page.textContent('#overview');
  assert.match(table ?? '', /4000000000009235\s*anti-fraud REVIEW/);
  assert.equal(await page.isVisible('#overview table'), true);
  await context.close();
});

test('a link to a heading of the description lands on it (issue 36: /docs#sandbox-test-cards stayed at the top)', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${origin}/docs#sandbox-test-cards`);
  // Swagger UI's onComplete puts the fragment back once the operations are drawn.
  await page.waitForSelector('.opblock-summary-path', { state: 'attached', timeout: 60_000 });
  await page.waitForFunction("location.hash === '#sandbox-test-cards'", undefined, { timeout: 10_000 });
  const top = (await page.evaluate("document.getElementById('sandbox-test-cards')?.getBoundingClientRect().top")) as number | undefined;
  assert.ok(top !== undefined && top > -5 && top < 100, `the heading is at the top of the window (its top at ${top} px)`);
  await page.close();
  // Swagger UI's own deep links still open their operation: the first test follows one.
});
