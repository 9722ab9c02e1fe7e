// Captures and cancels as recorded processor attempts (docs/contract.md §20, docs/attempts.md):
// the attempt is committed before the call and holds the payment's claim, an answer that is
// not final answers `2` and leaves the money where it was, the sweeper settles it by asking
// again with the attempt id, and a decline leaves the payment as it was.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { settleNotified, sweepAttempts } from '../attempts/sweeper.js';
import { verifyLedger } from '../ledger/verify.js';
import { HANG, ScriptedProcessor } from '../processors/testing.js';
import type { OperationOutcome, OperationStatusAnswer } from '../processors/types.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { cancelBatch, captureBatch, item, orderOf, type Paid, pay } from '../test/lifecycle.js';
import { expireDue } from './expiry.js';
import { MANUAL_CAPTURE_WINDOW_MS } from './states.js';

let gw: TestGateway;
let processor: ScriptedProcessor;
let served: TestGateway['runtime']['deps']['processorFor'];
before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 150 } });
  served = gw.runtime.deps.processorFor;
});
after(async () => {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});
beforeEach(() => {
  processor = new ScriptedProcessor();
  gw.runtime.deps.processorFor = served;
});

/** A manual payment authorised by the sandbox, then served by the scripted processor. */
async function authorised(): Promise<Paid> {
  const p = await pay(gw, { manual: true });
  gw.runtime.deps.processorFor = () => processor;
  return p;
}

const attemptsOf = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('processor_attempts').selectAll().where('object_id', '=', transaction_id).orderBy('created_at').execute();
const eventsOf = async (transaction_id: string) =>
  (await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', transaction_id).orderBy('created_at').execute()).map(
    (e) => e.event_type,
  );
/** Runs the sweeper as if every open attempt were due. */
const sweep = () => sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 24 * 3_600_000);

describe('the sandbox: every capture, cancel and refund is a recorded attempt', () => {
  test('capture then cancel of another: each one attempt, approved, its id the call’s key, its claim let go', async () => {
    const a = await pay(gw, { manual: true });
    const b = await pay(gw, { manual: true });
    assert.equal((await captureBatch(gw, [item(a, { amount: '4.00' })])).capture_orders[0].capture_status, '1');
    assert.equal((await cancelBatch(gw, [item(b)])).cancel_orders[0].cancel_status, '1');
    const [capture] = (await attemptsOf(a.transaction_id)).filter((x) => x.operation === 'capture');
    const [cancel] = (await attemptsOf(b.transaction_id)).filter((x) => x.operation === 'cancel');
    assert.deepEqual([capture?.status, Number(capture?.amount_minor), capture?.claim_key], ['approved', 400, null]);
    assert.deepEqual([cancel?.status, cancel?.claim_key], ['approved', null]);
    assert.deepEqual([(await orderOf(gw, a.transaction_id)).payment_status, (await orderOf(gw, b.transaction_id)).payment_status], ['3000', '5000']);
  });
});

describe('a capture the processor confirms later', () => {
  test('answers 2, holds the payment: the same capture again is 2, a cancel is refused, expiry waits; the sweeper captures it once', async () => {
    const p = await authorised();
    processor.operation = async () => ({ kind: 'pending', reference: 'PSP-cap' });
    const first = (await captureBatch(gw, [item(p)])).capture_orders[0];
    assert.deepEqual([first.capture_status, first.error_message], ['2', '']);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000', 'money follows the processor: still authorised');
    const again = (await captureBatch(gw, [item(p)])).capture_orders[0];
    assert.equal(again.capture_status, '2');
    const cancel = (await cancelBatch(gw, [item(p)])).cancel_orders[0];
    assert.equal(cancel.cancel_status, '0');
    assert.match(cancel.error_message, /^1012:.*capture of this payment is pending at the processor/);
    assert.equal(processor.operations.length, 1, 'one call reached the processor');
    // Past the capture window the expiry job leaves a payment whose capture is at the processor.
    gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS + 1);
    await expireDue(gw.runtime.deps, gw.clock.now);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');

    processor.operationStatusAnswer = { kind: 'approved', reference: 'PSP-cap' };
    await sweep();
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '3000');
    assert.deepEqual(processor.statusAsked, [processor.operations[0]?.call.attempt_id], 'asked with the attempt id');
    await sweep();
    assert.deepEqual(
      (await eventsOf(p.transaction_id)).filter((e) => e === 'payment.captured'),
      ['payment.captured'],
      'captured once',
    );
    const [a] = (await attemptsOf(p.transaction_id)).filter((x) => x.operation === 'capture');
    assert.deepEqual([a?.status, a?.claim_key], ['approved', null]);
  });

  test('refused by the processor: 0 with its reason, the payment still authorised and capturable', async () => {
    const p = await authorised();
    processor.operation = async () => ({ kind: 'declined', code: '1007', reason: 'authorisation not found' });
    const refused = (await captureBatch(gw, [item(p)])).capture_orders[0];
    assert.equal(refused.capture_status, '0');
    assert.match(refused.error_message, /^1002:Card declined: the processor refused it: authorisation not found/);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');
    processor.operation = async () => ({ kind: 'approved', reference: 'PSP-2' });
    assert.equal((await captureBatch(gw, [item(p)])).capture_orders[0].capture_status, '1');
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '3000');
  });
});

