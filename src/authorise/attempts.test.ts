// Card authorisations as recorded processor attempts (docs/contract.md §20, docs/attempts.md):
// the attempt is committed before the call, an answer that does not come leaves the payment
// pending at the processor (0006), the sweeper settles it by asking again, voids it past the
// bound, and one order_no reaches the processor once whatever the concurrency.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { settleNotified, sweepAttempts } from '../attempts/sweeper.js';
import { verifyLedger } from '../ledger/verify.js';
import { HANG, ScriptedProcessor } from '../processors/testing.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';

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
    const early = await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now());
    assert.equal(early.asked, 0);
    processor.status = { kind: 'approved', reference: 'PSP-late' };
    const r = await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 60_000);
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
    await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 60_000);
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
    const t0 = gw.runtime.deps.now();
    const first = await sweepAttempts(gw.runtime.deps, t0 + 60_000);
    assert.deepEqual(first, { asked: 1, settled: 0, voided: 0 });
    const [a1] = await attemptsOf(x.transaction_id);
    assert.equal(a1?.status, 'unknown');
    assert.equal(a1?.checks, 1);
    assert.ok((a1?.next_check_at ?? 0) >= t0 + 60_000 + 10_000, 'the second check waits longer than the first');
    assert.equal(processor.cancels.length, 0);

    const voided = await sweepAttempts(gw.runtime.deps, t0 + 11 * 60_000);
    assert.deepEqual(voided, { asked: 1, settled: 0, voided: 1 });
    assert.deepEqual(
      processor.cancels.map(({ transaction_id, reference }) => ({ transaction_id, reference })),
      [{ transaction_id: x.transaction_id, reference: '' }],
    );
    const p = await paymentOf(x.transaction_id);
    assert.equal(p.status, 'declined');
    assert.equal(p.result_code, '1007');
    const [a2] = await attemptsOf(x.transaction_id);
    assert.equal(a2?.status, 'voided');
    assert.equal(a2?.next_check_at, null);
  });

  test('a void sent without an answer is sent again until answered: a later approval does not approve the payment (the processor may have cancelled it)', async () => {
    processor.answer = HANG;
    const x = await pay();
    const t0 = gw.runtime.deps.now();
    processor.cancelAnswer = { kind: 'unknown', reason: 'no answer within 150 ms' };
    const first = await sweepAttempts(gw.runtime.deps, t0 + 11 * 60_000);
    assert.deepEqual(first, { asked: 1, settled: 0, voided: 0 });
    assert.equal(processor.cancels.length, 1);
    const [a1] = await attemptsOf(x.transaction_id);
    assert.deepEqual([a1?.status, a1?.last_error], ['unknown', 'cancel sent, no answer: no answer within 150 ms']);

    // A webhook's approval meanwhile leaves it to the cancel.
    assert.equal(await settleNotified(gw.runtime.deps, a1 as NonNullable<typeof a1>, { kind: 'approved', reference: 'PSP-late' }, t0 + 12 * 60_000), 'open');
    assert.equal((await paymentOf(x.transaction_id)).status, 'processing');

    // The processor now says approved; the sweeper does not ask, it sends the same cancel again.
    processor.status = { kind: 'approved', reference: 'PSP-late' };
    processor.cancelAnswer = { kind: 'approved', reference: 'PSP-void' };
    const asked = processor.statusAsked.length;
    const second = await sweepAttempts(gw.runtime.deps, t0 + 13 * 60_000);
    assert.deepEqual(second, { asked: 1, settled: 0, voided: 1 });
    assert.equal(processor.statusAsked.length, asked, 'no status query once a void went unanswered');
    assert.deepEqual(
      processor.cancels.map((c) => c.attempt_id),
      [`${a1?.attempt_id}.void`, `${a1?.attempt_id}.void`],
      'the same cancel, by the same idempotency key',
    );
    const p = await paymentOf(x.transaction_id);
    assert.deepEqual([p.status, p.result_code, p.captured_minor, p.authorised_minor], ['declined', '1007', 0, 0]);
    assert.deepEqual(
      (await eventsOf(x.transaction_id)).map((e) => e.event_type),
      ['payment.failed'],
    );
  });

  test('each call of a sweep has its own deadline: a status query that hangs does not spend the next one’s', async () => {
    processor.answer = HANG;
    const hung = await pay();
    const next = await pay();
    // Both due now, the hanging one first (the sweep's clock is the real one: no deadline to spare).
    for (const [x, at] of [
      [hung, 0],
      [next, 1],
    ] as const)
      await gw.runtime.store.transaction((tx) =>
        tx.updateTable('processor_attempts').set({ next_check_at: at }).where('object_id', '=', x.transaction_id).execute(),
      );
    processor.authoriseStatus = async (_input, call) => {
      processor.statusAsked.push(call.attempt_id);
      if (processor.statusAsked.length === 1) {
        gw.clock.advance(150); // the gateway's clock moves while this one hangs to its deadline
        return HANG();
      }
      await new Promise((r) => setTimeout(r, 20));
      return { kind: 'approved', reference: 'PSP-in-time' };
    };
    const r = await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now());
    assert.deepEqual(r, { asked: 2, settled: 1, voided: 0 });
    assert.equal((await paymentOf(hung.transaction_id)).status, 'processing');
    assert.equal((await paymentOf(next.transaction_id)).status, 'captured', 'answered in 20 ms of its own 150');
    // The hung one is settled by a later run.
    processor.authoriseStatus = async () => ({ kind: 'approved', reference: 'PSP-later' });
    await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 60_000);
    assert.equal((await paymentOf(hung.transaction_id)).status, 'captured');
  });
});

