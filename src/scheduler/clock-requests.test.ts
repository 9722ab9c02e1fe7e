// Requests on a test account whose clock was moved are answered as of the clock's time
// (docs/contract.md §16; issue 36 item 1), on SQLite and PostgreSQL, through the real
// interfaces: the card expiry check, the times a payment is recorded and queried with, a
// subscription's schedule, a hosted checkout session's deadline and its card form, and the
// generic interface's `created`. Another test account without a clock, and a live account,
// keep the real time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { signedInUser } from '../portal/testing.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { formTokenOf } from '../threeds/testing.js';
import { advanceClock } from './clock.js';
import type { Scheduler } from './scheduler.js';

const DAY = 86_400_000;
/** How far each clocked account's clock is moved: about three years. */
const AHEAD = 3 * 365 * DAY;

let gw: TestGateway;
let scheduler: Scheduler;
/** The real time of the gateway (the harness clock stands still unless moved). */
let real: number;
/** The year now: a card expiring next December is valid in real time, expired at the clock. */
let year: number;
before(async () => {
  gw = await testGateway();
  scheduler = createScheduler(gw.runtime);
  real = gw.clock.now;
  year = new Date(real).getUTCFullYear();
});
after(async () => {
  await gw.close();
});

type Json = Record<string, any>;
let seq = 0;

/** A new test merchant whose clock stands AHEAD of the real time. */
async function clocked(): Promise<{ merchant: CreatedMerchant; at: number }> {
  const merchant = await gw.newMerchant();
  const at = real + AHEAD;
  await advanceClock(gw.runtime.store, scheduler, merchant.account_id, at, gw.clock.now);
  return { merchant, at };
}

async function authorise(merchant: CreatedMerchant, expiry_year: number, extra: Json = {}) {
  const body = directPayment(merchant, { order_no: `CLK-${++seq}-${real.toString(36)}`, expiration_year: String(expiry_year), ...extra });
  const res = await gw.post('/v1/authorise', body, { merchant });
  return { x: readXml(res), body: res.body, order_no: body.order_no as string };
}

async function paymentRow(transaction_id: string) {
  const r = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
  return { ...r, created_at: Number(r.created_at), updated_at: Number(r.updated_at), expires_at: r.expires_at === null ? null : Number(r.expires_at) };
}

/** `ms` falls within a minute after `from` (a request's time passes while it runs). */
function near(ms: number, from: number, what: string) {
  assert.ok(ms >= from && ms < from + 60_000, `${what}: ${new Date(ms).toISOString()}, expected ${new Date(from).toISOString()}`);
}

