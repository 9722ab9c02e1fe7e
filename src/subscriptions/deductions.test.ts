// Deductions, dunning, completion, cancel and test clocks (docs/contract.md §16), on SQLite and
// PostgreSQL: subscriptions made through the API, time moved with the test clock, every
// charge read back through the order query, the events and the ledger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { verifyLedger } from '../ledger/verify.js';
import { startReceiver } from '../notifications/test-receiver.js';
import { DeliveryWorker } from '../notifications/worker.js';
import { ScriptedProcessor } from '../processors/testing.js';
import { advanceClock, ClockError, clockOf } from '../scheduler/clock.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { runCharge } from './deductions.js';

const JAN_31 = Date.UTC(2027, 0, 31, 10, 30, 0);
const DAY = 86_400_000;

let gw: TestGateway;
let scheduler: Scheduler;
before(async () => {
  gw = await testGateway({ start_ms: JAN_31 });
  scheduler = createScheduler(gw.runtime);
});
after(async () => {
  await gw.close();
});

type Json = Record<string, any>;
let seq = 0;

/** A fresh test merchant per test: each has its own clock. */
async function subscribe(sub: Json, overrides: Json = {}) {
  const merchant = await gw.newMerchant();
  const body = directPayment(merchant, {
    amount: '9.99',
    currency: 'EUR',
    notify_url: 'http://127.0.0.1:9/hook',
    subscription: { contract_name: `plan-${++seq}`, interval: 'month', ...sub },
    ...overrides,
  });
  const x = readXml(await gw.post('/v1/authorise', body, { merchant }));
  assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
  assert.ok(x.recurring_id);
  return { merchant, x, order_no: body.order_no as string, contract_name: (body.subscription as Json).contract_name as string };
}

const advance = (account_id: string, to_ms: number) => advanceClock(gw.runtime.store, scheduler, account_id, to_ms, gw.clock.now);

async function deductions(account_id: string, first_order_no: string) {
  const rows = await gw.runtime.store.db
    .selectFrom('payments')
    .selectAll()
    .where('account_id', '=', account_id)
    .where('kind', '=', 'recurring')
    .where('order_no', 'like', `${first_order_no}-R%`)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), amount_minor: Number(r.amount_minor) }));
}

async function query(merchant: Json, order_nos: string[]) {
  const res = await gw.post(
    '/v1/retrievalTrans',
    { merchant_id: merchant.merchant_id, account_id: merchant.account_id, order_nos: order_nos.join(',') },
    { merchant: merchant as any },
  );
  assert.equal(res.statusCode, 200, res.body);
  return (JSON.parse(res.body) as Json).orders_list as Json[];
}

async function events(account_id: string) {
  const rows = await gw.runtime.store.db
    .selectFrom('events')
    .select(['event_type', 'payload', 'created_at'])
    .where('account_id', '=', account_id)
    .orderBy('created_at')
    .orderBy('event_id')
    .execute();
  return rows.map((r) => ({ type: r.event_type, data: JSON.parse(r.payload).data as Json }));
}

async function subscriptionRow(recurring_id: string) {
  return gw.runtime.store.db.selectFrom('subscriptions').selectAll().where('recurring_id', '=', recurring_id).executeTakeFirstOrThrow();
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 16);

