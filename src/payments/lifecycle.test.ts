// Capture, cancel and expiry through the public API (interface.md "Capture/Cancel a
// transaction"; docs/contract.md §4, §5, §7), on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../client/index.js';
import { verifyLedger } from '../ledger/verify.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { cancelBatch, captureBatch, item, orderOf, type Paid, pay, refundBatch } from '../test/lifecycle.js';
import { expireDue } from './expiry.js';
import { MANUAL_CAPTURE_WINDOW_MS } from './states.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  const report = await verifyLedger(gw.runtime.store.db);
  assert.deepEqual(report.problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});

/** A payment in the given status, reached through the public API. */
async function inStatus(status: string): Promise<Paid> {
  switch (status) {
    case 'authorised':
      return pay(gw, { manual: true });
    case 'pending':
      return pay(gw, { card: '4000000000003220' });
    case 'declined':
      return pay(gw, { card: '4000000000000002' });
    case 'captured':
      return pay(gw);
    case 'partially_refunded': {
      const p = await pay(gw);
      await refundBatch(gw, [item(p, { refund_amount: '1.00' })]);
      return p;
    }
    case 'refunded': {
      const p = await pay(gw);
      await refundBatch(gw, [item(p, { refund_amount: p.amount })]);
      return p;
    }
    case 'cancelled': {
      const p = await pay(gw, { manual: true });
      await cancelBatch(gw, [item(p)]);
      return p;
    }
    case 'expired': {
      const p = await pay(gw, { manual: true });
      gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS + 1);
      await expireDue(gw.runtime.deps, gw.clock.now);
      return p;
    }
    default:
      throw new Error(status);
  }
}

describe('capture and cancel from every status (transition table over HTTP)', () => {
  // [status, capture outcome, cancel outcome]: '1' or the error code expected.
  const table: Array<[string, string, string]> = [
    ['authorised', '1', '1'],
    ['pending', '1012', '1'],
    ['declined', '1012', '1012'],
    ['captured', '1012', '1012'],
    ['partially_refunded', '1012', '1012'],
    ['refunded', '1012', '1012'],
    ['cancelled', '1012', '1012'],
    ['expired', '1015', '1015'],
  ];
  for (const [status, captureOutcome, cancelOutcome] of table) {
    test(`capture of a ${status} payment: ${captureOutcome === '1' ? 'succeeds' : captureOutcome}`, async () => {
      const p = await inStatus(status);
      const r = (await captureBatch(gw, [item(p)])).capture_orders[0];
      if (captureOutcome === '1') assert.deepEqual([r.capture_status, r.error_message], ['1', '']);
      else {
        assert.equal(r.capture_status, '0');
        assert.ok(r.error_message.startsWith(`${captureOutcome}:`), r.error_message);
      }
    });
    test(`cancel of a ${status} payment: ${cancelOutcome === '1' ? 'succeeds' : cancelOutcome}`, async () => {
      const p = await inStatus(status);
      const r = (await cancelBatch(gw, [item(p)])).cancel_orders[0];
      if (cancelOutcome === '1') assert.deepEqual([r.cancel_status, r.error_message], ['1', '']);
      else {
        assert.equal(r.cancel_status, '0');
        assert.ok(r.error_message.startsWith(`${cancelOutcome}:`), r.error_message);
      }
    });
  }
});