describe('a cancel with no answer in time', () => {
  test('answers 2 and keeps the hold; the sweeper finds it never reached the processor: the payment is authorised and can be cancelled', async () => {
    const p = await authorised();
    processor.operation = () => HANG();
    const first = (await cancelBatch(gw, [item(p)])).cancel_orders[0];
    assert.equal(first.cancel_status, '2');
    const [a] = await attemptsOf(p.transaction_id).then((xs) => xs.filter((x) => x.operation === 'cancel'));
    assert.equal(a?.status, 'unknown');
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');
    processor.operationStatusAnswer = { kind: 'not_found' };
    await sweep();
    const [lost] = await attemptsOf(p.transaction_id).then((xs) => xs.filter((x) => x.operation === 'cancel'));
    assert.deepEqual([lost?.status, lost?.claim_key], ['declined', null]);
    processor.operation = async () => ({ kind: 'approved', reference: 'PSP-void' });
    assert.equal((await cancelBatch(gw, [item(p)])).cancel_orders[0].cancel_status, '1');
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '5000');
    assert.deepEqual(
      (await eventsOf(p.transaction_id)).filter((e) => e === 'payment.cancelled'),
      ['payment.cancelled'],
    );
  });

  test('20 concurrent captures of one payment reach the processor once', async () => {
    const p = await authorised();
    processor.operation = () => new Promise((resolve) => setTimeout(() => resolve({ kind: 'approved', reference: 'PSP-once' }), 50));
    const answers = await Promise.all(Array.from({ length: 20 }, () => captureBatch(gw, [item(p)])));
    const statuses = answers.map((a) => a.capture_orders[0].capture_status);
    assert.equal(processor.operations.length, 1);
    const said = answers.map((a) => `${a.capture_orders[0].capture_status} ${a.capture_orders[0].error_message}`).join('; ');
    assert.equal(statuses.filter((s) => s === '1').length, 1, said);
    assert.ok(statuses.every((s) => s === '1' || s === '2' || s === '0'));
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '3000');
  });
});

describe('a webhook heard before the call’s own answer (the remote sandbox notifies as it acts)', () => {
  /** The processor's webhook for the open capture or cancel of the payment settles it first; then the call answers `answer`. */
  const notifiedFirst = (p: Paid, notified: OperationStatusAnswer, answer: OperationOutcome) => async () => {
    const [open] = (await attemptsOf(p.transaction_id)).filter((x) => x.claim_key?.startsWith('payment:'));
    assert.equal(open?.status, 'sent', 'the attempt is committed before the call');
    assert.notEqual(await settleNotified(gw.runtime.deps, open as NonNullable<typeof open>, notified, gw.runtime.deps.now()), 'stale');
    return answer;
  };

  for (const operation of ['capture', 'cancel'] as const) {
    const batch = operation === 'capture' ? captureBatch : cancelBatch;
    const statusOf = async (p: Paid) => {
      const r = await batch(gw, [item(p)]);
      const o = r[`${operation}_orders`][0];
      return `${o[`${operation}_status`]} ${o.error_message}`.trim();
    };
    const moved = operation === 'capture' ? '3000' : '5000';

    test(`${operation}: approved by the webhook, then the answer: 1, moved once (not "already ${operation === 'capture' ? 'captured' : 'cancelled'}")`, async () => {
      const p = await authorised();
      processor.operation = notifiedFirst(p, { kind: 'approved', reference: 'PSP-hook' }, { kind: 'approved', reference: 'PSP-hook' });
      assert.equal(await statusOf(p), '1');
      assert.equal((await orderOf(gw, p.transaction_id)).payment_status, moved);
      assert.deepEqual(
        (await eventsOf(p.transaction_id)).filter((e) => e === `payment.${operation === 'capture' ? 'captured' : 'cancelled'}`),
        [`payment.${operation === 'capture' ? 'captured' : 'cancelled'}`],
      );
      assert.equal(processor.operations.length, 1);
    });

    test(`${operation}: approved by the webhook, the call's own answer lost (deadline): 1`, async () => {
      const p = await authorised();
      processor.operation = notifiedFirst(p, { kind: 'approved', reference: 'PSP-hook' }, { kind: 'unknown', reason: 'no answer by the deadline' });
      assert.equal(await statusOf(p), '1');
      assert.equal((await orderOf(gw, p.transaction_id)).payment_status, moved);
    });

    test(`${operation}: refused by the webhook first: the refusal, the payment as it was`, async () => {
      const p = await authorised();
      processor.operation = notifiedFirst(
        p,
        { kind: 'declined', code: '1007', reason: 'authorisation not found' },
        { kind: 'declined', code: '1007', reason: 'authorisation not found' },
      );
      assert.match(await statusOf(p), /^0 1002:Card declined: the processor refused it: authorisation not found/);
      assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');
    });

    test(`${operation}: pending by the webhook first: 2, the payment as it was until the sweeper hears it`, async () => {
      const p = await authorised();
      processor.operation = notifiedFirst(p, { kind: 'pending', reference: 'PSP-hook' }, { kind: 'approved', reference: 'PSP-hook' });
      assert.equal(await statusOf(p), '2');
      assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000');
      processor.operationStatusAnswer = { kind: 'approved', reference: 'PSP-hook' };
      await sweep();
      assert.equal((await orderOf(gw, p.transaction_id)).payment_status, moved);
    });
  }
});
