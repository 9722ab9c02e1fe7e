// Card authorisations as recorded processor attempts (docs/contract.md §20, docs/attempts.md):
// the attempt is committed before the call, an answer that does not come leaves the payment
// pending at the processor (0006), the sweeper settles it by asking again, voids it past the
// bound, and one order_no reaches the processor once whatever the concurrency.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { verifyLedger } from '../ledger/verify.js';
import type { AttemptStatusAnswer, AuthoriseInput, AuthoriseOutcome, CancelOutcome, Processor, ProcessorCall } from '../processors/types.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { sweepAttempts } from './sweeper.js';

/** A processor the test steers: how authorise answers, what a status query says, what a cancel does. */
class ScriptedProcessor implements Processor {
  readonly name = 'scripted';
  readonly inline = true;
  calls: Array<{ input: AuthoriseInput; call: ProcessorCall | undefined }> = [];
  statusAsked: string[] = [];
  cancels: Array<{ transaction_id: string; reference: string }> = [];
  answer: (input: AuthoriseInput) => Promise<AuthoriseOutcome> = async () => ({ kind: 'approved', reference: 'PSP-1' });
  status: AttemptStatusAnswer = { kind: 'unknown', reason: 'still not known' };
  cancel: CancelOutcome = { kind: 'approved', reference: 'PSP-void' };
  async authorise(input: AuthoriseInput, call?: ProcessorCall): Promise<AuthoriseOutcome> {
    this.calls.push({ input, call });
    return this.answer(input);
  }
  async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
    this.statusAsked.push(call.attempt_id);
    return this.status;
  }
  async cancelAuthorisation(input: { transaction_id: string; reference: string }): Promise<CancelOutcome> {
    this.cancels.push(input);
    return this.cancel;
  }
}

const HANG = () => new Promise<AuthoriseOutcome>(() => {});

let gw: TestGateway;
let processor: ScriptedProcessor;
before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 150, processor_unknown_void_after_ms: 600_000 } });
});
after(async () => {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});
beforeEach(() => {
  processor = new ScriptedProcessor();
  gw.runtime.deps.processorFor = () => processor;
});

const attemptsOf = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('processor_attempts').selectAll().where('object_id', '=', transaction_id).orderBy('created_at').execute();
const paymentOf = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
const eventsOf = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('events').select(['event_type']).where('object_id', '=', transaction_id).orderBy('created_at').execute();

async function pay(overrides: Record<string, unknown> = {}) {
  const res = await gw.post('/v1/authorise', directPayment(gw.merchant, overrides));
  assert.equal(res.statusCode, 200, res.body);
  return readXml(res);
}

describe('an answer heard at once', () => {
  test('the attempt is recorded with the payment, its id is the call’s idempotency key, and it ends approved', async () => {
    const x = await pay();
    assert.equal(x.result_info, '0000:Success');
    assert.equal(processor.calls.length, 1);
    const [a] = await attemptsOf(x.transaction_id);
    assert.ok(a);
    assert.equal(processor.calls[0]?.call?.attempt_id, a.attempt_id);
    assert.match(a.attempt_id, /^att_/);
    assert.equal(a.status, 'approved');
    assert.equal(a.reference, 'PSP-1');
    assert.equal(a.next_check_at, null);
    assert.equal(a.operation, 'authorise');
    assert.equal((await paymentOf(x.transaction_id)).status, 'captured');
  });

  test('a decline settles the attempt declined with its code; nothing is held', async () => {
    processor.answer = async () => ({ kind: 'declined', code: '1001', reference: 'PSP-2' });
    const x = await pay();
    assert.equal(x.result_info, '1001:Insufficient funds');
    const [a] = await attemptsOf(x.transaction_id);
    assert.equal(a?.status, 'declined');
    assert.equal(a?.result_code, '1001');
  });

  test('a payment refused before the processor (Luhn) records no attempt', async () => {
    const x = await pay({ card: '4242424242424241' });
    assert.equal(x.result_info, '1010:Invalid card number');
    assert.equal(processor.calls.length, 0);
    assert.deepEqual(await attemptsOf(x.transaction_id), []);
  });
});

