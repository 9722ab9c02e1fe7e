// Refunds and refund search through the public API (interface.md "Refund a transaction",
// "Search a refund transaction"; docs/contract.md §4, §5, §6, §8), on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepAttempts } from '../attempts/sweeper.js';
import { verifyLedger } from '../ledger/verify.js';
import { HANG, ScriptedProcessor } from '../processors/testing.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { captureBatch, item, orderOf, type Paid, pay, refundBatch } from '../test/lifecycle.js';
import { completeRefund } from './refund.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  const report = await verifyLedger(gw.runtime.store.db);
  assert.deepEqual(report.problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});

const refund = (p: Paid, refund_amount: string, extra: Record<string, unknown> = {}) => item(p, { refund_amount, refund_reason: 'customer asked', ...extra });

async function search(body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await gw.post('/v1/retrievalRefund', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...body });
  return { status: res.statusCode, ...(JSON.parse(res.body) as Record<string, any>) };
}

describe('refund', () => {
  test('partial refunds up to the captured amount: 4100 then 4000, ids -01, -02, the answer has every field', async () => {
    const p = await pay(gw);
    const first = await refundBatch(gw, [refund(p, '3.00')]);
    assert.equal(first.return_status, '1');
    assert.deepEqual(first.refund_orders[0], {
      transaction_id: p.transaction_id,
      order_no: p.order_no,
      currency: 'USD',
      amount: '10.00',
      refund_amount: '3.00',
      refund_reason: 'customer asked',
      refund_reference: '',
      refund_reference_id: `${p.transaction_id}-01`,
      refund_status: '1',
      refund_message: '0000:Success',
    });
    let o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.refunded_amount], ['4100', '3.00']);
    const second = (await refundBatch(gw, [refund(p, '7.00')])).refund_orders[0];
    assert.equal(second.refund_reference_id, `${p.transaction_id}-02`);
    o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.refunded_amount], ['4000', '10.00']);
    const third = (await refundBatch(gw, [refund(p, '0.01')])).refund_orders[0];
    assert.equal(third.refund_status, '0');
    assert.match(third.refund_message, /^1012:.*refunded in full/);
  });

  test('a refund after a partial capture is capped at the captured amount', async () => {
    const p = await pay(gw, { manual: true, amount: '10.00' });
    await captureBatch(gw, [item(p, { amount: '4.00' })]);
    const r = (await refundBatch(gw, [refund(p, '4.01'), refund(p, '4.00')])).refund_orders;
    assert.match(r[0].refund_message, /^1013:.*more than the 4\.00 left to refund/);
    assert.equal(r[1].refund_status, '1');
  });

  test('per-item failures: not captured, mismatch, bad refund_amount; the good item still refunds', async () => {
    const auth = await pay(gw, { manual: true });
    const p = await pay(gw);
    const r = (
      await refundBatch(gw, [
        refund(auth, '1.00'),
        refund(p, '1.00', { amount: '1.00' }),
        refund(p, '1.5'),
        refund(p, '0.00'),
        item(p),
        refund(p, '11.00'),
        refund(p, '2.00'),
      ])
    ).refund_orders;
    assert.match(r[0].refund_message, /^1012:.*authorised.*capture or cancel it/);
    assert.match(r[1].refund_message, /^1014:.*not the order amount/);
    assert.match(r[2].refund_message, /^0400:.*refund_amount must be a decimal/);
    assert.match(r[3].refund_message, /^0400:.*greater than zero/);
    assert.match(r[4].refund_message, /^0400:.*refund_amount is required/);
    assert.match(r[5].refund_message, /^1013:/);
    assert.equal(r[6].refund_status, '1');
    assert.ok(r.slice(0, 6).every((x: any) => x.refund_status === '0' && x.refund_reference_id === ''));
  });

  test('the refund.succeeded event carries the refund search item', async () => {
    const p = await pay(gw);
    const ref = (await refundBatch(gw, [refund(p, '1.00')])).refund_orders[0].refund_reference_id;
    const ev = await gw.runtime.store.db.selectFrom('events').selectAll().where('object_id', '=', ref).execute();
    assert.equal(ev.length, 1);
    assert.equal(ev[0]!.event_type, 'refund.succeeded');
    const found = (await search({ refund_reference_ids: [ref] })).refund_orders[0];
    assert.deepEqual(JSON.parse(ev[0]!.payload).data, found);
  });
});

