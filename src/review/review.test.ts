// Risk review (docs/contract.md §8, §10): REVIEW holds an approved payment (order_status 3,
// payment_status 2100); POST /v1/review ACCEPTs or REJECTs it; undecided holds expire.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sweepAttempts } from '../attempts/sweeper.js';
import { sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { REVIEW_WINDOW_MS } from '../payments/approval.js';
import { ScriptedProcessor } from '../processors/testing.js';
import { setThresholds } from '../risk/settings.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { authorise, eventsOf, queryOrder } from '../threeds/testing.js';
import { ReviewService } from './service.js';

let gw: TestGateway;
let auto: CreatedMerchant;
let manual: CreatedMerchant;

before(async () => {
  gw = await testGateway();
  auto = await gw.newMerchant();
  manual = await gw.newMerchant({ capture_method: 'manual' });
  // A disposable e-mail address alone (score 30) lands in the review band of these accounts.
  for (const m of [auto, manual]) await setThresholds(gw.runtime.store, m.account_id, { review: 25, reject: 90 }, gw.clock.now);
});
after(async () => {
  await gw.close();
});

async function held(m: CreatedMerchant) {
  const x = await authorise(gw, directPayment(m, { open3d: '0', shopper_email: 'r@mailinator.com', notify_url: 'http://127.0.0.1:9/hook' }), m);
  assert.deepEqual([x.order_status, x.result_info, x.risk_action], ['3', '0004:Held for risk review', 'REVIEW']);
  return x;
}

async function review(m: CreatedMerchant, orders: Array<Record<string, unknown>>) {
  const res = await gw.post('/v1/review', { merchant_id: m.merchant_id, account_id: m.account_id, review_orders: orders }, { merchant: m });
  return { res, body: JSON.parse(res.body) };
}

describe('held for review', () => {
  test('a REVIEW payment is held: 2100, funds authorised, payment.held sent', async () => {
    const x = await held(auto);
    const order = await queryOrder(gw, auto, x.transaction_id);
    assert.equal(order.payment_status, '2100');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.held']);
    const row = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.equal(Number(row.authorised_minor), 1000);
  });

  test('REVIEW then ACCEPT under automatic capture: captured (3000), payment.succeeded', async () => {
    const x = await held(auto);
    const { res, body } = await review(auto, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT', note: 'called the shopper' }]);
    assert.equal(res.statusCode, 200);
    const { encryption_data, ...rest } = body;
    assert.equal(encryption_data, sign(rest, auto.secret_key));
    assert.deepEqual(body.review_orders, [
      { transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT', review_status: '1', payment_status: '3000', error_message: '' },
    ]);
    const order = await queryOrder(gw, auto, x.transaction_id);
    assert.deepEqual([order.payment_status, order.captured_amount], ['3000', '10.00']);
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.held', 'payment.succeeded']);
  });

  test('REVIEW then ACCEPT under manual capture: authorised (2000) with the capture window', async () => {
    const x = await held(manual);
    const { body } = await review(manual, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT' }]);
    assert.equal(body.review_orders[0].payment_status, '2000');
    const row = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.equal(Number(row.expires_at), gw.clock.now + 7 * 24 * 3600 * 1000);
  });

  test('REVIEW then REJECT: cancelled (5000), hold released, payment.cancelled', async () => {
    const x = await held(auto);
    const { body } = await review(auto, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'REJECT', note: 'stolen identity' }]);
    assert.deepEqual([body.review_orders[0].review_status, body.review_orders[0].payment_status], ['1', '5000']);
    const row = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, Number(row.authorised_minor), Number(row.captured_minor)], ['cancelled', 0, 0]);
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.cancelled', 'payment.held']);
    const audit = await gw.runtime.store.db.selectFrom('risk_reviews').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.deepEqual([audit.decision, audit.note, audit.source], ['REJECT', 'stolen identity', 'api']);
  });

  test('an undecided hold expires after 7 days (7000) and releases the funds', async () => {
    const x = await held(auto);
    gw.clock.advance(REVIEW_WINDOW_MS);
    assert.ok((await new ReviewService(gw.runtime.deps).expireDue()) >= 1);
    const order = await queryOrder(gw, auto, x.transaction_id);
    assert.equal(order.payment_status, '7000');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.expired', 'payment.held']);
  });
});