describe('deductions on schedule', () => {
  test('monthly from 31 January: charged on 28 February, 31 March and 30 April, each a new order with its query record, event and postings', async () => {
    const { merchant, x, order_no } = await subscribe({});
    const r = await advance(merchant.account_id, Date.UTC(2027, 4, 1));
    assert.equal(r.jobs, 3);
    const charged = await deductions(merchant.account_id, order_no);
    assert.deepEqual(
      charged.map((p) => [p.order_no, day(p.created_at), p.status, p.amount_minor]),
      [
        [`${order_no}-R1`, '2027-02-28T10:30', 'captured', 999],
        [`${order_no}-R2`, '2027-03-31T10:30', 'captured', 999],
        [`${order_no}-R3`, '2027-04-30T10:30', 'captured', 999],
      ],
    );
    const orders = await query(
      merchant,
      charged.map((p) => p.order_no),
    );
    assert.deepEqual(
      orders.map((o) => [o.order_no, o.payment_status, o.transaction_date, o.card, o.subscription_result.recurring_id]),
      [
        [`${order_no}-R1`, '3000', '20270228103000', '424242******4242', x.recurring_id],
        [`${order_no}-R2`, '3000', '20270331103000', '424242******4242', x.recurring_id],
        [`${order_no}-R3`, '3000', '20270430103000', '424242******4242', x.recurring_id],
      ],
    );
    assert.equal(orders[2]?.subscription_result.recurring_deduction_time, '2027-05-31');
    const ev = (await events(merchant.account_id)).filter((e) => e.type.startsWith('subscription.'));
    assert.deepEqual(
      ev.map((e) => [e.type, e.data.order_no]),
      [1, 2, 3].map((n) => ['subscription.charged', `${order_no}-R${n}`]),
    );
    const postings = await gw.runtime.store.db
      .selectFrom('ledger_postings')
      .select('transaction_id')
      .where(
        'transaction_id',
        'in',
        charged.map((p) => p.transaction_id),
      )
      .execute();
    assert.ok(postings.length >= 3, 'each deduction is ledgered');
    assert.equal((await verifyLedger(gw.runtime.store.db)).ok, true);
    // The notifications of what the clock ran are due now, not when the real time reaches
    // the clock (they waited a month each: issue 36 item 1); their payloads keep the clock's time.
    const outbox = await gw.runtime.store.db
      .selectFrom('events')
      .select(['event_type', 'status', 'attempts', 'next_attempt_at', 'payload'])
      .where('account_id', '=', merchant.account_id)
      .where('event_type', 'like', 'subscription.%')
      .execute();
    assert.equal(outbox.length, 3);
    for (const e of outbox) {
      assert.equal(e.status, 'pending');
      assert.ok(Number(e.next_attempt_at) <= gw.clock.now, `${e.event_type} is due now, not at ${new Date(Number(e.next_attempt_at)).toISOString()}`);
      assert.ok(JSON.parse(e.payload).created_at >= '2027-02-28', 'the payload keeps the clock time');
    }
    // The clock stands where it was moved; a second move runs nothing twice.
    assert.equal(await clockOf(gw.runtime.store, merchant.account_id, gw.clock.now), Date.UTC(2027, 4, 1));
    assert.equal((await advance(merchant.account_id, Date.UTC(2027, 4, 2))).jobs, 0);
    assert.equal((await deductions(merchant.account_id, order_no)).length, 3);
  });

  test('promotion_cycle 2: the first payment and the first deduction at the promotional amount, then contract_amount', async () => {
    const { merchant, order_no } = await subscribe({ promotion_cycle: 2, contract_amount: '19.99' }, { amount: '1.00' });
    await advance(merchant.account_id, Date.UTC(2027, 4, 1));
    assert.deepEqual(
      (await deductions(merchant.account_id, order_no)).map((p) => p.amount_minor),
      [100, 1999, 1999],
    );
  });

  test('billing_cycle 3: completes after three charges (the first payment and two deductions), no event beyond', async () => {
    const { merchant, x, order_no } = await subscribe({ billing_cycle: 3 });
    await advance(merchant.account_id, Date.UTC(2028, 0, 1));
    const charged = await deductions(merchant.account_id, order_no);
    assert.equal(charged.length, 2);
    const s = await subscriptionRow(x.recurring_id);
    assert.deepEqual([s.status, s.next_at, s.end_reason, s.charged_count], ['Completed', null, 'billing_cycle reached', 2]);
    const [last] = await query(merchant, [`${order_no}-R2`]);
    assert.equal(last?.subscription_result.recurring_status, '0');
    assert.equal(last?.subscription_result.subscription_status, 'Completed');
    const jobs = await gw.runtime.store.db.selectFrom('scheduled_jobs').select('status').where('account_id', '=', merchant.account_id).execute();
    assert.ok(
      jobs.every((j) => j.status === 'done'),
      'nothing left scheduled',
    );
  });

  test('contract_end: no deduction after it; Completed', async () => {
    const { merchant, x, order_no } = await subscribe({ interval: 'week', contract_end: '2027-02-20' });
    await advance(merchant.account_id, Date.UTC(2027, 5, 1));
    assert.deepEqual(
      (await deductions(merchant.account_id, order_no)).map((p) => day(p.created_at)),
      ['2027-02-07T10:30', '2027-02-14T10:30'],
    );
    assert.equal((await subscriptionRow(x.recurring_id)).status, 'Completed');
  });
});