describe('capture', () => {
  test('a full capture: payment_status 3000, the answer has the spec fields, signed', async () => {
    const p = await pay(gw, { manual: true });
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');
    const res = await captureBatch(gw, [item(p)]);
    assert.equal(res.status, 200);
    assert.deepEqual(
      Object.keys(res).sort(),
      ['account_id', 'capture_orders', 'encryption_data', 'merchant_id', 'return_message', 'return_status', 'status'].sort(),
    );
    assert.equal(res.return_status, '1');
    assert.deepEqual(res.capture_orders, [
      { amount: '10.00', capture_status: '1', currency: 'USD', error_message: '', order_no: p.order_no, transaction_id: p.transaction_id },
    ]);
    const o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.captured_amount, o.refunded_amount], ['3000', '10.00', '0.00']);
  });

  test('a partial capture takes part of the authorisation and releases the rest; a second capture is refused', async () => {
    const p = await pay(gw, { manual: true, amount: '50.00' });
    const r = (await captureBatch(gw, [item(p, { amount: '20.00' })])).capture_orders[0];
    assert.equal(r.capture_status, '1', r.error_message);
    const o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.amount, o.captured_amount], ['3000', '50.00', '20.00']);
    const again = (await captureBatch(gw, [item(p, { amount: '10.00' })])).capture_orders[0];
    assert.equal(again.capture_status, '0');
    assert.match(again.error_message, /^1012:.*captured once/);
  });

  test('more than authorised, zero, and a wrong amount format fail that item only', async () => {
    const p = await pay(gw, { manual: true });
    const ok = await pay(gw, { manual: true });
    const res = await captureBatch(gw, [item(p, { amount: '10.01' }), item(p, { amount: '0.00' }), item(p, { amount: '5' }), item(ok)]);
    const [over, zero, format, good] = res.capture_orders;
    assert.match(over.error_message, /^1013:/);
    assert.match(zero.error_message, /^0400:.*greater than zero/);
    assert.match(format.error_message, /^0400:.*amount must be a decimal with exactly 2 decimal places/);
    assert.equal(good.capture_status, '1');
  });
});

describe('per-item checks (the item must match its transaction)', () => {
  test('each mismatch fails its own item with a message that says why, in request order', async () => {
    const p = await pay(gw, { manual: true });
    const other = await gw.newMerchant();
    const theirs = await pay(gw, { manual: true, merchant: other });
    const res = await cancelBatch(gw, [
      item(p, { order_no: 'NOT-IT' }),
      item(p, { currency: 'EUR' }),
      item(p, { amount: '9.99' }),
      item(p, { transaction_id: 'NOPE' }),
      item(theirs),
      { order_no: p.order_no, currency: 'USD', amount: '10.00' },
      item(p),
    ]);
    assert.equal(res.return_status, '1');
    const msgs = res.cancel_orders.map((r: any) => r.error_message);
    assert.match(msgs[0], /^1014:.*order_no NOT-IT/);
    assert.match(msgs[1], /^1014:.*currency EUR/);
    assert.match(msgs[2], /^1014:.*amount 9\.99 is not the order amount 10\.00/);
    assert.match(msgs[3], /^0404:.*NOPE/);
    assert.match(msgs[4], /^0404:/, 'another merchant’s transaction is not found');
    assert.match(msgs[5], /^0400:.*transaction_id is required/);
    assert.equal(res.cancel_orders[6].cancel_status, '1');
    assert.deepEqual(
      res.cancel_orders.map((r: any) => r.order_no),
      [
        ...Array(4)
          .fill(p.order_no)
          .map((n, i) => (i === 0 ? 'NOT-IT' : n)),
        theirs.order_no,
        p.order_no,
        p.order_no,
      ],
    );
  });
});

describe('batch limits (interface.md "Limits")', () => {
  for (const [path, field] of [
    ['/v1/capture', 'capture_orders'],
    ['/v1/cancel', 'cancel_orders'],
    ['/v1/refund', 'refund_orders'],
  ] as const) {
    test(`${path}: 51 orders or none are refused whole with HTTP 400`, async () => {
      const one = { transaction_id: 'T', order_no: 'O', currency: 'USD', amount: '1.00' };
      for (const items of [Array(51).fill(one), []]) {
        const res = await gw.post(path, { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, [field]: items });
        assert.equal(res.statusCode, 400);
        const b = JSON.parse(res.body);
        assert.equal(b.return_status, '0');
        assert.match(b.error_message, new RegExp(field));
      }
    });
  }

  test('50 captures in one batch all succeed, in request order', async () => {
    const paid = await Promise.all(Array.from({ length: 50 }, () => pay(gw, { manual: true })));
    const res = await captureBatch(
      gw,
      paid.map((p) => item(p)),
    );
    assert.equal(res.capture_orders.length, 50);
    assert.deepEqual(
      res.capture_orders.map((r: any) => r.transaction_id),
      paid.map((p) => p.transaction_id),
    );
    assert.ok(res.capture_orders.every((r: any) => r.capture_status === '1'));
  });

  test('form and XML bodies are read too (docs/contract.md §1), a one-item list included', async () => {
    for (const format of ['form', 'xml'] as const) {
      const p = await pay(gw, { manual: true });
      const body: Record<string, unknown> = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, capture_orders: [item(p)] };
      // An XML body is signed as the gateway reads it back: one element is a member (docs/contract.md
      // §2). The harness signs through the client's signBody(…, format), which does just that.
      const res = await gw.post('/v1/capture', body, { format });
      assert.equal(JSON.parse(res.body).capture_orders[0].capture_status, '1', res.body);
      // Signed as JSON but sent as XML, the same body is refused: the shape matters.
      const q = await pay(gw, { manual: true });
      const asJson = { ...body, capture_orders: [item(q)], encryption_data: sign({ ...body, capture_orders: [item(q)] }, gw.merchant.secret_key) };
      if (format === 'xml') assert.equal((await gw.post('/v1/capture', asJson, { format, sign: false })).statusCode, 401);
    }
  });
});