describe('concurrency (docs/contract.md §4)', () => {
  test('100 concurrent refunds of 1.00 against a 10.00 capture give exactly 10 refunds', async () => {
    const p = await pay(gw);
    const answers = await Promise.all(Array.from({ length: 100 }, () => refundBatch(gw, [refund(p, '1.00')])));
    const items = answers.map((a) => a.refund_orders[0]);
    const ok = items.filter((x) => x.refund_status === '1');
    assert.equal(ok.length, 10);
    assert.ok(items.filter((x) => x.refund_status === '0').every((x) => /^(1012|1013):/.test(x.refund_message)));
    assert.deepEqual(
      ok.map((x) => x.refund_reference_id).sort(),
      Array.from({ length: 10 }, (_, i) => `${p.transaction_id}-${String(i + 1).padStart(2, '0')}`),
    );
    const o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.refunded_amount], ['4000', '10.00']);
  });
});

describe('pending refunds (refund_status 2) for processors that answer later (docs/contract.md §20)', () => {
  test('pending → succeeded, and pending → failed gives the amount back, each settled by the sweeper asking with the attempt id', async () => {
    const deps = gw.runtime.deps;
    const original = deps.processorFor;
    const p = await pay(gw);
    const scripted = new ScriptedProcessor();
    scripted.operation = async () => ({ kind: 'pending', reference: 'PSP-later' });
    deps.processorFor = () => scripted;
    let a: any;
    let b: any;
    try {
      [a, b] = (await refundBatch(gw, [refund(p, '2.00'), refund(p, '3.00')])).refund_orders;
      assert.deepEqual([a.refund_status, a.refund_message], ['2', '0005:Refund pending at the processor']);
      assert.equal(scripted.operations.length, 2, 'each refund reached the processor once');
      let found = (await search({ refund_reference_ids: [a.refund_reference_id] })).refund_orders[0];
      assert.equal(found.refund_processing_date, '');
      const attempts = await deps.store.db
        .selectFrom('processor_attempts')
        .selectAll()
        .where('operation', '=', 'refund')
        .where('status', '=', 'pending')
        .execute();
      const attemptOf = (r: any) => attempts.find((x) => x.object_id === r.refund_reference_id);
      assert.ok(attemptOf(a) && attemptOf(b));
      assert.deepEqual(
        scripted.operations.map((o) => o.call.attempt_id).sort(),
        [attemptOf(a)?.attempt_id, attemptOf(b)?.attempt_id].sort(),
        "the attempt id is the call's idempotency key",
      );
      // Pending still: nothing moves.
      await sweepAttempts(deps, deps.now() + 10 * 60_000);
      assert.equal((await search({ refund_reference_ids: [a.refund_reference_id] })).refund_orders[0].refund_status, '2');
      // The processor confirms the first and refuses the second.
      scripted.operationStatusAnswer = { kind: 'approved', reference: 'PSP-1' };
      const first = attemptOf(a)?.attempt_id as string;
      await deps.store.transaction((tx) => tx.updateTable('processor_attempts').set({ next_check_at: 0 }).where('attempt_id', '=', first).execute());
      await sweepAttempts(deps, deps.now() + 20 * 60_000, 1);
      scripted.operationStatusAnswer = { kind: 'declined', code: '1007', reason: 'refused by the acquirer' };
      await sweepAttempts(deps, deps.now() + 30 * 60_000);
      assert.equal(
        await completeRefund(gw.runtime.store, a.refund_reference_id, { kind: 'failed', code: '1007' }, gw.clock.now),
        false,
        'a settled refund cannot fail',
      );
      const all = (await search({ refund_reference_ids: [a.refund_reference_id, b.refund_reference_id] })).refund_orders;
      found = [a, b].map((x) => all.find((f: any) => f.refund_reference_id === x.refund_reference_id));
      assert.deepEqual(
        found.map((f: any) => [f.refund_status, f.refund_reference]),
        [
          ['1', 'PSP-1'],
          ['0', ''],
        ],
      );
      assert.match(found[0].refund_processing_date, /^\d{14}$/);
    } finally {
      deps.processorFor = original;
    }
    const o = await orderOf(gw, p.transaction_id);
    assert.deepEqual([o.payment_status, o.refunded_amount], ['4100', '2.00']);
    const ev = await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', b.refund_reference_id).execute();
    assert.deepEqual(
      ev.map((e) => e.event_type),
      ['refund.failed'],
    );
  });

  test('a refund the processor did not answer in time is pending, reserves its amount, and one more refund cannot pass the captured amount', async () => {
    const deps = gw.runtime.deps;
    const original = deps.processorFor;
    const timeout = deps.settings.processor_timeout_ms;
    const p = await pay(gw);
    const scripted = new ScriptedProcessor();
    scripted.operation = () => HANG();
    deps.processorFor = () => scripted;
    deps.settings.processor_timeout_ms = 100;
    try {
      const [r] = (await refundBatch(gw, [refund(p, '8.00')])).refund_orders;
      assert.equal(r.refund_status, '2');
      const [more] = (await refundBatch(gw, [refund(p, '3.00')])).refund_orders;
      assert.equal(more.refund_status, '0');
      assert.match(more.refund_message, /^1013:/);
      const [a] = await deps.store.db.selectFrom('processor_attempts').selectAll().where('object_id', '=', r.refund_reference_id).execute();
      assert.equal(a?.status, 'unknown');
      // The processor never received it: the refund fails and its amount is refundable again.
      scripted.operationStatusAnswer = { kind: 'not_found' };
      await sweepAttempts(deps, deps.now() + 60 * 60_000);
      scripted.operation = async () => ({ kind: 'approved', reference: 'PSP-3' });
      const [again] = (await refundBatch(gw, [refund(p, '3.00')])).refund_orders;
      assert.equal(again.refund_status, '1', 'the failed refund gave its 8.00 back');
      const o = await orderOf(gw, p.transaction_id);
      assert.deepEqual([o.payment_status, o.refunded_amount], ['4100', '3.00']);
    } finally {
      deps.processorFor = original;
      deps.settings.processor_timeout_ms = timeout;
    }
  });
});

