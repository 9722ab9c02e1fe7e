// The hosted checkout end to end in Chromium (docs/contract.md §14, issue 10): the merchant's page
// posts the signed form, the loading page forwards by itself, the shopper pays on the
// payment page (card, 3-D Secure, cancel), the result page forwards back to the shop with a
// signed result; a second tab and the back button never charge twice; the page works
// inside an iframe of a registered origin and is refused by any other; and the whole flow
// works with JavaScript off. The gateway's strict CSP is in force throughout: a violation
// reported on the console fails the test that caused it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Frame, type Page } from 'playwright-core';
import type { CheckoutRequest, TollgateClient } from '../client/index.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { frameOriginsOf } from '../pages/frame-origins.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { orderOf } from '../test/lifecycle.js';
import { listenGateway } from '../threeds/testing.js';

let gw: TestGateway;
let gateway = ''; // the listening gateway's origin (public_url)
let browser: Browser;
const servers: http.Server[] = [];
/** CSP violations Chromium reported on any page of the current test. */
let violations: string[] = [];

const YEAR = String(new Date().getUTCFullYear() + 2);
const SESSION_PATH = /\/pay\/(cs_[A-Za-z0-9_-]{32})$/;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Shop {
  origin: string;
  /** Serves the signed checkout form at `/buy/<key>` (into an iframe when framed); returns that URL. */
  offer(form: { action: string; fields: Array<[string, string]> }, opts?: { framed?: boolean }): string;
  /** Every request that reached the shop other than a `/buy/` page. */
  landed: URL[];
}

/**
 * A merchant's site on its own origin (no CSP of its own): `/buy/<key>` is a page whose form
 * carries the signed checkout fields as hidden inputs and a button the shopper clicks, posting
 * to the gateway (or into an iframe on the page); `/frame?src=URL` frames URL; anything else
 * is the "back at the shop" landing (return_url, cancel_url).
 */
async function shop(): Promise<Shop> {
  const forms = new Map<string, string>();
  const landed: URL[] = [];
  let origin = '';
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', origin);
    const page = u.pathname.startsWith('/buy/') ? forms.get(u.pathname.slice('/buy/'.length)) : undefined;
    const src = u.pathname === '/frame' ? u.searchParams.get('src') : null;
    let body = '<!doctype html><title>Thanks</title><h1>Back at the shop</h1>';
    if (page) body = page;
    else if (src) body = `<!doctype html><title>Shop</title><iframe id="pay" name="pay" width="400" height="700" src="${esc(src)}"></iframe>`;
    else if (u.pathname !== '/favicon.ico') landed.push(u);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let n = 0;
  return {
    origin,
    landed,
    offer(form, opts = {}) {
      const key = String(++n);
      const inputs = form.fields.map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('\n');
      const target = opts.framed ? ' target="pay"' : '';
      const frame = opts.framed ? '<iframe id="pay" name="pay" width="400" height="700"></iframe>' : '';
      forms.set(
        key,
        `<!doctype html><meta charset="utf-8"><title>Your cart</title><h1>Your cart</h1>
<form id="buy-form" method="post" action="${esc(form.action)}"${target}>${inputs}<button type="submit" id="buy">Pay now</button></form>${frame}`,
      );
      return `${origin}/buy/${key}`;
    },
  };
}

let main: Shop;

before(async () => {
  gw = await testGateway();
  gateway = await listenGateway(gw);
  main = await shop();
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
  for (const s of servers) await new Promise((r) => s.close(r));
  await gw.close();
});

/** A context whose pages report CSP violations (and frame-ancestors refusals, which tests that expect one take out). */
async function context(opts: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const c = await browser.newContext(opts);
  c.setDefaultTimeout(15_000);
  c.on('page', watch);
  return c;
}

function watch(page: Page): void {
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
}

/** The client the merchant's server uses: forms point at the listening gateway. */
const clientOf = (m: CreatedMerchant = gw.merchant): TollgateClient => gw.client(m, { base_url: gateway });

let n = 0;
function request(shopOrigin: string, overrides: Partial<CheckoutRequest> = {}): CheckoutRequest {
  return {
    order_no: `BR-${Date.now().toString(36)}-${++n}`,
    currency: 'USD',
    amount: '42.00',
    billing_country: 'US',
    first_name: 'Ana',
    last_name: 'Silva',
    shopper_email: 'ana@example.com',
    return_url: `${shopOrigin}/return?cart=3`,
    cancel_url: `${shopOrigin}/cart`,
    ...overrides,
  };
}

/**
 * The shopper on the merchant's page clicks "Pay now": the browser posts the signed form, the
 * loading page (checked: HTML, the strict CSP) forwards by itself, and the payment page shows.
 * Returns the session id.
 */
