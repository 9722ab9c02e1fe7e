// Subscriptions over HTTP (docs/contract.md §16), on SQLite and PostgreSQL: created by the first
// payment's approval with the answer fields and the order record's subscription_result,
// every field checked with a named 400 before anything is charged, contract_name unique
// among active subscriptions, and POST /v1/cancelsubscription in every body format.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { orderOf } from '../test/lifecycle.js';

const JAN_31 = Date.UTC(2027, 0, 31, 10, 30, 0);

let gw: TestGateway;
before(async () => {
  gw = await testGateway({ start_ms: JAN_31 });
});
after(async () => {
  await gw.close();
});

let n = 0;
const monthly = (extra: Record<string, unknown> = {}) => ({ contract_name: `plan-${++n}`, interval: 'month', ...extra });

async function subscribe(sub: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  const body = directPayment(gw.merchant, { amount: '9.99', currency: 'EUR', subscription: sub, ...overrides });
  const res = await gw.post('/v1/authorise', body);
  return { res, x: res.statusCode === 200 ? readXml(res) : undefined, body };
}

async function cancel(recurring_id: string, contract_name: string, format: 'json' | 'form' | 'xml' = 'json') {
  const res = await gw.post(
    '/v1/cancelsubscription',
    { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, recurring_id, contract_name },
    { format },
  );
  const answer = JSON.parse(res.body) as Record<string, string>;
  return { ...answer, status: res.statusCode, cancel_status: answer.cancel_status ?? '', error_message: answer.error_message ?? '' };
}

