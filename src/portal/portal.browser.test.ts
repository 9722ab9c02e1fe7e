// The merchant portal end to end in Chromium (issue 14 "Done when"; docs/contract.md §19), on the
// engine of TOLLGATE_TEST_ENGINE (CI runs it on both): the first user sets a password from
// the operator's link, enrols TOTP and signs in with a code; finds API payments by order
// number and by last four; captures one partially, refunds another twice, accepts a held
// one; the dashboard's charts render; the CSV export matches the list; ten wrong passwords
// lock a user; a form without its CSRF token is refused; a viewer cannot refund; another
// merchant's transaction is 404; the session cookie has the §19 flags. The portal's strict
// CSP is in force: a violation reported on the console fails the test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { CreatedMerchant } from '../merchants/service.js';
import { paymentRequest, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { listenGateway } from '../threeds/testing.js';
import { TEST_PASSWORD } from './testing.js';
import { totpCode } from './totp.js';
import { PortalUsers } from './users.js';

let gw: TestGateway;
let origin = '';
let browser: Browser;
let users: PortalUsers;
let manual: CreatedMerchant;
let violations: string[] = [];

before(async () => {
  gw = await testGateway();
  origin = await listenGateway(gw);
  users = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
  // One merchant whose payments are captured by hand (the portal's capture), with its own users.
  manual = await gw.newMerchant({ name: 'Portal Shop', capture_method: 'manual' });
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
  await gw.close();
});

async function context(): Promise<BrowserContext> {
  const c = await browser.newContext({ acceptDownloads: true });
  c.setDefaultTimeout(15_000);
  c.on('page', (page) =>
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    }),
  );
  return c;
}

async function pay(m: CreatedMerchant, card: string, amount = '40.00'): Promise<{ transaction_id: string; order_no: string }> {
  const r = readXml(
    await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest({ card, amount }) }, { merchant: m }),
  );
  assert.ok(r.transaction_id, JSON.stringify(r));
  return { transaction_id: r.transaction_id, order_no: r.order_no };
}

/** The operator creates a user; the user opens the link and sets a password (in the browser). */
async function invite(page: Page, m: CreatedMerchant, email: string, role: string): Promise<void> {
  const { token } = await users.create({ merchant_id: m.merchant_id, email, role }, Date.now());
  await page.goto(`${origin}/portal/setup/${token}`);
  await page.fill('#f-password', TEST_PASSWORD);
  await page.fill('#f-confirm', TEST_PASSWORD);
  await page.click('#set-password');
  await page.waitForURL(/\/portal\/signin/);
  assert.match((await page.textContent('#notice')) ?? '', /password is set/);
}

async function signIn(page: Page, m: CreatedMerchant, email: string, password = TEST_PASSWORD): Promise<void> {
  await page.goto(`${origin}/portal/signin`);
  await page.fill('#f-merchant_id', m.merchant_id);
  await page.fill('#f-email', email);
  await page.fill('#f-password', password);
  await page.click('#signin');
}

/** The rows of the transactions table: transaction ids in order. */
async function listed(page: Page): Promise<string[]> {
  return page.$$eval('#transactions tr[data-transaction-id]', (rows) => rows.map((r) => r.getAttribute('data-transaction-id') ?? ''));
}