describe('a subscription’s first payment at the processor', () => {
  test('holds its contract_name (a second first payment is refused 400, nothing stored); a late approval creates the subscription, which keeps the name until cancelled', async () => {
    processor.answer = HANG;
    const sub = { contract_name: `late-${Date.now()}`, interval: 'month' };
    const first = directPayment(gw.merchant, { amount: '9.99', currency: 'EUR', subscription: sub });
    const x = readXml(await gw.post('/v1/authorise', first));
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
    await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 60_000);
    const subs = await gw.runtime.store.db.selectFrom('subscriptions').selectAll().where('first_transaction_id', '=', x.transaction_id).execute();
    assert.equal(subs.length, 1);
    assert.equal(subs[0]?.status, 'Active');
    // The merchant's repeat of the request is answered the approval with its subscription, as a
    // direct answer would be (the sweeper's stored answer left the subscription fields empty).
    const repeat = readXml(await gw.post('/v1/authorise', first));
    assert.equal(repeat.result_info, '0000:Success');
    assert.equal(repeat.recurring_id, subs[0]?.recurring_id);
    assert.equal(repeat.contract_name, sub.contract_name);
    assert.match(String(repeat.recurring_deduction_time), /^\d{4}-\d{2}-\d{2}/);
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
  test('a repeat finding the first request gone past its deadline (its process died at the processor) writes the payment from the snapshot: 0006, and the order can be queried', async () => {
    let release: (o: { kind: 'approved'; reference: string }) => void = () => {};
    processor.answer = () => new Promise((r) => (release = r));
    const settings = gw.runtime.deps.settings;
    const timeout = settings.processor_timeout_ms;
    settings.processor_timeout_ms = 60_000; // the first call waits as long as the test holds it
    const body = directPayment(gw.merchant, { order_no: `dead-${Date.now()}` });
    try {
      const first = gw.post('/v1/authorise', body);
      while (processor.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
      const claim = await gw.runtime.store.db
        .selectFrom('processor_attempts')
        .selectAll()
        .where('claim_key', 'like', `order:%:${body.order_no}`)
        .executeTakeFirstOrThrow();
      assert.equal(claim.status, 'sent');
      const before = await gw.post('/v1/authorise', body);
      assert.equal(readXml(before).result_info, '0006:Pending at the processor', 'within the deadline: replayed from the snapshot');
      assert.equal(
        (
          await gw.runtime.store.db
            .selectFrom('payments')
            .select('transaction_id')
            .where('order_no', '=', body.order_no as string)
            .execute()
        ).length,
        0,
      );

      gw.clock.advance(61_000); // past the first call's deadline, as if its process had died
      const again = readXml(await gw.post('/v1/authorise', body));
      assert.deepEqual([again.result_info, again.transaction_id], ['0006:Pending at the processor', claim.object_id]);
      const p = await paymentOf(claim.object_id);
      assert.equal(p.status, 'processing');
      const q = await gw.post('/v1/retrievalTrans', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, order_nos: body.order_no });
      assert.equal(JSON.parse(q.body).orders_list[0].payment_status, '1100');

      // The first call's answer comes after all: the payment is there, the sweeper settles the attempt into it once.
      release({ kind: 'approved', reference: 'PSP-dead' });
      const late = await first;
      assert.equal(readXml(late).transaction_id, claim.object_id, late.body);
      processor.status = { kind: 'approved', reference: 'PSP-dead' };
      await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 120_000);
      assert.equal((await paymentOf(claim.object_id)).status, 'captured');
      assert.equal(processor.calls.length, 1);
      assert.deepEqual(processor.cancels, [], 'nothing voided: the approval has its payment');
      assert.deepEqual(
        (await eventsOf(claim.object_id)).map((e) => e.event_type),
        ['payment.succeeded'],
      );
    } finally {
      settings.processor_timeout_ms = timeout;
    }
  });

  test('a notification that comes while the call is still in flight (no payment row yet) settles the payment; the late answer then changes nothing', async () => {
    let release: (o: { kind: 'approved'; reference: string }) => void = () => {};
    processor.answer = () => new Promise((r) => (release = r));
    const settings = gw.runtime.deps.settings;
    const timeout = settings.processor_timeout_ms;
    settings.processor_timeout_ms = 60_000;
    const body = directPayment(gw.merchant, { order_no: `early-${Date.now()}` });
    try {
      const first = gw.post('/v1/authorise', body);
      while (processor.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
      const claim = await gw.runtime.store.db
        .selectFrom('processor_attempts')
        .selectAll()
        .where('claim_key', 'like', `order:%:${body.order_no}`)
        .executeTakeFirstOrThrow();
      assert.equal(await settleNotified(gw.runtime.deps, claim, { kind: 'approved', reference: 'PSP-early' }, gw.runtime.deps.now()), 'settled');
      assert.equal((await paymentOf(claim.object_id)).status, 'captured');
      release({ kind: 'approved', reference: 'PSP-early' });
      const answer = readXml(await first);
      assert.deepEqual([answer.result_info, answer.transaction_id], ['0000:Success', claim.object_id]);
      assert.deepEqual(processor.cancels, [], 'nothing voided');
      assert.deepEqual(
        (await eventsOf(claim.object_id)).map((e) => e.event_type),
        ['payment.succeeded'],
      );
    } finally {
      settings.processor_timeout_ms = timeout;
    }
  });

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

  test('generic interface: the answer’s write refused (disk full) is 503; the retry under the same key answers the payment from its snapshot, processing, and the sweeper settles it', async () => {
    const key = await gw.apiKey();
    const store = gw.runtime.store;
    const write = store.write.bind(store);
    let failNext = false;
    store.write = async (unit) => {
      if (failNext) {
        failNext = false;
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      }
      return write(unit);
    };
    processor.answer = async () => {
      failNext = true; // the write of this answer
      return { kind: 'approved', reference: 'PSP-full' };
    };
    const body = {
      amount: 1234,
      currency: 'usd',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } },
    };
    const headers = { 'idempotency-key': `full-${Date.now()}` };
    try {
      const first = await gw.generic('POST', '/v1/payments', key, body, { json: true, headers });
      assert.equal(first.statusCode, 503, first.body);
      const again = await gw.generic('POST', '/v1/payments', key, body, { json: true, headers });
      assert.equal(again.statusCode, 200, again.body);
      const object = JSON.parse(again.body);
      assert.deepEqual([object.status, object.amount], ['processing', 1234]);
      assert.equal(processor.calls.length, 1, 'the retry did not reach the processor again');
      const tx = String(object.id).replace(/^pay_/, '');
      processor.status = { kind: 'approved', reference: 'PSP-full' };
      await sweepAttempts(gw.runtime.deps, gw.runtime.deps.now() + 120_000);
      assert.equal((await paymentOf(tx)).status, 'captured');
      const read = await gw.generic('GET', `/v1/payments/${object.id}`, key);
      assert.equal(JSON.parse(read.body).status, 'succeeded', read.body);
    } finally {
      store.write = write;
    }
  });
});