describe('created by the first payment', () => {
  test('monthly from 31 January: recurring_id, "1 month", next deduction 28 February at the same time; subscription_result in the query', async () => {
    const sub = monthly();
    const { x } = await subscribe(sub);
    assert.ok(x);
    assert.equal(x.result_info, '0000:Success');
    assert.match(x.recurring_id, /^rec_[A-Za-z0-9_-]{24}$/);
    assert.equal(x.contract_name, sub.contract_name);
    assert.equal(x.recurring_deduction_period, '1 month');
    assert.equal(x.recurring_deduction_time, '2027-02-28 10:30:00');
    const order = await orderOf(gw, x.transaction_id);
    assert.deepEqual(order.subscription_result, {
      contract_name: sub.contract_name,
      recurring_deduction_period: '1 month',
      recurring_deduction_time: '2027-02-28',
      recurring_id: x.recurring_id,
      recurring_status: '1',
      subscription_status: 'Active',
      end_reason: '',
    });
    const ev = await gw.runtime.store.db.selectFrom('events').select('payload').where('object_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.equal(JSON.parse(ev.payload).data.subscription_result.recurring_id, x.recurring_id, 'the notification carries it too');
  });

  test('interval_count, contract_start and billing_cycle shape the schedule', async () => {
    const { x } = await subscribe(monthly({ interval: 'week', interval_count: '2', contract_start: '2027-02-05', billing_cycle: 5 }));
    assert.ok(x);
    assert.equal(x.recurring_deduction_period, '2 week');
    assert.equal(x.recurring_deduction_time, '2027-02-05 10:30:00');
  });

  test('a declined first payment and a payment waiting for 3-D Secure create none (yet)', async () => {
    const declined = await subscribe(monthly(), { card: '4000000000000002' });
    assert.equal(declined.x?.recurring_id, '');
    const waiting = await subscribe(monthly(), { card: '4000000000003220' });
    assert.equal(waiting.x?.order_status, '2');
    assert.equal(waiting.x?.recurring_id, '');
    const rows = await gw.runtime.store.db
      .selectFrom('subscriptions')
      .select('recurring_id')
      .where('first_transaction_id', 'in', [declined.x?.transaction_id, waiting.x?.transaction_id])
      .execute();
    assert.deepEqual(rows, []);
  });

  test('after a passed 3-D Secure challenge, and after a held payment is accepted, the subscription exists', async () => {
    const sub = monthly();
    const waiting = await subscribe(sub, { card: '4000000000003220' });
    assert.ok(waiting.x?.threeds_url);
    const path = new URL(waiting.x.threeds_url).pathname;
    const page = await gw.app.inject({ method: 'GET', url: path });
    const token = /name="form_token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    await gw.app.inject({
      method: 'POST',
      url: path,
      payload: new URLSearchParams({ form_token: token, outcome: 'complete' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const order = await orderOf(gw, waiting.x.transaction_id);
    assert.equal(order.payment_status, '3000');
    assert.equal(order.subscription_result.contract_name, sub.contract_name);
    assert.equal(order.subscription_result.recurring_status, '1');

    const held = await subscribe(monthly(), { card: '4000000000009235' });
    assert.equal(held.x?.order_status, '3');
    const r = await gw.post('/v1/review', {
      merchant_id: gw.merchant.merchant_id,
      account_id: gw.merchant.account_id,
      review_orders: [{ transaction_id: held.x?.transaction_id, order_no: held.body.order_no, decision: 'ACCEPT', note: '' }],
    });
    assert.equal(JSON.parse(r.body).review_orders[0].review_status, '1', r.body);
    assert.equal((await orderOf(gw, held.x?.transaction_id)).subscription_result.recurring_status, '1');
  });

  test('contract_name is unique among the account’s active subscriptions; free again once cancelled', async () => {
    const sub = monthly();
    const first = await subscribe(sub);
    const again = await subscribe(sub);
    assert.equal(again.res.statusCode, 400);
    assert.match(again.res.body, /subscription\.contract_name/);
    const stored = await gw.runtime.store.db
      .selectFrom('payments')
      .select('transaction_id')
      .where('order_no', '=', again.body.order_no as string)
      .execute();
    assert.deepEqual(stored, [], 'nothing charged');
    assert.equal((await cancel(first.x?.recurring_id, sub.contract_name)).cancel_status, '1');
    assert.equal((await subscribe(sub)).res.statusCode, 200);
  });
});

describe('one contract_name, several first payments at once', () => {
  test('exactly one creates it; the others are refused 400 naming subscription.contract_name, nothing stored for them', async () => {
    const sub = monthly();
    const results = await Promise.all([1, 2, 3, 4].map(() => subscribe(sub)));
    const ok = results.filter((r) => r.res.statusCode === 200);
    const refused = results.filter((r) => r.res.statusCode !== 200);
    assert.equal(ok.length, 1, results.map((r) => `${r.res.statusCode} ${r.res.body.slice(0, 200)}`).join('\n'));
    assert.ok(ok[0]?.x?.recurring_id);
    for (const r of refused) {
      assert.equal(r.res.statusCode, 400, r.res.body);
      assert.match(r.res.body, /subscription\.contract_name/);
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', r.body.order_no as string)
        .execute();
      assert.deepEqual(stored, []);
    }
  });
});

describe('bad subscription fields: 400 naming the field, nothing charged', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no contract_name', { contract_name: undefined, interval: 'month' }, 'subscription.contract_name'],
    ['no interval', { contract_name: 'x-no-interval' }, 'subscription.interval'],
    ['a fortnight', { contract_name: 'x', interval: 'fortnight' }, 'subscription.interval'],
    ['interval_count 0', { contract_name: 'x', interval: 'day', interval_count: '0' }, 'subscription.interval_count'],
    ['interval_count 366', { contract_name: 'x', interval: 'day', interval_count: '366' }, 'subscription.interval_count'],
    ['30 February', { contract_name: 'x', interval: 'month', contract_start: '2027-02-30' }, 'subscription.contract_start'],
    ['end before start', { contract_name: 'x', interval: 'month', contract_start: '2027-05-01', contract_end: '2027-04-01' }, 'subscription.contract_end'],
    ['promotion longer than the contract', { contract_name: 'x', interval: 'month', billing_cycle: 2, promotion_cycle: 3 }, 'subscription.promotion_cycle'],
    ['contract_amount in the wrong precision', { contract_name: 'x', interval: 'month', contract_amount: '5.5' }, 'subscription.contract_amount'],
  ];
  for (const [name, sub, field] of cases) {
    test(`${name}: ${field}`, async () => {
      const clean = Object.fromEntries(Object.entries(sub).filter(([, v]) => v !== undefined));
      const { res, body } = await subscribe(clean);
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.body.includes(field), res.body);
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', body.order_no as string)
        .execute();
      assert.deepEqual(stored, []);
    });
  }
});