describe('no answer by the deadline', () => {
  test('the merchant gets 0006 (order_status 4), the query says 1100, and the sweeper settles it from the processor’s status', async () => {
    processor.answer = HANG;
    const x = await pay();
    assert.equal(x.order_status, '4');
    assert.equal(x.result_info, '0006:Pending at the processor');
    const [a] = await attemptsOf(x.transaction_id);
    assert.equal(a?.status, 'unknown');
    assert.match(a?.last_error ?? '', /no answer within/);
    assert.equal((await paymentOf(x.transaction_id)).status, 'processing');

    const q = await gw.post('/v1/retrievalTrans', {
      merchant_id: gw.merchant.merchant_id,
      account_id: gw.merchant.account_id,
      transaction_ids: [x.transaction_id],
    });
    const order = JSON.parse(q.body).orders_list[0];
    assert.equal(order.payment_status, '1100');

    // The same order_no again: the pending answer, not a second call.
    const again = await pay({ order_no: x.order_no });
    assert.equal(again.result_info, '0006:Pending at the processor');
    assert.equal(processor.calls.length, 1);

    // Not yet due: nothing asked.
    assert.equal((await sweepAttempts(gw.runtime.deps, Date.now())).asked, 0);
    processor.status = { kind: 'approved', reference: 'PSP-late' };
    const r = await sweepAttempts(gw.runtime.deps, Date.now() + 60_000);
    assert.deepEqual(r, { asked: 1, settled: 1, voided: 0 });
    assert.deepEqual(processor.statusAsked, [a?.attempt_id]);
    const p = await paymentOf(x.transaction_id);
    assert.equal(p.status, 'captured');
    assert.equal(p.result_code, '0000');
    assert.equal(JSON.parse(p.details).reference_no, 'PSP-late');
    assert.deepEqual(
      (await eventsOf(x.transaction_id)).map((e) => e.event_type),
      ['payment.succeeded'],
    );
    const [settled] = await attemptsOf(x.transaction_id);
    assert.equal(settled?.status, 'approved');
    // A replay now answers the final outcome.
    assert.equal((await pay({ order_no: x.order_no })).result_info, '0000:Success');
  });

  test('a call that fails (connection reset) is unknown; a processor that never saw it fails the payment with 1007', async () => {
    processor.answer = async () => {
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    };
    const x = await pay();
    assert.equal(x.result_info, '0006:Pending at the processor');
    processor.status = { kind: 'not_found' };
    await sweepAttempts(gw.runtime.deps, Date.now() + 60_000);
    const p = await paymentOf(x.transaction_id);
    assert.equal(p.status, 'declined');
    assert.equal(p.result_code, '1007');
    assert.equal(p.authorised_minor, 0);
    assert.deepEqual(
      (await eventsOf(x.transaction_id)).map((e) => e.event_type),
      ['payment.failed'],
    );
  });

  test('still unknown: asked again with backoff; past the void bound cancelled at the processor and failed with 1007', async () => {
    processor.answer = HANG;
    const x = await pay();
    const t0 = Date.now();
    const first = await sweepAttempts(gw.runtime.deps, t0 + 60_000);
    assert.deepEqual(first, { asked: 1, settled: 0, voided: 0 });
    const [a1] = await attemptsOf(x.transaction_id);
    assert.equal(a1?.status, 'unknown');
    assert.equal(a1?.checks, 1);
    assert.ok((a1?.next_check_at ?? 0) >= t0 + 60_000 + 10_000, 'the second check waits longer than the first');
    assert.equal(processor.cancels.length, 0);

    const voided = await sweepAttempts(gw.runtime.deps, t0 + 11 * 60_000);
    assert.deepEqual(voided, { asked: 1, settled: 0, voided: 1 });
    assert.deepEqual(processor.cancels, [{ transaction_id: x.transaction_id, reference: '' }]);
    const p = await paymentOf(x.transaction_id);
    assert.equal(p.status, 'declined');
    assert.equal(p.result_code, '1007');
    const [a2] = await attemptsOf(x.transaction_id);
    assert.equal(a2?.status, 'voided');
    assert.equal(a2?.next_check_at, null);
  });
});

describe('a subscription’s first payment at the processor', () => {
  test('holds its contract_name (a second first payment is refused 400, nothing stored); a late approval creates the subscription, which keeps the name until cancelled', async () => {
    processor.answer = HANG;
    const sub = { contract_name: `late-${Date.now()}`, interval: 'month' };
    const x = await pay({ amount: '9.99', currency: 'EUR', subscription: sub });
    assert.equal(x.result_info, '0006:Pending at the processor');
    const claims = () => gw.runtime.store.db.selectFrom('subscription_name_claims').selectAll().where('contract_name', '=', sub.contract_name).execute();
    assert.equal((await claims()).length, 1);

    const second = directPayment(gw.merchant, { amount: '9.99', currency: 'EUR', subscription: sub });
    const refused = await gw.post('/v1/authorise', second);
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /subscription\.contract_name/);
    const stored = await gw.runtime.store.db
      .selectFrom('payments')
      .select('transaction_id')
      .where('order_no', '=', second.order_no as string)
      .execute();
    assert.deepEqual(stored, [], 'nothing stored for the refused one');
    assert.equal(processor.calls.length, 1);

    processor.status = { kind: 'approved', reference: 'PSP-sub' };
    await sweepAttempts(gw.runtime.deps, Date.now() + 60_000);
    const subs = await gw.runtime.store.db.selectFrom('subscriptions').selectAll().where('first_transaction_id', '=', x.transaction_id).execute();
    assert.equal(subs.length, 1);
    assert.equal(subs[0]?.status, 'Active');
    // The name stays held while the subscription charges; cancelling it frees the name.
    assert.equal((await claims()).length, 1);
    const cancelled = await gw.post('/v1/cancelsubscription', {
      merchant_id: gw.merchant.merchant_id,
      account_id: gw.merchant.account_id,
      recurring_id: subs[0]?.recurring_id,
      contract_name: sub.contract_name,
    });
    assert.equal(JSON.parse(cancelled.body).cancel_status, '1', cancelled.body);
    assert.deepEqual(await claims(), []);
  });
});

describe('one attempt per order_no', () => {
  test('20 concurrent identical requests reach the processor once; every answer is the winner’s', async () => {
    processor.answer = () => new Promise((resolve) => setTimeout(() => resolve({ kind: 'approved', reference: 'PSP-once' }), 50));
    const body = directPayment(gw.merchant, { order_no: `race-${Date.now()}` });
    const answers = await Promise.all(Array.from({ length: 20 }, () => gw.post('/v1/authorise', body)));
    assert.equal(processor.calls.length, 1);
    const infos = new Set(answers.map((r) => readXml(r).result_info));
    for (const info of infos) assert.ok(['0000:Success', '0006:Pending at the processor'].includes(info), info);
    const ids = new Set(answers.map((r) => readXml(r).transaction_id));
    assert.equal(ids.size, 1);
  });
});