async function checkout(page: Page, url: string): Promise<string> {
  await page.goto(url);
  const [loading, forwarded] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/checkout'),
    // Nothing clicked after "Pay now": the loading page's script appends the fields and posts its form.
    page.waitForRequest((r) => r.method() === 'POST' && /^\/v1\/checkout\/cs_/.test(new URL(r.url()).pathname)),
    page.click('#buy'),
  ]);
  assert.equal(loading.status(), 200);
  assert.match(loading.headers()['content-type'] ?? '', /^text\/html/);
  assert.match(loading.headers()['content-security-policy'] ?? '', /default-src 'none'.*script-src 'nonce-/);
  const sent = new URLSearchParams(forwarded.postData() ?? '');
  assert.ok(sent.get('signInfo') && sent.get('allParams') && sent.get('orderNo'), 'the script appended its fields before posting');
  await page.waitForURL(SESSION_PATH);
  await page.waitForSelector('#card-form');
  return sessionOf(page.url());
}

function sessionOf(url: string): string {
  const id = SESSION_PATH.exec(new URL(url).pathname)?.[1];
  assert.ok(id, `a payment page address: ${url}`);
  return id;
}

async function transactionOf(session_id: string): Promise<string> {
  const row = await gw.runtime.store.db.selectFrom('checkout_sessions').select('transaction_id').where('session_id', '=', session_id).executeTakeFirstOrThrow();
  return row.transaction_id;
}

async function fillCard(target: Page | Frame, number: string): Promise<void> {
  await target.fill('[name=card_number]', number);
  await target.fill('[name=expiry_month]', '12');
  await target.fill('[name=expiry_year]', YEAR);
  await target.fill('[name=security_code]', '123');
  await target.fill('[name=holder]', 'Ana Silva');
}

/** What a payment left behind: its events by type, ledger postings, captured amount and status. */
async function traces(transaction_id: string) {
  const db = gw.runtime.store.db;
  const events = await db.selectFrom('events').select('event_type').where('object_id', '=', transaction_id).execute();
  const postings = await db.selectFrom('ledger_postings').select('transaction_id').where('transaction_id', '=', transaction_id).execute();
  const p = await db.selectFrom('payments').select(['status', 'captured_minor']).where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
  const byType: Record<string, number> = {};
  for (const e of events) byType[e.event_type] = (byType[e.event_type] ?? 0) + 1;
  return { events: byType, postings: postings.length, status: p.status, captured_minor: Number(p.captured_minor) };
}

const outcome = (target: Page | Frame) => target.getAttribute('#outcome', 'data-outcome');

