// Alternative-method payments end to end in Chromium (docs/contract.md §15, issue 10): the merchant
// starts Pix, iDEAL or Boleto with the client library, the shopper opens issuer_url in the
// browser and approves, declines or takes the slip, lands on return_url with a signed result,
// and the merchant's notify_url receives a notification that verifies (Standard Webhooks
// headers and encryption_data). Also Pix chosen on the hosted checkout's payment page. The
// gateway's strict CSP is in force: a violation on the console fails the test.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, test } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import type { ApmRequest, NotificationEvent, TollgateClient } from '../client/index.js';
import { type Receiver, startReceiver } from '../notifications/test-receiver.js';
import { DeliveryWorker } from '../notifications/worker.js';
import { expireDue } from '../payments/expiry.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { orderOf } from '../test/lifecycle.js';
import { listenGateway } from '../threeds/testing.js';

const DAY = 24 * 60 * 60_000;
const CPF = '529.982.247-25';

let gw: TestGateway;
let gateway = '';
let browser: Browser;
let receiver: Receiver;
let worker: DeliveryWorker;
let client: TollgateClient;
let shop: http.Server;
let shopUrl = '';
let violations: string[] = [];

before(async () => {
  gw = await testGateway();
  gateway = await listenGateway(gw);
  receiver = await startReceiver();
  worker = new DeliveryWorker({
    store: gw.runtime.store,
    merchants: gw.runtime.merchants,
    allow_private: true,
    timeout_ms: 10_000,
    now: () => gw.clock.now,
  });
  client = gw.client(gw.merchant, { base_url: gateway });
  shop = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Thanks</title><h1>Back at the shop</h1>');
  });
  await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterEach(() => {
  const seen = violations;
  violations = [];
  assert.deepEqual(seen, [], 'no Content Security Policy violation on any page');
});

after(async () => {
  await browser?.close();
  await receiver?.close();
  await new Promise((r) => shop.close(r));
  await gw.close();
});

async function context(): Promise<BrowserContext> {
  const c = await browser.newContext();
  c.setDefaultTimeout(15_000);
  c.on('page', (page) =>
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    }),
  );
  return c;
}

let n = 0;
function apm(overrides: Partial<ApmRequest> & Pick<ApmRequest, 'payment_method'>): ApmRequest {
  return {
    order_no: `APMB-${Date.now().toString(36)}-${++n}`,
    currency: 'BRL',
    amount: '120.50',
    billing_country: 'BR',
    return_url: `${shopUrl}/back?cart=9`,
    notify_url: receiver.url,
    ...overrides,
  };
}

/**
 * Delivers what is due to the local receiver and returns the one notification of this
 * payment with that type, verified as the merchant verifies it (Standard Webhooks headers and
 * encryption_data).
 */
async function notified(transaction_id: string, event_type: string): Promise<NotificationEvent> {
  await worker.drain();
  const mine = receiver.received.filter((r) => {
    const e = JSON.parse(r.body) as { event_type?: string; data?: { transaction_id?: string } };
    return e.event_type === event_type && e.data?.transaction_id === transaction_id;
  });
  assert.equal(mine.length, 1, `one ${event_type} for ${transaction_id}`);
  const r = mine[0] as (typeof mine)[number];
  // webhook-timestamp is wall-clock time (the worker says why), so the default tolerance
  // against this machine's clock holds even after the test moved the gateway's clock.
  return client.notifications.verify(r.body, r.headers); // throws unless both signatures hold
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const statusIn = (e: NotificationEvent) => (e.data as { payment_status?: string }).payment_status;

test('Pix: the shopper approves on the issuer page → return_url signed, 3000, payment.succeeded delivered', async () => {
  const x = await client.authoriseApm(apm({ payment_method: 'pix', person: { document_number: CPF, email: 'ana@example.com' } }));
  assert.deepEqual([x.order_status, x.result_info], ['2', '0003:Pending shopper action']);
  assert.ok(x.issuer_url.startsWith(`${gateway}/issuer/`), x.issuer_url);
  const c = await context();
  const page = await c.newPage();
  const shown = await page.goto(x.issuer_url);
  assert.equal(shown?.status(), 200);
  assert.match((await shown?.headerValue('content-security-policy')) ?? '', /default-src 'none'/);
  assert.match((await page.textContent('#amount')) ?? '', /^R\$\s?120[.,]50$/, 'the amount as the page language writes it');
  assert.ok(await page.isVisible('#pix-code'));
  await Promise.all([page.waitForURL(`${shopUrl}/back?**`), page.click('#approve')]);
  assert.equal(await page.textContent('h1'), 'Back at the shop');
  const back = client.verifyReturn(page.url());
  assert.deepEqual([back.transaction_id, back.order_status, back.result_info], [x.transaction_id, '1', '0000:Success']);
  assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '3000');
  assert.equal(statusIn(await notified(x.transaction_id, 'payment.succeeded')), '3000');
  await c.close();
});