describe('a test account with a moved clock is answered as of the clock', () => {
  test('direct authorise: a card expiring before the clock’s date (after the real date) is refused as expired, a later one approved', async () => {
    const { merchant } = await clocked();
    const expired = await authorise(merchant, year + 1);
    assert.equal(expired.x.result_info, '1005:Expired card', JSON.stringify(expired.x));
    const ok = await authorise(merchant, year + 5);
    assert.equal(ok.x.result_info, '0000:Success', JSON.stringify(ok.x));
  });

  test('a payment is recorded and queried with the clock’s times; its notification is due now, its payload in the clock’s time', async () => {
    const { merchant, at } = await clocked();
    const { x, order_no } = await authorise(merchant, year + 5, { notify_url: 'http://127.0.0.1:9/hook' });
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    const row = await paymentRow(x.transaction_id);
    near(row.created_at, at, 'created_at');
    near(row.updated_at, at, 'updated_at');
    const res = await gw.post('/v1/retrievalTrans', { merchant_id: merchant.merchant_id, account_id: merchant.account_id, order_nos: order_no }, { merchant });
    assert.equal(res.statusCode, 200, res.body);
    const [order] = (JSON.parse(res.body) as Json).orders_list as Json[];
    const d = new Date(at);
    assert.ok(String(order?.transaction_date).startsWith(`${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`), JSON.stringify(order));
    const events = await gw.runtime.store.db
      .selectFrom('events')
      .select(['event_type', 'payload', 'next_attempt_at', 'status'])
      .where('object_id', '=', x.transaction_id)
      .execute();
    assert.ok(events.length > 0, 'the payment recorded its notification');
    for (const e of events) {
      assert.equal(e.status, 'pending');
      assert.ok(Number(e.next_attempt_at) <= gw.clock.now, `${e.event_type} is due now, not at ${new Date(Number(e.next_attempt_at)).toISOString()}`);
      near(Date.parse(JSON.parse(e.payload).created_at), at, `${e.event_type} payload created_at`);
    }
  });

  test('a subscription started then is scheduled from the clock’s time; a contract_start before the clock’s date is refused', async () => {
    const { merchant, at } = await clocked();
    const sub = (extra: Json) => ({ contract_name: `plan-${++seq}`, interval: 'month', ...extra });
    const { x } = await authorise(merchant, year + 5, { amount: '9.99', currency: 'EUR', subscription: sub({}) });
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    const s = await gw.runtime.store.db.selectFrom('subscriptions').selectAll().where('recurring_id', '=', x.recurring_id).executeTakeFirstOrThrow();
    // One month after the first payment, on the clock's calendar (28 to 31 days).
    const next = Number(s.next_at);
    assert.ok(next >= at + 28 * DAY && next < at + 32 * DAY, `next deduction ${new Date(next).toISOString()}, clock ${new Date(at).toISOString()}`);
    // A date after the real date but before the clock's is in the past for this account.
    const before_clock = new Date(at - 30 * DAY).toISOString().slice(0, 10);
    const refused = await authorise(merchant, year + 5, { amount: '9.99', currency: 'EUR', subscription: sub({ contract_start: before_clock }) });
    assert.match(String(refused.x.error_message), /contract_start must not be before the first payment's date/, refused.body);
    assert.match(String(refused.x.error_message), new RegExp(`\\(${new Date(at).toISOString().slice(0, 10)}\\)`));
  });

  test('a hosted checkout session created then expires relative to the clock, is open at once, and its card form checks expiry at the clock', async () => {
    const { merchant, at } = await clocked();
    const created = await gw.post(
      '/v1/checkout',
      {
        merchant_id: merchant.merchant_id,
        account_id: merchant.account_id,
        order_no: `CLK-CO-${++seq}-${real.toString(36)}`,
        currency: 'USD',
        amount: '42.00',
        return_url: 'https://shop.example/done',
        cancel_url: 'https://shop.example/cart',
        billing_country: 'US',
      },
      { format: 'form', merchant },
    );
    assert.equal(created.statusCode, 200, created.body);
    const session_id = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/.exec(created.body)?.[1] as string;
    assert.ok(session_id, created.body);
    const { transaction_id } = await gw.runtime.store.db
      .selectFrom('checkout_sessions')
      .select('transaction_id')
      .where('session_id', '=', session_id)
      .executeTakeFirstOrThrow();
    const p = await paymentRow(transaction_id);
    assert.ok(p.expires_at !== null && p.expires_at > at && p.expires_at < at + 2 * DAY, `expires_at ${p.expires_at && new Date(p.expires_at).toISOString()}`);
    // The page is open at once: its deadline is years past the real time, and near the clock's.
    const page = await gw.app.inject({ method: 'GET', url: `/pay/${session_id}` });
    assert.equal(page.statusCode, 200);
    const token = formTokenOf(page.body);
    const pay = (expiry_year: number) =>
      gw.app.inject({
        method: 'POST',
        url: `/pay/${session_id}`,
        payload: new URLSearchParams({
          form_token: token,
          card_number: '4242 4242 4242 4242',
          expiry_month: '12',
          expiry_year: String(expiry_year),
          security_code: '123',
          holder: 'Ana Silva',
        }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    // The card form is checked at the clock's date: valid in real time, expired at the clock.
    const refused = await pay(year + 1);
    assert.equal(refused.statusCode, 400, refused.body.slice(0, 300));
    assert.equal((await paymentRow(transaction_id)).status, 'pending');
    const paid = await pay(year + 5);
    assert.ok(paid.statusCode === 303 || paid.statusCode === 200, `${paid.statusCode}`);
    const after_pay = await paymentRow(transaction_id);
    assert.equal(after_pay.status, 'captured');
    near(after_pay.updated_at, at, 'updated_at of the paid session');
  });

  test('another test account without a clock, and a live account (even with a clock row), keep the real time', async () => {
    await clocked(); // some other account's clock is ahead
    const plain = await gw.newMerchant();
    const { x } = await authorise(plain, year + 1);
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    near((await paymentRow(x.transaction_id)).created_at, real, 'created_at without a clock');

    // Live accounts have no clock (advanceClock refuses them); a row that got there anyway is never read.
    const live = await gw.newMerchant({ mode: 'live' });
    await gw.runtime.store.transaction((tx) =>
      tx
        .insertInto('test_clocks')
        .values({ account_id: live.account_id, now_ms: real + AHEAD, updated_at: real })
        .execute(),
    );
    const res = await gw.generic('POST', '/v1/accounts', await gw.apiKey(live), { country: 'US' });
    assert.equal(res.statusCode, 200, res.body);
    const created_s = (JSON.parse(res.body) as Json).created as number;
    near(created_s * 1000, Math.floor(real / 1000) * 1000, 'a live account’s created');
  });

  test('the generic interface (Bearer key) answers created in the clock’s time', async () => {
    const { merchant, at } = await clocked();
    const res = await gw.generic('POST', '/v1/payments', await gw.apiKey(merchant), {
      amount: 4321,
      currency: 'usd',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: year + 5, cvc: '123' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    const created_s = (JSON.parse(res.body) as Json).created as number;
    near(created_s * 1000, Math.floor(at / 1000) * 1000, 'created');
  });

  test('the portal shows a clocked test account’s dashboard as of the clock’s day; sign-in and the profile keep working', async () => {
    const { merchant, at } = await clocked();
    const { x } = await authorise(merchant, year + 5);
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    const { agent } = await signedInUser(gw, { role: 'viewer', merchant_id: merchant.merchant_id });
    const page = await agent.get('/portal/dashboard?period=7');
    assert.equal(page.status, 200, page.body.slice(0, 500));
    const clockDay = new Date(at).toISOString().slice(0, 10);
    assert.ok(page.body.includes(`<th scope="row">${clockDay}</th>`), `the last day charted is the clock's ${clockDay}`);
    assert.ok(!page.body.includes(`<th scope="row">${new Date(real).toISOString().slice(0, 10)}</th>`), 'not the real day');
    assert.equal((await agent.get('/portal/profile')).status, 200);
  });
});
