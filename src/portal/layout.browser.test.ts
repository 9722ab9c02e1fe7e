// The portal on a phone and on a laptop (issue 36 item 4; docs/contract.md §19): at 390 and
// 1280 px no signed-in page scrolls sideways (document.scrollingElement.scrollWidth stays within
// its clientWidth), the navigation bar is one line at 1280 px, the transactions table fits at
// 1280 px (every column, Method included, visible without scrolling the table), and at 390 px
// a transaction's key fields (amount, status, order no) are on screen without scrolling.
// Every page carries realistic data: long ids, a refunded payment with notifications, a
// payment to capture, a dispute, a subscription, a payout, a settlement batch, a reconciliation
// run with mismatches, processors, users, audit lines; and so do the pages a form leads to: the
// confirmations of cancel, refund, a dispute's accept and a processor's removal, a refusal shown
// on its form, a filter the list cannot read, the TOTP key with its QR code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createScheduler } from '../cli/background.js';
import { newId } from '../crypto/ids.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { topUp } from '../payouts/admin.js';
import { setProcessor } from '../processors/config.js';
import { DAY_MS, runSettlement } from '../settlement/batches.js';
import { saveRun } from '../settlement/reconcile/runs.js';
import { directPayment, paymentRequest, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { listenGateway } from '../threeds/testing.js';
import { signedInUser } from './testing.js';
import { PortalUsers } from './users.js';

let gw: TestGateway;
let origin = '';
let browser: Browser;
let m: CreatedMerchant;
let refunded = '';
let held = '';
let dispute = '';
let cookie = '';
let batch = '';
let run = '';

async function pay(over: Record<string, unknown>): Promise<{ transaction_id: string; order_no: string }> {
  const r = readXml(await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest(over) }, { merchant: m }));
  assert.ok(r.transaction_id, JSON.stringify(r));
  return { transaction_id: r.transaction_id, order_no: r.order_no };
}

/** A reconciliation run as `reconcile` keeps it, with a long file name, references and reasons. */
async function keptRun(account_id: string, transaction_id: string): Promise<string> {
  const run_id = newId('reconciliation_run', gw.clock.now);
  const item = { run_id, refund_id: '', currency: 'USD', ours_fee_minor: null, theirs_fee_minor: null };
  await saveRun(
    gw.runtime.store,
    {
      run_id,
      account_id,
      connector: 'adyen',
      file_name: `settlement_detail_report_batch_${'7'.repeat(40)}.csv`,
      file_sha256: 'ab'.repeat(32),
      file_bytes: 123_456,
      lines: 1_234_567,
      from_ms: gw.clock.now - DAY_MS,
      to_ms: gw.clock.now,
      matched: 1_234_560,
      missing_here: 2,
      missing_at_processor: 0,
      amount_differs: 1,
      fee_differs: 0,
      not_applicable: 4,
      mismatches: 3,
      items_kept: 3,
      items_dropped: 0,
      started_at: gw.clock.now,
      finished_at: gw.clock.now,
    },
    [
      {
        ...item,
        seq: 1,
        kind: 'amount_differs',
        movement: 'capture',
        line_no: 1_234_001,
        reference: `8815${'1'.repeat(40)}`,
        transaction_id,
        ours_amount_minor: 123456789,
        theirs_amount_minor: 123456700,
        ours_fee_minor: 3580,
        theirs_fee_minor: 3580,
        detail: `the processor reports another amount ${'a'.repeat(60)}`,
      },
      {
        ...item,
        seq: 2,
        kind: 'missing_here',
        movement: 'refund',
        line_no: 1_234_002,
        reference: `NOT-OURS-${'n'.repeat(50)}`,
        transaction_id: `NOT-OURS-${'n'.repeat(50)}`,
        ours_amount_minor: null,
        theirs_amount_minor: 500,
        detail: 'no such movement',
      },
      {
        ...item,
        seq: 3,
        kind: 'missing_here',
        movement: 'dispute_won',
        line_no: 1_234_003,
        reference: '9913000000000001',
        transaction_id: '',
        ours_amount_minor: null,
        theirs_amount_minor: 7700,
        detail: 'names no payment of Tollgate',
      },
    ],
  );
  return run_id;
}

