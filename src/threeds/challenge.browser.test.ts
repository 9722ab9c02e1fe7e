// End to end in a real browser (docs/style.md §11): a shopper opens threeds_url, sees the
// payment, clicks Complete, and lands on the merchant's return_url with a signed result.
// The strict CSP is in force throughout, so a page that needed script or a form target
// it does not allow would fail here.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { sign } from '../crypto/signature.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { authorise } from './testing.js';

let gw: TestGateway;
let browser: Browser;
let shop: http.Server;
let shopUrl = '';
const landed: URL[] = [];

before(async () => {
  gw = await testGateway();
  const address = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  gw.settings.public_url = address; // links handed to shoppers point at this listening gateway
  shop = http.createServer((req, res) => {
    landed.push(new URL(req.url ?? '/', shopUrl));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Thanks</title><h1>Back at the shop</h1>');
  });
  await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => shop.close(r));
  await gw.close();
});

test('the shopper completes the challenge and returns to the shop with a valid signature', async () => {
  const x = await authorise(gw, directPayment(gw.merchant, { card: '4000000000003220', amount: '42.00', return_url: `${shopUrl}/return` }));
  assert.equal(x.order_status, '2');
  const page = await browser.newPage();
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(x.threeds_url);
  assert.equal(await page.textContent('#card'), '400000******3220');
  assert.equal(await page.textContent('#amount'), '$42.00');
  await Promise.all([page.waitForURL(`${shopUrl}/return?**`), page.click('#complete')]);
  assert.equal(await page.textContent('h1'), 'Back at the shop');
  assert.deepEqual(cspViolations, []);

  const back = landed.filter((u) => u.pathname === '/return').at(-1) as URL; // not /favicon.ico
  const fields: Record<string, string> = {};
  for (const k of ['merchant_id', 'account_id', 'order_no', 'transaction_id', 'order_status', 'result_info', 'threeds_result'])
    fields[k] = back.searchParams.get(k) ?? '';
  assert.deepEqual([fields.transaction_id, fields.order_status, fields.result_info, fields.threeds_result], [x.transaction_id, '1', '0000:Success', 'Y']);
  assert.equal(back.searchParams.get('encryption_data'), sign(fields, gw.merchant.secret_key));
  await page.close();
});