describe('POST /v1/cancelsubscription', () => {
  test('Inactived at once; again is 1 (safe to retry); the query shows recurring_status 0; XML and form bodies too', async () => {
    const sub = monthly();
    const { x } = await subscribe(sub);
    assert.ok(x);
    const c = await cancel(x.recurring_id, sub.contract_name, 'xml');
    assert.equal(c.status, 200);
    assert.equal(c.cancel_status, '1');
    assert.equal(c.error_message, '');
    assert.equal((await cancel(x.recurring_id, sub.contract_name, 'form')).cancel_status, '1');
    const order = await orderOf(gw, x.transaction_id);
    assert.equal(order.subscription_result.recurring_status, '0');
    assert.equal(order.subscription_result.recurring_deduction_time, '');
    const row = await gw.runtime.store.db
      .selectFrom('subscriptions')
      .select(['status', 'next_at'])
      .where('recurring_id', '=', x.recurring_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row, next_at: row.next_at === null ? null : Number(row.next_at) }, { status: 'Inactived', next_at: null });
  });

  test('an unknown pair, or another account’s subscription: cancel_status 0, 0404', async () => {
    const sub = monthly();
    const { x } = await subscribe(sub);
    assert.ok(x);
    const wrongName = await cancel(x.recurring_id, 'not-its-name');
    assert.deepEqual([wrongName.cancel_status, wrongName.error_message], ['0', '0404:Record not found']);
    const other = await gw.newMerchant();
    const res = await gw.post(
      '/v1/cancelsubscription',
      { merchant_id: other.merchant_id, account_id: other.account_id, recurring_id: x.recurring_id, contract_name: sub.contract_name },
      { merchant: other },
    );
    assert.equal(JSON.parse(res.body).cancel_status, '0');
    assert.equal((await orderOf(gw, x.transaction_id)).subscription_result.recurring_status, '1');
  });

  test('the client library: cancelSubscription answers verified, 1 then 1 again, 0 for an unknown pair', async () => {
    const sub = monthly();
    const { x } = await subscribe(sub);
    assert.ok(x);
    const client = gw.client();
    const first = await client.cancelSubscription({ recurring_id: x.recurring_id, contract_name: sub.contract_name });
    assert.deepEqual([first.cancel_status, first.error_message, first.recurring_id], ['1', '', x.recurring_id]);
    assert.equal((await client.cancelSubscription({ recurring_id: x.recurring_id, contract_name: sub.contract_name })).cancel_status, '1');
    const unknown = await client.cancelSubscription({ recurring_id: 'rec_unknown', contract_name: sub.contract_name });
    assert.deepEqual([unknown.cancel_status, unknown.error_message], ['0', '0404:Record not found']);
  });

  test('missing fields and unknown fields: 400 naming them', async () => {
    const ids = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id };
    const a = await gw.post('/v1/cancelsubscription', { ...ids, contract_name: 'x' });
    assert.equal(a.statusCode, 400);
    assert.match(a.body, /recurring_id/);
    const b = await gw.post('/v1/cancelsubscription', { ...ids, recurring_id: 'r', contract_name: 'x', extra: '1' });
    assert.equal(b.statusCode, 400);
    assert.match(b.body, /extra/);
  });
});