test('iDEAL: the shopper declines → return_url signed with order_status 0, 6000, payment.failed delivered', async () => {
  const x = await client.authoriseApm(apm({ payment_method: 'ideal', currency: 'EUR', amount: '25.00', billing_country: 'NL', bank_code: 'INGBNL2A' }));
  const c = await context();
  const page = await c.newPage();
  await page.goto(x.issuer_url);
  assert.match((await page.textContent('#bank')) ?? '', /^ING/);
  await Promise.all([page.waitForURL(`${shopUrl}/back?**`), page.click('#decline')]);
  const back = client.verifyReturn(page.url());
  assert.deepEqual([back.transaction_id, back.order_status, back.result_info], [x.transaction_id, '0', '1017:Declined by the issuer']);
  assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '6000');
  assert.equal(statusIn(await notified(x.transaction_id, 'payment.failed')), '6000');
  // Single use: the page is gone once answered.
  assert.equal((await page.goto(x.issuer_url))?.status(), 410);
  await c.close();
});

test('Pix chosen on the hosted checkout: payment page → issuer page → approve → result → return_url', async () => {
  const form = client.checkoutForm({
    order_no: `APMB-CO-${Date.now().toString(36)}`,
    currency: 'BRL',
    amount: '80.00',
    billing_country: 'BR',
    return_url: `${shopUrl}/back?cart=10`,
    notify_url: receiver.url,
  });
  const c = await context();
  const page = await c.newPage();
  // The merchant's page, reduced to its form, posted by the browser.
  const inputs = form.fields.map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
  await page.setContent(`<form method="post" action="${esc(form.action)}">${inputs}<button id="buy">Pay</button></form>`);
  await page.click('#buy');
  await page.waitForSelector('#method-pix');
  assert.ok(await page.isVisible('#method-boleto'), 'BRL/BR offers Boleto too');
  assert.equal(await page.isVisible('#form-pix'), false, 'each method’s form is folded until the shopper picks it');
  await page.click('#choose-pix');
  await page.fill('#form-pix [name="person[document_number]"]', CPF);
  await page.fill('#form-pix [name="person[email]"]', 'ana@example.com');
  await page.click('#continue-pix');
  await page.waitForURL(`${gateway}/issuer/**`);
  await page.click('#approve');
  await page.waitForSelector('#outcome');
  assert.equal(await page.getAttribute('#outcome', 'data-outcome'), 'approved');
  await page.waitForURL(`${shopUrl}/back?**`);
  const back = client.verifyReturn(page.url());
  assert.equal(back.order_status, '1');
  assert.equal((await orderOf(gw, back.transaction_id)).payment_status, '3000');
  assert.equal(statusIn(await notified(back.transaction_id, 'payment.succeeded')), '3000');
  await c.close();
});

// Last: it moves the gateway's clock three days.
test('Boleto: the slip shows its digitable line; unpaid after 3 days it expires → the page answers 410, 7000, payment.expired delivered', async () => {
  const x = await client.authoriseApm(
    apm({
      payment_method: 'boleto',
      person: {
        document_number: '11.222.333/0001-81',
        address_street: 'Avenida Paulista',
        address_number: '1000',
        address_postal_code: '01310-100',
        address_city: 'São Paulo',
        address_state: 'SP',
        address_country: 'BR',
      },
    }),
  );
  const c = await context();
  const page = await c.newPage();
  assert.equal((await page.goto(x.issuer_url))?.status(), 200);
  assert.match((await page.textContent('#digitable-line')) ?? '', /^2379\d\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{4}0000012050$/);
  assert.ok(await page.isVisible('#approve'));
  assert.equal(await page.$('#decline'), null, 'a slip is paid or left to expire');

  gw.clock.advance(3 * DAY + 1);
  assert.ok((await expireDue(gw.runtime.deps, gw.clock.now)) >= 1);
  const again = await page.reload();
  assert.equal(again?.status(), 410);
  assert.equal(await page.$('#digitable-line'), null);
  assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '7000');
  assert.equal(statusIn(await notified(x.transaction_id, 'payment.expired')), '7000');
  await c.close();
});
