// `npm run screenshots`: the hosted payment page of a BRL/BR checkout (card form, Pix, Boleto)
// and a Boleto issuer page as a 390 px phone shows them, written as full-page PNGs to
// docs/screenshots/. Runs a test gateway (temporary SQLite, sandbox processor) on a local
// port and Chromium (TOLLGATE_CHROMIUM, default /usr/bin/chromium).
//   --lang <code>   the pages' language (default_lang of the payments; default en)
//   --out <dir>     where to write the PNGs (default docs/screenshots)
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { testGateway } from '../src/test/harness.js';
import { listenGateway } from '../src/threeds/testing.js';

const { values } = parseArgs({ options: { lang: { type: 'string', default: 'en' }, out: { type: 'string', default: 'docs/screenshots' } } });
const lang = values.lang as string;
const out = values.out as string;
const VIEWPORT = { width: 390, height: 844 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const gw = await testGateway();
const browser = await chromium.launch({
  executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const gateway = await listenGateway(gw);
  const client = gw.client(gw.merchant, { base_url: gateway });
  fs.mkdirSync(out, { recursive: true });
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, locale: lang });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();

  // The merchant's page posts the signed form; the loading page forwards to the payment page.
  const form = client.checkoutForm({
    order_no: 'ORDER-1001',
    currency: 'BRL',
    amount: '120.50',
    billing_country: 'BR',
    first_name: 'Ana',
    last_name: 'Silva',
    shopper_email: 'ana@example.com',
    default_lang: lang,
    return_url: 'https://shop.example/done',
    cancel_url: 'https://shop.example/cart',
  });
  const inputs = form.fields.map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
  await page.setContent(`<form method="post" action="${esc(form.action)}">${inputs}<button id="buy">Pay</button></form>`);
  await page.click('#buy');
  await page.waitForURL(/\/pay\/cs_/);
  await page.waitForSelector('#method-boleto');
  const checkoutPng = path.join(out, 'checkout-payment-page-390.png');
  await page.screenshot({ path: checkoutPng, fullPage: true });

  // A Boleto started by the merchant's server: its slip on the sandbox issuer page.
  const boleto = await client.authoriseApm({
    order_no: 'ORDER-1002',
    currency: 'BRL',
    amount: '120.50',
    billing_country: 'BR',
    payment_method: 'boleto',
    default_lang: lang,
    person: {
      document_number: '11.222.333/0001-81',
      address_street: 'Avenida Paulista',
      address_number: '1000',
      address_postal_code: '01310-100',
      address_city: 'São Paulo',
      address_state: 'SP',
      address_country: 'BR',
    },
    return_url: 'https://shop.example/done',
  });
  await page.goto(boleto.issuer_url);
  await page.waitForSelector('#digitable-line');
  const issuerPng = path.join(out, 'issuer-page-390.png');
  await page.screenshot({ path: issuerPng, fullPage: true });

  await context.close();
  console.log(`wrote ${checkoutPng} and ${issuerPng} (${VIEWPORT.width} px wide, ${lang})`);

  // The merchant portal on a 1280 px screen: a few weeks of payments of a shop with manual
  // capture (some captured, refunded, declined, held), its owner signed in.
  const shop = await gw.newMerchant({ name: 'Harbour Coffee Roasters', capture_method: 'manual' });
  const shopClient = gw.client(shop, { base_url: gateway });
  const cards = ['4242424242424242', '5555555555554444', '4000000000000002', '378282246310005', '4000000000009235', '6011111111111117'];
  const day_ms = 86_400_000;
  let detailId = '';
  for (let i = 0; i < 60; i++) {
    const card = cards[i % cards.length] as string;
    const amount = (((i * 37) % 90) + 10 + (i % 4) * 0.25).toFixed(2);
    gw.clock.now = Date.now() - (20 - Math.floor(i / 3)) * day_ms;
    let p: Awaited<ReturnType<typeof shopClient.authorise>>;
    try {
      p = await shopClient.authorise({
        order_no: `HC-${2000 + i}`,
        currency: 'USD',
        amount,
        card,
        expiration_month: '12',
        expiration_year: String(new Date().getUTCFullYear() + 2),
        security_code: '123',
        shopper_email: `buyer${i}@example.com`,
      });
    } catch {
      continue; // declines are part of the picture
    }
    if (i % 3 === 2 || card === '4000000000009235') continue; // left authorised, or held for review
    await shopClient.capture({ capture_orders: [{ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount }] });
    if (i % 7 === 0) {
      await shopClient.refund({ refund_orders: [{ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount, refund_amount: '5.00' }] });
      detailId = p.transaction_id;
    }
  }
  gw.clock.now = Date.now();
  const { PortalUsers } = await import('../src/portal/users.js');
  const { token } = await new PortalUsers(gw.runtime.store, gw.runtime.keyring).create(
    { merchant_id: shop.merchant_id, email: 'owner@harbour.example', role: 'owner' },
    Date.now(),
  );
  const portal = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  portal.setDefaultTimeout(15_000);
  const p = await portal.newPage();
  await p.goto(`${gateway}/portal/setup/${token}`);
  await p.fill('#f-password', 'violet-harbour-lantern-42');
  await p.fill('#f-confirm', 'violet-harbour-lantern-42');
  await p.click('#set-password');
  await p.fill('#f-merchant_id', shop.merchant_id);
  await p.fill('#f-email', 'owner@harbour.example');
  await p.fill('#f-password', 'violet-harbour-lantern-42');
  await p.click('#signin');
  await p.waitForURL(/\/portal\/dashboard/);
  const shots: string[] = [];
  for (const [name, url] of [
    ['portal-dashboard.png', '/portal/dashboard?days=30'],
    ['portal-transactions.png', '/portal/transactions'],
    ['portal-transaction.png', `/portal/transactions/${detailId}`],
  ] as const) {
    await p.goto(`${gateway}${url}`);
    const file = path.join(out, name);
    await p.screenshot({ path: file, fullPage: true });
    shots.push(file);
  }
  await portal.close();
  console.log(`wrote ${shots.join(', ')} (1280 px wide)`);
} finally {
  await browser.close();
  await gw.close();
}