describe('refund search (docs/contract.md §8)', () => {
  test('by refund_reference_ids, transaction_ids, order_nos, with every field of the spec', async () => {
    const p = await pay(gw);
    const [r1, r2] = (await refundBatch(gw, [refund(p, '1.00'), refund(p, '2.00')])).refund_orders;
    for (const sel of [
      { refund_reference_ids: [r1.refund_reference_id, r2.refund_reference_id] },
      { transaction_ids: p.transaction_id },
      { order_nos: [p.order_no] },
    ]) {
      const res = await search(sel);
      assert.equal(res.status, 200);
      assert.equal(res.return_status, '1');
      assert.ok(res.encryption_data);
      assert.equal(res.refund_orders.length, 2, JSON.stringify(sel));
      const f = res.refund_orders.find((x: any) => x.refund_reference_id === r1.refund_reference_id);
      assert.deepEqual(Object.keys(f).sort(), [
        'amount',
        'currency',
        'order_no',
        'payment_status',
        'query_result',
        'refund_amount',
        'refund_date',
        'refund_processing_date',
        'refund_reason',
        'refund_reference',
        'refund_reference_id',
        'refund_status',
        'transaction_id',
      ]);
      assert.deepEqual([f.payment_status, f.query_result], ['4100', '1']);
      assert.match(f.refund_date, /^\d{14}$/);
    }
  });

  test('every unknown id is answered with query_result 0 and its id, as the order query does', async () => {
    const p = await pay(gw);
    const [r1] = (await refundBatch(gw, [refund(p, '1.00')])).refund_orders;
    const unpaid = await pay(gw); // a transaction with no refund is "not found" here too
    const res = await search({
      refund_reference_ids: [r1.refund_reference_id, 'NOPE-01'],
      transaction_ids: [unpaid.transaction_id],
      order_nos: 'missing-order',
    });
    assert.equal(res.status, 200);
    assert.equal(res.refund_orders.length, 4);
    assert.deepEqual(
      res.refund_orders.map((x: any) => [x.query_result, x.refund_reference_id, x.transaction_id, x.order_no]),
      [
        ['1', r1.refund_reference_id, p.transaction_id, p.order_no],
        ['0', 'NOPE-01', '', ''],
        ['0', '', unpaid.transaction_id, ''],
        ['0', '', '', 'missing-order'],
      ],
    );
    const missing = res.refund_orders[1];
    assert.deepEqual(Object.keys(missing).sort(), Object.keys(res.refund_orders[0]).sort(), 'a not-found item has the same fields');
    assert.equal(missing.refund_status, '');
  });

  test('another merchant never sees these refunds', async () => {
    const p = await pay(gw);
    await refundBatch(gw, [refund(p, '1.00')]);
    const other = await gw.newMerchant();
    const res = await gw.post(
      '/v1/retrievalRefund',
      { merchant_id: other.merchant_id, account_id: other.account_id, transaction_ids: [p.transaction_id] },
      { merchant: other },
    );
    const items = JSON.parse(res.body).refund_orders;
    assert.deepEqual(
      items.map((x: any) => [x.query_result, x.transaction_id, x.refund_reference_id]),
      [['0', p.transaction_id, '']],
    );
  });

  test('a date range pages with a cursor, 100 per answer', async () => {
    const m = await gw.newMerchant();
    const start = gw.clock.now;
    const paid = await Promise.all(Array.from({ length: 21 }, () => pay(gw, { merchant: m })));
    for (const p of paid) await refundBatch(gw, [refund(p, '1.00'), refund(p, '1.00'), refund(p, '1.00'), refund(p, '1.00'), refund(p, '1.00')], m);
    const fmt = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const body = { merchant_id: m.merchant_id, account_id: m.account_id, start_date: fmt(start - 1000), end_date: fmt(gw.clock.now + 1000) };
    const one = JSON.parse((await gw.post('/v1/retrievalRefund', body, { merchant: m })).body);
    assert.equal(one.refund_orders.length, 100);
    assert.ok(one.next_cursor);
    const two = JSON.parse((await gw.post('/v1/retrievalRefund', { ...body, cursor: one.next_cursor }, { merchant: m })).body);
    assert.equal(two.refund_orders.length, 5);
    assert.equal(two.next_cursor, undefined);
    const ids = new Set([...one.refund_orders, ...two.refund_orders].map((r: any) => r.refund_reference_id));
    assert.equal(ids.size, 105);
  });

  test('bad selectors are refused whole with 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /refund_reference_ids/],
      [{ transaction_ids: Array.from({ length: 101 }, (_, i) => `T${i}`).join(',') }, /at most 100/],
      [{ start_date: '20250101000000' }, /end_date/],
      [{ transaction_ids: ['A'], start_date: '20250101000000', end_date: '20250102000000' }, /start_date/],
      [{ start_date: '20250101000000', end_date: '20250102000000', cursor: 'garbage' }, /cursor/],
    ];
    for (const [sel, re] of cases) {
      const res = await search(sel);
      assert.equal(res.status, 400, JSON.stringify(sel));
      assert.equal(res.return_status, '0');
      assert.match(res.error_message, re);
    }
  });
});