describe('after 3-D Secure', () => {
  test('4000000000003220: the first payment passes its challenge, the deductions are charged without one', async () => {
    const merchant = await gw.newMerchant();
    const body = directPayment(merchant, { card: '4000000000003220', subscription: { contract_name: 'sca', interval: 'month' } });
    const waiting = readXml(await gw.post('/v1/authorise', body, { merchant }));
    assert.equal(waiting.order_status, '2');
    const path = new URL(waiting.threeds_url).pathname;
    const page = await gw.app.inject({ method: 'GET', url: path });
    const token = /name="form_token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    await gw.app.inject({
      method: 'POST',
      url: path,
      payload: new URLSearchParams({ form_token: token, outcome: 'complete' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await advance(merchant.account_id, Date.UTC(2027, 3, 1));
    assert.deepEqual(
      (await deductions(merchant.account_id, body.order_no as string)).map((p) => [p.order_no, p.status]),
      [
        [`${body.order_no}-R1`, 'captured'],
        [`${body.order_no}-R2`, 'captured'],
      ],
    );
  });
});

describe('dunning', () => {
  test('4000000000000341: the first payment succeeds, the deduction declines, PastDue, retried on days 1, 3 and 5, then Inactived with subscription.cancelled', async () => {
    const { merchant, x, order_no } = await subscribe({}, { card: '4000000000000341' });
    await advance(merchant.account_id, Date.UTC(2027, 1, 28, 12));
    let s = await subscriptionRow(x.recurring_id);
    assert.deepEqual([s.status, s.retry_count, Number(s.next_at)], ['PastDue', 1, Date.UTC(2027, 2, 1, 10, 30)]);
    const [r1] = await query(merchant, [`${order_no}-R1`]);
    assert.equal(r1?.payment_status, '6000');
    assert.equal(r1?.result_info, '1002:Card declined');
    assert.deepEqual([r1?.subscription_result.recurring_status, r1?.subscription_result.subscription_status], ['1', 'PastDue']);

    await advance(merchant.account_id, Date.UTC(2027, 3, 1));
    const attempts = await deductions(merchant.account_id, order_no);
    assert.deepEqual(
      attempts.map((p) => [p.order_no, day(p.created_at), p.status, p.result_code]),
      [
        [`${order_no}-R1`, '2027-02-28T10:30', 'declined', '1002'],
        [`${order_no}-R2`, '2027-03-01T10:30', 'declined', '1002'],
        [`${order_no}-R3`, '2027-03-03T10:30', 'declined', '1002'],
        [`${order_no}-R4`, '2027-03-05T10:30', 'declined', '1002'],
      ],
    );
    s = await subscriptionRow(x.recurring_id);
    assert.equal(s.status, 'Inactived');
    assert.match(s.end_reason, /payment failed: 1002:Card declined/);
    const ev = (await events(merchant.account_id)).filter((e) => e.type.startsWith('subscription.'));
    // The last failure and the end are one change: both events, written together.
    assert.deepEqual(ev.map((e) => e.type).sort(), [
      'subscription.cancelled',
      'subscription.failed',
      'subscription.failed',
      'subscription.failed',
      'subscription.failed',
    ]);
    const cancelled = ev.find((e) => e.type === 'subscription.cancelled')?.data as Json;
    assert.equal(cancelled.order_no, `${order_no}-R4`);
    assert.equal(cancelled.subscription_result.recurring_status, '0');
    assert.match(cancelled.subscription_result.end_reason, /payment failed/);
    assert.equal((await verifyLedger(gw.runtime.store.db)).ok, true);
  });

  test('a retry that succeeds brings it back to Active, and the next period is charged on its own date', async () => {
    const { merchant, x, order_no } = await subscribe({});
    await advance(merchant.account_id, Date.UTC(2027, 1, 27));
    // The stored card is swapped for the decline-on-MIT card: the deduction fails once…
    const s0 = await subscriptionRow(x.recurring_id);
    const card = await gw.runtime.store.db.selectFrom('cards').selectAll().where('card_id', '=', s0.card_id).executeTakeFirstOrThrow();
    const keyring = gw.runtime.keyring;
    const setPan = (pan_enc: string) =>
      gw.runtime.store.transaction((tx) => tx.updateTable('cards').set({ pan_enc }).where('card_id', '=', card.card_id).execute());
    await setPan(keyring.encrypt('4000000000000341'));
    await advance(merchant.account_id, Date.UTC(2027, 1, 28, 12));
    assert.equal((await subscriptionRow(x.recurring_id)).status, 'PastDue');
    // …and is good again before the first retry.
    await setPan(card.pan_enc);
    await advance(merchant.account_id, Date.UTC(2027, 3, 1));
    const attempts = await deductions(merchant.account_id, order_no);
    assert.deepEqual(
      attempts.map((p) => [p.order_no, day(p.created_at), p.status]),
      [
        [`${order_no}-R1`, '2027-02-28T10:30', 'declined'],
        [`${order_no}-R2`, '2027-03-01T10:30', 'captured'],
        [`${order_no}-R3`, '2027-03-31T10:30', 'captured'],
      ],
    );
    const s = await subscriptionRow(x.recurring_id);
    assert.deepEqual([s.status, s.retry_count, s.charged_count], ['Active', 0, 2]);
  });
});

describe('cancel and exactly once', () => {
  test('cancel stops every later charge and sends subscription.cancelled', async () => {
    const { merchant, x, order_no, contract_name } = await subscribe({ interval: 'day' });
    await advance(merchant.account_id, JAN_31 + 2 * DAY + 1);
    assert.equal((await deductions(merchant.account_id, order_no)).length, 2);
    const res = await gw.post(
      '/v1/cancelsubscription',
      { merchant_id: merchant.merchant_id, account_id: merchant.account_id, recurring_id: x.recurring_id, contract_name },
      { merchant, format: 'xml' },
    );
    assert.equal(JSON.parse(res.body).cancel_status, '1');
    await advance(merchant.account_id, JAN_31 + 400 * DAY);
    assert.equal((await deductions(merchant.account_id, order_no)).length, 2, 'nothing after the cancel');
    const ev = (await events(merchant.account_id)).filter((e) => e.type === 'subscription.cancelled');
    assert.equal(ev.length, 1);
    assert.equal(ev[0]?.data.subscription_result.end_reason, 'cancelled by the merchant');
    assert.equal(ev[0]?.data.order_no, order_no, 'the order that created it');
  });

  test('a deduction attempt runs once: a second run of the same attempt finds it moved on and charges nothing', async () => {
    const { merchant, x, order_no } = await subscribe({});
    const payload = { recurring_id: x.recurring_id, n: 1, k: 0 };
    const at = Date.UTC(2027, 1, 28, 10, 30);
    const first = await runCharge(gw.runtime.deps, payload, at);
    const again = await runCharge(gw.runtime.deps, payload, at);
    assert.deepEqual([first.outcome, again.outcome], ['charged', 'stale']);
    // The scheduler's own job for that attempt then finds nothing to do either.
    await advance(merchant.account_id, Date.UTC(2027, 2, 1));
    assert.equal((await deductions(merchant.account_id, order_no)).length, 1);
  });

  for (const paid of [true, false]) {
    test(`a cancel while the deduction is at the processor: its ${paid ? 'approval is counted and notified (subscription.charged)' : 'decline is notified (subscription.failed)'}, the subscription stays Inactived, nothing retried`, async () => {
      const { merchant, x, order_no, contract_name } = await subscribe({});
      const served = gw.runtime.deps.processorFor;
      const scripted = new ScriptedProcessor();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let sent: () => void = () => {};
      const atProcessor = new Promise<void>((r) => {
        sent = r;
      });
      scripted.answer = async () => {
        sent();
        await held;
        return paid ? { kind: 'approved', reference: 'PSP-late' } : { kind: 'declined', code: '1001', reference: 'PSP-late' };
      };
      gw.runtime.deps.processorFor = () => scripted;
      try {
        const charging = runCharge(gw.runtime.deps, { recurring_id: x.recurring_id, n: 1, k: 0 }, Date.UTC(2027, 1, 28, 10, 30));
        await atProcessor;
        const res = await gw.post(
          '/v1/cancelsubscription',
          { merchant_id: merchant.merchant_id, account_id: merchant.account_id, recurring_id: x.recurring_id, contract_name },
          { merchant, format: 'json' },
        );
        assert.equal(JSON.parse(res.body).cancel_status, '1', 'the cancel does not wait for the processor');
        release();
        assert.equal((await charging).outcome, 'ended');
      } finally {
        gw.runtime.deps.processorFor = served;
      }
      const [d] = await deductions(merchant.account_id, order_no);
      assert.equal(d?.status, paid ? 'captured' : 'declined');
      const sub = await gw.runtime.store.db.selectFrom('subscriptions').selectAll().where('recurring_id', '=', x.recurring_id).executeTakeFirstOrThrow();
      assert.deepEqual([sub.status, sub.charge_seq, sub.charged_count, sub.retry_count], ['Inactived', 1, paid ? 1 : 0, 0]);
      const types = (await events(merchant.account_id)).map((e) => e.type).filter((t) => t.startsWith('subscription.'));
      assert.deepEqual(types, ['subscription.cancelled', paid ? 'subscription.charged' : 'subscription.failed']);
      const jobs = await gw.runtime.store.db.selectFrom('scheduled_jobs').select('job_key').where('job_key', 'like', `sub:${x.recurring_id}:%`).execute();
      assert.deepEqual(jobs.map((j) => j.job_key).sort(), [`sub:${x.recurring_id}:1:0`], 'no retry and no next deduction');
      assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, []);
    });
  }

  test('a merchant order already named <order_no>-R1 is left alone: the deduction takes the next number', async () => {
    const { merchant, order_no } = await subscribe({});
    const taken = readXml(await gw.post('/v1/authorise', directPayment(merchant, { order_no: `${order_no}-R1` }), { merchant }));
    assert.equal(taken.result_info, '0000:Success');
    await advance(merchant.account_id, Date.UTC(2027, 2, 1));
    assert.deepEqual(
      (await deductions(merchant.account_id, order_no)).map((p) => p.order_no),
      [`${order_no}-R2`],
    );
  });
});

describe('test clocks notify', () => {
  test('a merchant test through the client library receives subscription.charged, .failed and .cancelled from one clock advance, at once', async () => {
    const receiver = await startReceiver();
    try {
      const ok = await subscribe({}, { notify_url: receiver.url });
      const declining = await subscribe({}, { notify_url: receiver.url, card: '4000000000000341' });
      // One advance per account: a month and a week covers the charge, and the decline with its three retries and the end.
      for (const m of [ok.merchant, declining.merchant]) await advance(m.account_id, Date.UTC(2027, 2, 7));
      const worker = new DeliveryWorker({
        store: gw.runtime.store,
        merchants: gw.runtime.merchants,
        allow_private: true,
        schedule_ms: [1_000],
        timeout_ms: 10_000,
        now: () => gw.clock.now, // the real time stands still: nothing here waits for it to reach the clock
      });
      await worker.drain();
      const received = (m: Json) =>
        receiver.received
          .map((r) => {
            try {
              return gw.client(m as never).notifications.verify(r.body, r.headers as Record<string, string>); // signed at the real time
            } catch {
              return null; // another merchant’s delivery
            }
          })
          .filter((e) => e?.event_type.startsWith('subscription.'))
          .map((e) => e?.event_type);
      assert.deepEqual(received(ok.merchant), ['subscription.charged']);
      assert.deepEqual(received(declining.merchant).sort(), [
        'subscription.cancelled',
        'subscription.failed',
        'subscription.failed',
        'subscription.failed',
        'subscription.failed',
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe('test clocks', () => {
  test('refused for a live account and backwards; --by moves from where the clock stands', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    await assert.rejects(advance(live.account_id, JAN_31 + DAY), (e: unknown) => e instanceof ClockError && /live/.test(e.message));
    const { merchant } = await subscribe({ interval: 'day' });
    await advance(merchant.account_id, JAN_31 + 5 * DAY);
    await assert.rejects(advance(merchant.account_id, JAN_31 + DAY), (e: unknown) => e instanceof ClockError && /forward/.test(e.message));
  });

  test('expiries of the account run as of the clock: a manual authorisation lapses after 7 days, another account’s does not', async () => {
    const a = await gw.newMerchant({ capture_method: 'manual' });
    const b = await gw.newMerchant({ capture_method: 'manual' });
    const pa = readXml(await gw.post('/v1/authorise', directPayment(a), { merchant: a }));
    const pb = readXml(await gw.post('/v1/authorise', directPayment(b), { merchant: b }));
    await advance(a.account_id, JAN_31 + 8 * DAY);
    const status = async (t: string) =>
      (await gw.runtime.store.db.selectFrom('payments').select('status').where('transaction_id', '=', t).executeTakeFirstOrThrow()).status;
    assert.equal(await status(pa.transaction_id), 'expired');
    assert.equal(await status(pb.transaction_id), 'authorised');
  });
});