describe('the merchant portal in Chromium', () => {
  test('owner: set password, enrol TOTP, sign in with a code; find, capture, refund twice, accept; dashboard; CSV', async () => {
    const held = await pay(manual, '4000000000009235', '15.00');
    const toCapture = await pay(manual, '5555555555554444', '40.00');
    const toRefund = await pay(manual, '4242424242424242', '30.00');
    // Captured through the API so it can be refunded from the portal.
    const cap = await gw.post(
      '/v1/capture',
      {
        merchant_id: manual.merchant_id,
        account_id: manual.account_id,
        capture_orders: [{ transaction_id: toRefund.transaction_id, order_no: toRefund.order_no, currency: 'USD', amount: '30.00' }],
      },
      { merchant: manual },
    );
    assert.equal(cap.statusCode, 200, cap.body);

    const c = await context();
    const page = await c.newPage();
    await invite(page, manual, 'owner@portal.example', 'owner');
    await signIn(page, manual, 'owner@portal.example');
    await page.waitForURL(/\/portal\/dashboard/);

    // The cookie: HttpOnly, SameSite=Strict; not Secure over plain HTTP (Secure, __Host- behind HTTPS: signin.test.ts).
    const cookie = (await c.cookies()).find((k) => k.name === 'tollgate_portal');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(String(await page.evaluate('document.cookie')).includes('tollgate_portal='), false, 'not readable by scripts');

    // Two-step sign-in from the profile, then a fresh sign-in asks for the code.
    await page.goto(`${origin}/portal/totp`);
    await page.click('#start-totp');
    const secret = (await page.textContent('#totp-secret'))?.trim() ?? '';
    // The key's QR code is drawn (server-side SVG, under the strict CSP: a violation fails the test).
    const qr = await page.locator('svg#totp-qr').boundingBox();
    assert.ok(qr && qr.width >= 200 && qr.height >= 200, `the QR code is shown: ${JSON.stringify(qr)}`);
    // Codes follow the gateway's clock (the test harness's, moved by hand).
    await page.fill('#f-code', totpCode(secret, gw.runtime.deps.now()));
    await page.click('#enrol');
    assert.equal(await page.locator('#recovery-codes li').count(), 10);
    await page.click('#continue');
    await page.click('#signout');
    await page.waitForURL(/\/portal\/signin/);
    await signIn(page, manual, 'owner@portal.example');
    await page.waitForURL(/\/portal\/signin\/code/);
    // The enrolment used this 30 s step; a code is good once, so the sign-in takes the next one.
    gw.clock.advance(30_000);
    await page.fill('#f-code', totpCode(secret, gw.runtime.deps.now()));
    await page.click('#verify');
    await page.waitForURL(/\/portal\/dashboard/);

    // The dashboard's charts are server-drawn SVG.
    assert.equal(await page.locator('svg#chart-volume').count(), 1);
    assert.equal(await page.locator('svg#chart-approval').count(), 1);
    assert.ok((await page.locator('#balances').count()) === 1);

    // Find by order number, then by last four.
    await page.goto(`${origin}/portal/transactions`);
    await page.fill('input[name="order_no"]', toCapture.order_no);
    await page.locator('form[method="get"] button[type="submit"]').first().click();
    assert.deepEqual(await listed(page), [toCapture.transaction_id]);
    await page.goto(`${origin}/portal/transactions`);
    await page.fill('input[name="last4"]', '4444');
    await page.locator('form[method="get"] button[type="submit"]').first().click();
    assert.deepEqual(await listed(page), [toCapture.transaction_id]);
    assert.doesNotMatch(await page.content(), /5555555555554444/, 'never the full card number');

    // Partial capture.
    await page.click(`#transactions tr[data-transaction-id="${toCapture.transaction_id}"] a`);
    await page.fill('form[action$="/capture"] input[name="amount"]', '25.00');
    await page.click('#capture');
    await page.waitForSelector('#notice');
    const captured = await gw.runtime.store.db
      .selectFrom('payments')
      .selectAll()
      .where('transaction_id', '=', toCapture.transaction_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(captured.captured_minor), 2500);

    // Two partial refunds.
    for (const amount of ['5.00', '7.50']) {
      await page.goto(`${origin}/portal/transactions/${toRefund.transaction_id}`);
      await page.fill('form[action$="/refund"] input[name="amount"]', amount);
      await page.click('#refund');
      // A refund asks first (issue 36 item 4).
      await page.click('#confirm-refund');
      await page.waitForSelector('#notice');
    }
    const refunds = await gw.runtime.store.db.selectFrom('refunds').selectAll().where('transaction_id', '=', toRefund.transaction_id).execute();
    assert.deepEqual(
      refunds.map((r) => Number(r.refund_amount_minor)).sort((a, b) => a - b),
      [500, 750],
    );

    // Accept the held one.
    await page.goto(`${origin}/portal/transactions/${held.transaction_id}`);
    await page.click('#review-accept');
    await page.waitForSelector('#notice');
    const accepted = await gw.runtime.store.db
      .selectFrom('payments')
      .select('status')
      .where('transaction_id', '=', held.transaction_id)
      .executeTakeFirstOrThrow();
    assert.notEqual(accepted.status, 'review');

    // The CSV export holds exactly the list's rows.
    await page.goto(`${origin}/portal/transactions`);
    const shown = await listed(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = await streamText(await download.createReadStream());
    const ids = csv
      .trim()
      .split(/\r?\n/)
      .slice(1)
      .map((line) => shown.find((id) => line.includes(id)) ?? `missing:${line}`);
    assert.deepEqual(ids, shown);
    assert.doesNotMatch(csv, /4242424242424242|5555555555554444/);
    await c.close();
  });

  test('a viewer cannot refund; another merchant’s transaction is 404; a form without CSRF is refused', async () => {
    const p = await pay(manual, '4242424242424242', '12.00');
    const other = await gw.newMerchant({ name: 'Other Shop' });
    const theirs = await pay(other, '4242424242424242', '9.00');
    const c = await context();
    const page = await c.newPage();
    await invite(page, manual, 'viewer@portal.example', 'viewer');
    await signIn(page, manual, 'viewer@portal.example');
    await page.waitForURL(/\/portal\/dashboard/);

    await page.goto(`${origin}/portal/transactions/${p.transaction_id}`);
    assert.equal(await page.locator('#refund').count(), 0, 'no refund form for a viewer');
    // Posting the form anyway (as a crafted request with the viewer's own CSRF token) is refused.
    const csrf = await page.locator('input[name="csrf"]').first().getAttribute('value');
    // (page.request shares the browser context's cookies; a fetch from the page itself is blocked by the portal's CSP.)
    const refused = (
      await page.request.post(`${origin}/portal/transactions/${p.transaction_id}/refund`, {
        form: { csrf: csrf ?? '', form_token: 'viewer-try-1', amount: '1.00' },
        maxRedirects: 0,
      })
    ).status();
    assert.equal(refused, 403);

    const r404 = await page.goto(`${origin}/portal/transactions/${theirs.transaction_id}`);
    assert.equal(r404?.status(), 404);

    const noCsrf = (await page.request.post(`${origin}/portal/signout-everywhere`, { form: { form_token: 'abcdefghijklmnop' }, maxRedirects: 0 })).status();
    assert.equal(noCsrf, 403);
    const refunds = await gw.runtime.store.db.selectFrom('refunds').selectAll().where('transaction_id', '=', p.transaction_id).execute();
    assert.equal(refunds.length, 0);
    await c.close();
  });

  test('ten wrong passwords lock the user', async () => {
    const c = await context();
    const page = await c.newPage();
    await invite(page, manual, 'operator@portal.example', 'operator');
    for (let i = 0; i < 10; i++) await signIn(page, manual, 'operator@portal.example', `not-the-password-${i}`);
    // A wrong password reads the same locked or not (no one learns the address is a user)…
    assert.match((await page.textContent('#signin-error')) ?? '', /Wrong merchant number, e-mail or password/);
    await signIn(page, manual, 'operator@portal.example');
    assert.match((await page.textContent('#signin-error')) ?? '', /locked/, 'the right password is refused while locked');
    await c.close();
  });
});

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