describe('per-item failures', () => {
  test('each item answers on its own: decided twice, wrong order_no, unknown id', async () => {
    const a = await held(auto);
    const b = await held(auto);
    await review(auto, [{ transaction_id: a.transaction_id, order_no: a.order_no, decision: 'ACCEPT' }]);
    const { res, body } = await review(auto, [
      { transaction_id: a.transaction_id, order_no: a.order_no, decision: 'REJECT' },
      { transaction_id: b.transaction_id, order_no: 'OTHER', decision: 'REJECT' },
      { transaction_id: 'NOPE', order_no: 'X', decision: 'ACCEPT' },
      { transaction_id: b.transaction_id, order_no: b.order_no, decision: 'REJECT' },
    ]);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      body.review_orders.map((o: Record<string, string>) => [o.review_status, o.payment_status, o.error_message]),
      [
        ['0', '3000', '1012:Invalid state for this operation'],
        ['0', '2100', '1014:Order does not match the transaction'],
        ['0', '', '0404:Record not found'],
        ['1', '5000', ''],
      ],
    );
  });

  test('another merchant cannot decide this account’s holds', async () => {
    const x = await held(auto);
    const other = await gw.newMerchant();
    const { body } = await review(other, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT' }]);
    assert.equal(body.review_orders[0].error_message, '0404:Record not found');
    assert.equal((await queryOrder(gw, auto, x.transaction_id)).payment_status, '2100');
  });

  test('more than 50 items, or a decision other than ACCEPT/REJECT, is refused as a whole (400)', async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ transaction_id: `T${i}`, order_no: `O${i}`, decision: 'ACCEPT' }));
    assert.equal((await review(auto, many)).res.statusCode, 400);
    const bad = await review(auto, [{ transaction_id: 'T', order_no: 'O', decision: 'MAYBE' }]);
    assert.equal(bad.res.statusCode, 400);
    assert.equal(bad.body.error_field, 'review_orders[0].decision');
  });
});

describe('the processor holds the review (docs/contract.md §10, §20)', () => {
  let scripted: ScriptedProcessor;
  let original: typeof gw.runtime.deps.processorFor;
  before(() => {
    original = gw.runtime.deps.processorFor;
  });
  beforeEach(() => {
    scripted = new ScriptedProcessor();
    gw.runtime.deps.processorFor = () => scripted;
  });
  after(() => {
    gw.runtime.deps.processorFor = original;
  });

  test('a payment to be held is only authorised at the processor, whatever its capture mode; ACCEPT captures it there, REJECT cancels it there', async () => {
    const accepted = await held(auto);
    const rejected = await held(auto);
    assert.deepEqual(
      scripted.calls.map((c) => c.input.capture_method),
      ['manual', 'manual'],
    );
    const { body } = await review(auto, [
      { transaction_id: accepted.transaction_id, order_no: accepted.order_no, decision: 'ACCEPT' },
      { transaction_id: rejected.transaction_id, order_no: rejected.order_no, decision: 'REJECT' },
    ]);
    assert.deepEqual(
      body.review_orders.map((o: Record<string, string>) => [o.review_status, o.payment_status]),
      [
        ['1', '3000'],
        ['1', '5000'],
      ],
    );
    assert.deepEqual(
      scripted.operations.map((o) => [o.operation, o.input.transaction_id, 'amount_minor' in o.input ? o.input.amount_minor : null]),
      [
        ['capture', accepted.transaction_id, 1000],
        ['cancel', rejected.transaction_id, null],
      ],
    );
  });

  test('ACCEPT under manual capture asks the processor nothing (the payment stays authorised there)', async () => {
    const x = await held(manual);
    const { body } = await review(manual, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT' }]);
    assert.equal(body.review_orders[0].payment_status, '2000');
    assert.deepEqual(scripted.operations, []);
  });

  test('a capture the processor confirms later: review_status 2, still held; the sweeper moves it to captured and notifies', async () => {
    const x = await held(auto);
    scripted.operation = async (op) => ({ kind: 'pending', reference: `PSP-${op}-later` });
    const { body } = await review(auto, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT' }]);
    assert.deepEqual([body.review_orders[0].review_status, body.review_orders[0].payment_status], ['2', '2100']);
    scripted.operationStatusAnswer = { kind: 'approved', reference: 'PSP-capture-later' };
    await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 3_600_000);
    assert.equal((await queryOrder(gw, auto, x.transaction_id)).payment_status, '3000');
    // One clock tick (the test gateway's clock stands still): compared as a set.
    assert.deepEqual((await eventsOf(gw, x.transaction_id)).sort(), ['payment.captured', 'payment.held']);
  });

  test('a cancel the processor refuses: the review is refused with its reason and the payment stays held', async () => {
    const x = await held(auto);
    scripted.operation = async () => ({ kind: 'declined', code: '1002', reason: 'already captured' });
    const { body } = await review(auto, [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'REJECT' }]);
    assert.equal(body.review_orders[0].review_status, '0');
    assert.match(body.review_orders[0].error_message, /^1002:.*already captured/);
    assert.equal((await queryOrder(gw, auto, x.transaction_id)).payment_status, '2100');
  });
});