describe('concurrency (docs/contract.md §4)', () => {
  test('a concurrent capture and cancel of one payment: exactly one wins, the other says why', async () => {
    for (let i = 0; i < 5; i++) {
      const p = await pay(gw, { manual: true });
      const [cap, can] = await Promise.all([captureBatch(gw, [item(p)]), cancelBatch(gw, [item(p)])]);
      const c = cap.capture_orders[0];
      const x = can.cancel_orders[0];
      assert.equal(Number(c.capture_status) + Number(x.cancel_status), 1, `${c.error_message} / ${x.error_message}`);
      const status = (await orderOf(gw, p.transaction_id)).payment_status;
      if (c.capture_status === '1') {
        assert.equal(status, '3000');
        // Lost to the capture while it was at the processor, or after it.
        assert.match(x.error_message, /^1012:.*(captured.*refund it instead|capture of this payment is pending at the processor)/);
      } else {
        assert.equal(status, '5000');
        assert.match(c.error_message, /^1012:.*(cancelled|cancel of this payment is pending at the processor)/);
      }
    }
  });
});

describe('expiry (docs/contract.md §7)', () => {
  test('a manual authorisation expires after 7 days: 7000, hold released, payment.expired event', async () => {
    const p = await pay(gw, { manual: true });
    gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS - 1000);
    await expireDue(gw.runtime.deps, gw.clock.now);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000', 'not before 7 days');
    gw.clock.advance(2000);
    // Past the window a capture is refused even before the job runs.
    assert.match((await captureBatch(gw, [item(p)])).capture_orders[0].error_message, /^1015:/);
    assert.ok((await expireDue(gw.runtime.deps, gw.clock.now)) >= 1);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '7000');
    const ev = await gw.runtime.store.db
      .selectFrom('events')
      .selectAll()
      .where('object_id', '=', p.transaction_id)
      .where('event_type', '=', 'payment.expired')
      .execute();
    assert.equal(ev.length, 1);
    assert.equal(JSON.parse(ev[0]!.payload).data.payment_status, '7000');
    const hold = await gw.runtime.store.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.sum<number>('amount_minor').as('s'))
      .where('transaction_id', '=', p.transaction_id)
      .where('ledger_account', '=', 'customer_holds')
      .executeTakeFirstOrThrow();
    assert.equal(Number(hold.s), 0);
  });

  test('the expiry job is bounded per run', async () => {
    await Promise.all(Array.from({ length: 3 }, () => pay(gw, { manual: true })));
    gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS + 1);
    assert.equal(await expireDue(gw.runtime.deps, gw.clock.now, 2), 2);
    assert.ok((await expireDue(gw.runtime.deps, gw.clock.now, 2)) >= 1);
  });
});

describe('events', () => {
  test('capture and cancel each write one event carrying the order record', async () => {
    const a = await pay(gw, { manual: true });
    const b = await pay(gw, { manual: true });
    await captureBatch(gw, [item(a)]);
    await cancelBatch(gw, [item(b)]);
    const db = gw.runtime.store.db;
    const ca = await db.selectFrom('events').selectAll().where('object_id', '=', a.transaction_id).where('event_type', '=', 'payment.captured').execute();
    const cb = await db.selectFrom('events').selectAll().where('object_id', '=', b.transaction_id).where('event_type', '=', 'payment.cancelled').execute();
    assert.equal(ca.length, 1);
    assert.equal(cb.length, 1);
    assert.equal(JSON.parse(ca[0]!.payload).data.payment_status, '3000');
    assert.equal(JSON.parse(cb[0]!.payload).data.payment_status, '5000');
  });
});