describe('card payments', () => {
  test('merchant page → loading page (by itself) → card 4242… → approved → return_url with a verified result; 3000', async () => {
    const c = await context();
    const page = await c.newPage();
    const client = clientOf();
    const session_id = await checkout(page, main.offer(client.checkoutForm(request(main.origin))));
    assert.match((await page.textContent('#amount')) ?? '', /^\$42\.00$/);
    await fillCard(page, '4242 4242 4242 4242');
    await page.click('#pay');
    await page.waitForSelector('#outcome');
    assert.equal(new URL(page.url()).pathname, `/pay/${session_id}`);
    assert.equal(await outcome(page), 'approved');
    // Nothing clicked: the result page's script follows its link after a few seconds.
    await page.waitForURL(`${main.origin}/return?**`);
    assert.equal(await page.textContent('h1'), 'Back at the shop');
    const arrived = main.landed.filter((u) => u.pathname === '/return').at(-1) ?? assert.fail('the shop saw no return');
    assert.equal(arrived.href, page.url());
    const back = client.verifyReturn(arrived.searchParams); // as the shop's server checks it: throws unless the signature holds
    const transaction_id = await transactionOf(session_id);
    assert.deepEqual([back.transaction_id, back.order_status, back.result_info], [transaction_id, '1', '0000:Success']);
    assert.equal(new URL(page.url()).searchParams.get('cart'), '3', 'return_url’s own query is kept');
    assert.equal((await orderOf(gw, transaction_id)).payment_status, '3000');
    await c.close();
  });

  test('4000000000003220: the shopper passes the 3-D Secure challenge and returns with threeds_result Y', async () => {
    const c = await context();
    const page = await c.newPage();
    const client = clientOf();
    const session_id = await checkout(page, main.offer(client.checkoutForm(request(main.origin, { amount: '64.10' }))));
    await fillCard(page, '4000000000003220');
    await page.click('#pay');
    await page.waitForURL(/\/threeds\//);
    await page.click('#complete');
    await page.waitForSelector('#outcome');
    assert.equal(await outcome(page), 'approved');
    await page.waitForURL(`${main.origin}/return?**`);
    const back = client.verifyReturn(page.url());
    const transaction_id = await transactionOf(session_id);
    assert.deepEqual([back.transaction_id, back.order_status, back.threeds_result], [transaction_id, '1', 'Y']);
    assert.equal((await orderOf(gw, transaction_id)).payment_status, '3000');
    await c.close();
  });

  test('cancel reaches cancel_url with order_status 0, signed; 5000', async () => {
    const c = await context();
    const page = await c.newPage();
    const client = clientOf();
    const session_id = await checkout(page, main.offer(client.checkoutForm(request(main.origin))));
    await page.click('#cancel');
    await page.waitForURL(`${main.origin}/cart?**`);
    const back = client.verifyReturn(page.url());
    const transaction_id = await transactionOf(session_id);
    assert.deepEqual([back.transaction_id, back.order_status], [transaction_id, '0']);
    assert.equal((await orderOf(gw, transaction_id)).payment_status, '5000');
    await c.close();
  });
});

describe('paid once', () => {
  test('two tabs: paying in one, then submitting the card form in the other shows the result and charges nothing', async () => {
    const c = await context();
    const first = await c.newPage();
    const session_id = await checkout(first, main.offer(clientOf().checkoutForm(request(main.origin))));
    const second = await c.newPage();
    await second.goto(`${gateway}/pay/${session_id}`);
    await fillCard(second, '4242424242424242'); // filled while the session is still open

    await fillCard(first, '4242424242424242');
    await first.click('#pay');
    await first.waitForSelector('#outcome');
    assert.equal(await outcome(first), 'approved');
    const transaction_id = await transactionOf(session_id);
    const paid = await traces(transaction_id);
    assert.equal(paid.events['payment.succeeded'], 1);
    assert.deepEqual([paid.status, paid.captured_minor], ['captured', 4200]);

    const [answered] = await Promise.all([
      second.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/pay/${session_id}`),
      second.click('#pay'),
    ]);
    assert.equal(answered.status(), 200, 'the result itself, not a redirect after a payment');
    await second.waitForSelector('#outcome');
    assert.equal(new URL(second.url()).pathname, `/pay/${session_id}`);
    assert.equal(await outcome(second), 'approved', 'the other tab shows the result');
    assert.deepEqual(await traces(transaction_id), paid, 'no second charge: same events, postings, captured amount');
    assert.equal((await orderOf(gw, transaction_id)).payment_status, '3000');
    await c.close();
  });

  test('the back button to the payment page after paying, and submitting again, charges nothing', async () => {
    const c = await context();
    const page = await c.newPage();
    const session_id = await checkout(page, main.offer(clientOf().checkoutForm(request(main.origin))));
    await fillCard(page, '4242424242424242');
    const filled = await page.$$eval('#card-form input', (inputs) => inputs.map((i: any) => [i.name as string, i.value as string] as [string, string]));
    await page.click('#pay');
    await page.waitForSelector('#outcome');
    const transaction_id = await transactionOf(session_id);
    const paid = await traces(transaction_id);
    assert.equal(paid.events['payment.succeeded'], 1);
    await page.waitForURL(`${main.origin}/return?**`);

    await page.goBack(); // from the shop to the payment page's address
    assert.equal(page.url(), `${gateway}/pay/${session_id}`);
    // The pages are no-store: the browser fetches the address again and gets the result, not the form.
    assert.equal(await page.$('#card-form'), null);
    assert.equal(await outcome(page), 'approved');
    // Submitting again: the card form the shopper filled, posted from this page as a browser that
    // had kept the old page (back/forward cache, a stale tab) would post it.
    const [answered] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/pay/${session_id}`),
      page.evaluate(
        ({ action, fields }) => {
          const d = (globalThis as any).document; // browser code: this project's types have no DOM
          const form = d.createElement('form');
          form.method = 'post';
          form.action = action;
          for (const [name, value] of fields) {
            const input = d.createElement('input');
            input.type = 'hidden';
            input.name = name;
            input.value = value;
            form.appendChild(input);
          }
          d.body.appendChild(form);
          form.submit();
        },
        { action: `/pay/${session_id}`, fields: filled },
      ),
    ]);
    assert.equal(answered.status(), 200, 'the result itself, not a redirect after a payment');
    await page.waitForSelector('#outcome');
    assert.equal(await outcome(page), 'approved');
    assert.deepEqual(await traces(transaction_id), paid, 'no second charge');
    assert.equal((await orderOf(gw, transaction_id)).payment_status, '3000');
    await c.close();
  });
});