before(async () => {
  gw = await testGateway();
  origin = await listenGateway(gw);
  m = await gw.newMerchant({ name: 'Layout Shop with a rather long trading name GmbH & Co. KG' });
  for (let i = 0; i < 6; i++)
    await pay({ card: '4242424242424242', amount: `${10 + i}.00`, order_no: `ORDER-2026-11-27-${i}-LONG-REFERENCE-${'x'.repeat(20)}` } as never);
  const p = await pay({ card: '5555555555554444', amount: '1234567.89', shopper_email: 'a.very.long.shopper.address@subdomain.example.com' } as never);
  refunded = p.transaction_id;
  held = (await pay({ card: '4242424242424242', amount: '55.00', capture_method: 'manual', order_no: `MANUAL-${'y'.repeat(40)}` } as never)).transaction_id;
  // A disputed payment (the sandbox's dispute card, a few seconds after capture), for the disputes pages.
  const contested = await pay({ card: '4000000000000259', amount: '77.00', order_no: `DISPUTED-${'d'.repeat(40)}` } as never);
  gw.clock.advance(6_000);
  await createScheduler(gw.runtime).runDue(gw.runtime.deps.now());
  dispute = (
    await gw.runtime.store.db.selectFrom('disputes').select('dispute_id').where('transaction_id', '=', contested.transaction_id).executeTakeFirstOrThrow()
  ).dispute_id;
  const r = await gw.post(
    '/v1/refund',
    {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      refund_orders: [{ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount: '1234567.89', refund_amount: '12.34' }],
    },
    { merchant: m },
  );
  assert.equal(r.statusCode, 200, r.body);
  const sub = await gw.post(
    '/v1/authorise',
    directPayment(m, { amount: '9.99', currency: 'EUR', subscription: { contract_name: 'A monthly plan with a long contract name', interval: 'month' } }),
    { merchant: m },
  );
  assert.match(readXml(sub).recurring_id ?? '', /^rec_/, sub.body);
  await topUp(gw.runtime.store, { account_id: m.account_id, currency: 'USD', amount: '1000.00' }, gw.clock.now);
  // The day closes into its settlement batches (a minute past midnight), and a kept reconciliation run with mismatches.
  gw.clock.advance(DAY_MS - (gw.clock.now % DAY_MS) + 60_000);
  await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
  batch = (
    await gw.runtime.store.db
      .selectFrom('settlement_batches')
      .select('batch_id')
      .where('account_id', '=', m.account_id)
      .where('currency', '=', 'USD')
      .executeTakeFirstOrThrow()
  ).batch_id;
  run = await keptRun(m.account_id, refunded);
  const owner = await signedInUser(gw, { role: 'owner', merchant_id: m.merchant_id, email: 'owner.with.a.long.address@layout-shop.example' });
  const paid = await owner.agent.submit('/portal/payouts', '/portal/payouts', {
    source_currency: 'USD',
    payment_amount: '100.00',
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: 'INV-1001-A-LONG-MERCHANT-REFERENCE',
    entity_type: 'COMPANY',
    company_name: 'Acme Supplies LLC',
    country_code: 'US',
    account_name: 'Acme Supplies LLC',
    account_number: '000123456789',
    bank_code: '011000015',
  });
  assert.equal(paid.status, 303, paid.body.slice(0, 500));
  // Two processors with long settings, for the Processors page.
  for (const [connector, credentials] of [
    [
      'adyen',
      [
        'api_key=AQEyhmfxK4zPYhVAw0m-a-long-api-key-value-0001',
        'merchant_account=LayoutShopWithALongMerchantAccountECOM',
        'hmac_key=44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6B7f3e',
      ],
    ],
    ['sandbox', ['webhook_secret=whsec_layout_test_value_q7r2']],
  ] as const)
    await setProcessor(
      gw.runtime.store,
      gw.runtime.keyring,
      {
        account_id: m.account_id,
        connector,
        base_url: connector === 'adyen' ? 'https://checkout-test.adyen.com/v71/with/a/rather/long/path' : '',
        priority: connector === 'adyen' ? 1 : 2,
        currencies: 'USD,EUR,GBP,JPY,CHF,SEK,NOK,DKK',
        brands: 'visa,mastercard,american-express',
        credentials: [...credentials],
      },
      gw.clock.now,
    );
  const users = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
  for (const role of ['admin', 'operator', 'viewer'])
    await users.create({ merchant_id: m.merchant_id, email: `${role}.someone.long@layout-shop.example`, role }, gw.clock.now);
  cookie = owner.agent.jar.get('tollgate_portal') ?? '';
  assert.ok(cookie, 'a session cookie');
  browser = await chromium.launch({
    executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
  await gw.close();
});

/** Every page of the navigation and the user's own, and their status; a function when the path is known only once the data is made. */
const PAGES: ReadonlyArray<{ path: string | (() => string); status?: number }> = [
  { path: '/portal/dashboard' },
  { path: '/portal/transactions' },
  { path: () => `/portal/transactions/${refunded}` },
  { path: () => `/portal/transactions/${held}` },
  { path: '/portal/disputes' },
  { path: () => `/portal/disputes/${dispute}` },
  { path: '/portal/subscriptions' },
  { path: '/portal/payouts' },
  { path: '/portal/settlement' },
  { path: () => `/portal/settlement/${batch}` },
  { path: '/portal/reconciliation' },
  { path: () => `/portal/reconciliation/${run}` },
  { path: '/portal/settings' },
  { path: '/portal/processors' },
  { path: '/portal/processors?connector=stripe' },
  { path: '/portal/users' },
  { path: '/portal/audit' },
  { path: '/portal/profile' },
  { path: '/portal/password' },
  { path: '/portal/totp' },
  // A filter the list cannot read: the message above the form, as sent.
  { path: `/portal/transactions?last4=12ab&order_no=${'Z'.repeat(64)}`, status: 400 },
  { path: `/portal/settlement?month=2026-13&to=${'Z'.repeat(20)}`, status: 400 },
];

async function open(width: number): Promise<Page> {
  const c = await browser.newContext({ viewport: { width, height: 800 } });
  c.setDefaultTimeout(15_000);
  await c.addCookies([{ name: 'tollgate_portal', value: cookie, url: origin }]);
  return c.newPage();
}

/** How far the page scrolls sideways, and the first elements sticking out (for the message); run in the page. */
const OVERFLOW = `(() => {
  const el = document.scrollingElement;
  const width = el.clientWidth;
  const culprits = [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > width + 1)
    .slice(0, 5)
    .map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + String(e.className).replace(/ /g, '.') : '') + ' right=' + Math.round(e.getBoundingClientRect().right));
  return { extra: el.scrollWidth - width, culprits };
})()`;

async function overflow(page: Page): Promise<{ extra: number; culprits: string[] }> {
  return (await page.evaluate(OVERFLOW)) as { extra: number; culprits: string[] };
}

describe('the portal at 390 and 1280 px', () => {
  for (const width of [390, 1280]) {
    test(`no page scrolls sideways at ${width} px`, async () => {
      const page = await open(width);
      const wide: string[] = [];
      for (const p of PAGES) {
        const path = typeof p.path === 'function' ? p.path() : p.path;
        const res = await page.goto(`${origin}${path}`);
        assert.equal(res?.status(), p.status ?? 200, `${path}: ${res?.status()}`);
        const { extra, culprits } = await overflow(page);
        if (extra > 0) wide.push(`${path} scrolls sideways by ${extra} px (${culprits.join(', ')})`);
      }
      assert.deepEqual(wide, [], `at ${width} px`);
      await page.context().close();
    });

    test(`no page a form leads to scrolls sideways at ${width} px: confirmations, a refusal on its form, the TOTP key`, async () => {
      const page = await open(width);
      const wide: string[] = [];
      const check = async (what: string) => {
        const { extra, culprits } = await overflow(page);
        if (extra > 0) wide.push(`${what} scrolls sideways by ${extra} px (${culprits.join(', ')})`);
      };
      const detail = `${origin}/portal/transactions/${refunded}`;
      // The refund's confirmation, and a refund over what is left, shown under the amount.
      await page.goto(detail);
      await page.fill('#f-refund-amount', '1.00');
      await page.fill('#f-refund-reason', `a reason that goes on and on ${'z'.repeat(60)}`);
      await page.click('#refund');
      await page.waitForSelector('#confirm-question');
      await check('the refund confirmation');
      await page.goto(detail);
      await page.fill('#f-refund-amount', '99999999.00');
      await page.click('#refund');
      await page.waitForSelector('#f-refund-amount-error');
      await check('a refund refused on its form');
      // The cancel's confirmation and a capture refused on its form.
      await page.goto(`${origin}/portal/transactions/${held}`);
      await page.click('#cancel');
      await page.waitForSelector('#confirm-question');
      await check('the cancel confirmation');
      await page.goto(`${origin}/portal/transactions/${held}`);
      await page.fill('#f-capture-amount', '55.01');
      await page.click('#capture');
      await page.waitForSelector('#f-capture-amount-error');
      await check('a capture refused on its form');
      // A subscription's cancel asks too.
      await page.goto(`${origin}/portal/subscriptions`);
      await page.click('#subscriptions button[id^="cancel-"]');
      await page.waitForSelector('#confirm-question');
      await check('the subscription cancel confirmation');
      // A dispute's accept asks, and a file of the wrong type is refused on the evidence form.
      await page.goto(`${origin}/portal/disputes/${dispute}`);
      await page.click('#accept');
      await page.waitForSelector('#confirm-question');
      await check('the dispute accept confirmation');
      await page.goto(`${origin}/portal/disputes/${dispute}`);
      await page.fill('#f-text', `a long piece of evidence ${'e'.repeat(80)}`);
      await page.setInputFiles('#f-file', { name: `not-really-a-${'p'.repeat(40)}.pdf`, mimeType: 'application/pdf', buffer: Buffer.from('plain text') });
      await page.click('#add-evidence');
      await page.waitForSelector('#f-file-error');
      await check('evidence refused on its form');
      // A processor's removal asks, and a refused setting is shown on its form.
      await page.goto(`${origin}/portal/processors`);
      await page.click('#processors button[id^="remove-"]');
      await page.waitForSelector('#confirm-question');
      await check('the processor remove confirmation');
      await page.goto(`${origin}/portal/processors?connector=adyen`);
      await page.fill('#f-base_url', `not a URL ${'w'.repeat(80)}`);
      await page.click('#save-processor');
      await page.waitForSelector('#set-error');
      await check('a processor setting refused on its form');
      // The TOTP key: the QR code, the key and the link.
      await page.goto(`${origin}/portal/totp`);
      if ((await page.locator('#start-totp').count()) > 0) await page.click('#start-totp');
      await page.waitForSelector('svg#totp-qr');
      await check('the TOTP key with its QR code');
      assert.deepEqual(wide, [], `at ${width} px`);
      await page.context().close();
    });
  }

  test('at 1280 px the navigation is one line and the transactions table shows every column', async () => {
    const page = await open(1280);
    await page.goto(`${origin}/portal/transactions`);
    const tops = await page.$$eval('header.bar nav a', (links) => links.map((a) => Math.round(a.getBoundingClientRect().top)));
    assert.ok(tops.length >= 7, `the links: ${tops.length}`);
    assert.equal(new Set(tops).size, 1, `the navigation wraps: tops ${tops.join(', ')}`);
    const heights = await page.$$eval('header.bar nav a', (links) => links.map((a) => Math.round(a.getBoundingClientRect().height)));
    assert.ok(Math.max(...heights) < 2 * Math.min(...heights), `no link breaks over two lines: heights ${heights.join(', ')}`);
    const fit = await page.$eval('#transactions', (t) => ({ table: t.scrollWidth, box: t.parentElement?.clientWidth ?? 0 }));
    assert.ok(fit.table <= fit.box, `the table (${fit.table} px) fits its box (${fit.box} px)`);
    const method = await page.$eval('#transactions th:last-child', (th) => th.getBoundingClientRect().right);
    assert.ok(method <= 1280, `the last column ends at ${method} px`);
    await page.context().close();
  });

  test('at 390 px each listed transaction shows its amount, status and order number on screen', async () => {
    const page = await open(390);
    await page.goto(`${origin}/portal/transactions`);
    const row = page.locator(`#transactions [data-transaction-id="${refunded}"]`);
    for (const cell of ['.amount', '.status', '.order-no', '.created']) {
      const box = await row.locator(cell).boundingBox();
      assert.ok(box, `${cell} shown`);
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `${cell} on screen: x=${box.x} w=${box.width}`);
      assert.ok(box.width > 20, `${cell} readable: w=${box.width}`);
    }
    await page.context().close();
  });
});