describe('inside an iframe (frame-ancestors from the account’s registered origins)', () => {
  test('on a registered origin the merchant posts into its iframe and the shopper pays inside it', async () => {
    const framing = await shop();
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, framing.origin);
    const client = clientOf(m);
    const c = await context();
    const page = await c.newPage();
    await page.goto(framing.offer(client.checkoutForm(request(framing.origin)), { framed: true }));
    await page.click('#buy');
    const frame = (await (await page.waitForSelector('#pay')).contentFrame()) ?? assert.fail('no frame');
    await frame.waitForURL(SESSION_PATH);
    await frame.waitForSelector('#card-form');
    const session_id = sessionOf(frame.url());
    await fillCard(frame, '4242424242424242');
    await frame.click('#pay');
    await frame.waitForSelector('#outcome');
    assert.equal(await outcome(frame), 'approved');
    await frame.waitForURL(`${framing.origin}/return?**`);
    assert.equal(new URL(page.url()).pathname.startsWith('/buy/'), true, 'the shop page stays around its frame');
    const back = client.verifyReturn(frame.url());
    const transaction_id = await transactionOf(session_id);
    assert.deepEqual([back.transaction_id, back.order_status], [transaction_id, '1']);
    assert.equal((await orderOf(gw, transaction_id, m)).payment_status, '3000');
    await c.close();
  });

  test('on an origin the account did not register the browser renders neither the loading page nor the payment page', async () => {
    const registered = await shop();
    const other = await shop();
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, registered.origin);
    const c = await context();
    const page = await c.newPage();
    const refused: string[] = [];
    page.on('console', (msg) => {
      if (/frame-ancestors/.test(msg.text())) refused.push(msg.text());
    });
    const req = request(other.origin);
    await page.goto(other.offer(clientOf(m).checkoutForm(req), { framed: true }));
    const [loading] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/checkout'),
      page.click('#buy'),
    ]);
    assert.equal(loading.status(), 200, 'the gateway answered the loading page');
    assert.match(loading.headers()['content-security-policy'] ?? '', new RegExp(`frame-ancestors ${registered.origin}(;|$)`));
    const frame = (await (await page.waitForSelector('#pay')).contentFrame()) ?? assert.fail('no frame');
    await page.waitForTimeout(300); // nothing should follow: the refused page runs no script
    assert.equal(await frame.$('#checkout'), null, 'the loading page is not shown');
    assert.ok(!frame.url().startsWith(gateway), `the frame never reached the payment page (${frame.url()})`);

    // The payment page itself, framed directly, is refused the same way.
    const row = await gw.runtime.store.db
      .selectFrom('checkout_sessions')
      .innerJoin('payments', 'payments.transaction_id', 'checkout_sessions.transaction_id')
      .select(['checkout_sessions.session_id', 'payments.transaction_id'])
      .where('payments.order_no', '=', req.order_no)
      .where('payments.account_id', '=', m.account_id)
      .executeTakeFirstOrThrow();
    const direct = await c.newPage();
    direct.on('console', (msg) => {
      if (/frame-ancestors/.test(msg.text())) refused.push(msg.text());
    });
    await direct.goto(`${other.origin}/frame?src=${encodeURIComponent(`${gateway}/pay/${row.session_id}`)}`);
    const framed = (await (await direct.waitForSelector('#pay')).contentFrame()) ?? assert.fail('no frame');
    await framed.waitForLoadState();
    await direct.waitForTimeout(300); // the console report can trail the navigation
    assert.equal(await framed.$('#card-form'), null, 'the payment page is not shown');
    assert.ok(refused.length >= 2, `Chromium reports both frame-ancestors refusals (${refused.length})`);
    assert.equal((await orderOf(gw, row.transaction_id, m)).payment_status, '1000', 'nothing was paid');
    await c.close();
    violations = violations.filter((v) => !/frame-ancestors/.test(v)); // expected here: the refusals themselves
  });
});

test('without JavaScript: the loading page’s button, the card form, and the result page’s link back to return_url', async () => {
  const c = await context({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await c.newPage();
  const client = clientOf();
  await page.goto(main.offer(client.checkoutForm(request(main.origin, { amount: '9.99' }))));
  await page.click('#buy');
  await page.waitForSelector('#continue'); // the <noscript> button shows with scripting off
  assert.equal(new URL(page.url()).pathname, '/v1/checkout');
  assert.equal(await page.title(), 'Loading…');
  await page.click('#continue');
  await page.waitForURL(SESSION_PATH);
  const session_id = sessionOf(page.url());
  await fillCard(page, '4242 4242 4242 4242');
  await page.click('#pay');
  await page.waitForSelector('#outcome');
  assert.equal(await outcome(page), 'approved');
  await page.waitForTimeout(3_500); // longer than the script's delay: without JavaScript nothing forwards
  assert.equal(new URL(page.url()).pathname, `/pay/${session_id}`);
  await page.click('#return');
  await page.waitForURL(`${main.origin}/return?**`);
  const back = client.verifyReturn(page.url());
  const transaction_id = await transactionOf(session_id);
  assert.deepEqual([back.transaction_id, back.order_status], [transaction_id, '1']);
  assert.equal((await orderOf(gw, transaction_id)).payment_status, '3000');
  await c.close();
});
