// Payouts name the batches they paid (docs/contract.md §23; issue 35 item 1): a payout's debit
// is taken from the available batches, debit batches first, then credit batches oldest day
// first, each up to what earlier payouts left of it; its record and event name them; a payout
// that fails (at once, or returned after dispatch) gives its parts back; ledger verify checks
// the parts against the batches and the records. Both engines.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { post } from '../ledger/postings.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { topUp } from '../payouts/admin.js';
import { signedInUser } from '../portal/testing.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { DAY_MS, runSettlement } from './batches.js';

type Json = Record<string, any>;
const SWIFT_DELAY = 5_000;

let gw: TestGateway;
let scheduler: Scheduler;
before(async () => {
  gw = await testGateway({ start_ms: Date.UTC(2026, 10, 24, 9, 0, 0), settings: { sandbox_swift_delay_ms: SWIFT_DELAY } });
  scheduler = createScheduler(gw.runtime);
});
after(async () => gw.close());

const db = () => gw.runtime.store.db;
const ACH = {
  entity_type: 'COMPANY',
  company_name: 'Acme Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: { account_name: 'Acme Supplies LLC', account_number: '000123456789', bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' },
};

async function payout(m: CreatedMerchant, amount: string, account_number = ACH.bank_details.account_number): Promise<Json> {
  const res = await gw.post(
    '/v1/payout',
    {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      request_id: randomUUID(),
      beneficiary: { ...ACH, bank_details: { ...ACH.bank_details, account_number } },
      payment_currency: 'USD',
      payment_method: 'LOCAL',
      reason: 'supplier invoice',
      reference: 'INV-1',
      source_currency: 'USD',
      payment_amount: amount,
    },
    { merchant: m },
  );
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body) as Json;
}

/** A day's movement, then the clock past midnight and the day's batch closed and settled (T+1). */
async function day(m: CreatedMerchant, minor: number): Promise<string> {
  if (minor > 0) await topUp(gw.runtime.store, { account_id: m.account_id, currency: 'USD', amount: (minor / 100).toFixed(2) }, gw.clock.now);
  else
    await gw.runtime.store.transaction((tx) =>
      post(
        tx,
        {
          account_id: m.account_id,
          currency: 'USD',
          reason: 'adjustment',
          entries: [
            { ledger_account: 'merchant_available', amount_minor: minor },
            { ledger_account: 'processor_clearing', amount_minor: -minor },
          ],
        },
        gw.clock.now,
      ),
    );
  gw.clock.advance(DAY_MS - (gw.clock.now % DAY_MS) + 60_000);
  await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
  const b = await db()
    .selectFrom('settlement_batches')
    .select(['batch_id', 'payable_minor', 'status'])
    .where('account_id', '=', m.account_id)
    .orderBy('day', 'desc')
    .executeTakeFirstOrThrow();
  assert.deepEqual([Number(b.payable_minor), b.status], [minor, 'available']);
  return b.batch_id;
}

const paidOf = async (batch_id: string) =>
  Number((await db().selectFrom('settlement_batches').select('paid_minor').where('batch_id', '=', batch_id).executeTakeFirstOrThrow()).paid_minor);
const parts = (rec: Json) => (rec.settlement_batches as Json[]).map((x) => [x.batch_id, x.amount]);
const verified = async () => assert.deepEqual((await verifyLedger(db())).problems, []);

describe('payouts name the batches they paid', () => {
  test('oldest batch first, up to what is left of it; a payout that fails at once names none and takes nothing', async () => {
    const m = await gw.newMerchant();
    const a = await day(m, 10_000);
    const b = await day(m, 5_000);
    const first = await payout(m, '120.00');
    assert.equal(first.status, 'COMPLETED');
    assert.deepEqual(parts(first), [
      [a, 10_000],
      [b, 2_000],
    ]);
    assert.match(String(first.settlement_batches[0].day), /^\d{4}-\d{2}-\d{2}$/);
    const failed = await payout(m, '10.00', '000111111116');
    assert.deepEqual([failed.status, failed.failure_type, failed.settlement_batches], ['FAILED', 'INVALID_ACCOUNT', []]);
    const second = await payout(m, '30.00');
    assert.deepEqual(parts(second), [[b, 3_000]]);
    assert.deepEqual([await paidOf(a), await paidOf(b)], [10_000, 5_000]);
    // The retrieval and the event carry the same parts.
    const got = await gw.post(
      '/v1/retrievalPayout',
      { merchant_id: m.merchant_id, account_id: m.account_id, transaction_ids: [second.transaction_id] },
      { merchant: m },
    );
    assert.deepEqual(parts(JSON.parse(got.body).payouts[0]), [[b, 3_000]], got.body);
    const event = await db()
      .selectFrom('events')
      .select('payload')
      .where('object_id', '=', second.transaction_id)
      .where('event_type', '=', 'payout.completed')
      .executeTakeFirstOrThrow();
    assert.match(event.payload, new RegExp(b));
    // The portal: the payouts list links the batches each paid; a batch's page lists its payouts.
    const { agent } = await signedInUser(gw, { role: 'viewer', merchant_id: m.merchant_id });
    const list = await agent.get('/portal/payouts');
    assert.equal(list.status, 200);
    assert.match(list.body, new RegExp(`<a href="/portal/settlement/${b}" data-batch-id="${b}">\\d{4}-\\d{2}-\\d{2}</a> \\(30\\.00\\)`));
    const page = await agent.get(`/portal/settlement/${b}`);
    assert.match(page.body, /id="paid-out">50\.00 USD of the 50\.00 USD this batch brought/);
    assert.match(page.body, new RegExp(`data-payout-id="${first.transaction_id}">${first.short_reference_id} \\(completed\\): 20\\.00 USD`));
    assert.doesNotMatch(page.body, new RegExp(failed.transaction_id), 'the failed payout took nothing');
    await verified();
  });

  test('a debit batch (a day that took more than it brought) is carried by the next payout, with credit enough for it', async () => {
    const m = await gw.newMerchant();
    const a = await day(m, 10_000);
    const debit = await day(m, -3_000);
    const c = await day(m, 4_000);
    const p = await payout(m, '90.00');
    assert.deepEqual(parts(p), [
      [debit, -3_000],
      [a, 10_000],
      [c, 2_000],
    ]);
    assert.deepEqual([await paidOf(a), await paidOf(debit), await paidOf(c)], [10_000, -3_000, 2_000]);
    await verified();
  });

  test('a payout returned after dispatch gives its parts back: the next one pays the same batch', async () => {
    const m = await gw.newMerchant();
    const a = await day(m, 10_000);
    const returned = await payout(m, '60.00', '000222222226');
    assert.deepEqual([returned.status, parts(returned)], ['PROCESSING', [[a, 6_000]]]);
    assert.equal(await paidOf(a), 6_000);
    gw.clock.advance(SWIFT_DELAY);
    for (let i = 0; i < 10; i++) if ((await scheduler.runDue(gw.clock.now, 100)).claimed === 0) break;
    const row = await db()
      .selectFrom('payouts')
      .select(['status', 'settlement_batches'])
      .where('transaction_id', '=', returned.transaction_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.settlement_batches], ['FAILED', '[]']);
    assert.equal(await paidOf(a), 0);
    assert.deepEqual(parts(await payout(m, '100.00')), [[a, 10_000]]);
    await verified();
  });

  test('money no available batch holds yet is named by none; ledger verify finds parts that disagree', async () => {
    const m = await gw.newMerchant();
    const a = await day(m, 1_000);
    await topUp(gw.runtime.store, { account_id: m.account_id, currency: 'USD', amount: '50.00' }, gw.clock.now);
    const p = await payout(m, '30.00');
    assert.deepEqual(parts(p), [[a, 1_000]], 'the rest came from today’s top-up, in no closed batch yet');
    await verified();
    const tamper = (paid: number, named: string) =>
      gw.runtime.store.transaction(async (tx) => {
        await tx.updateTable('settlement_batches').set({ paid_minor: paid }).where('batch_id', '=', a).execute();
        await tx.updateTable('payouts').set({ settlement_batches: named }).where('transaction_id', '=', p.transaction_id).execute();
      });
    await tamper(999, '[]');
    const problems = (await verifyLedger(db())).problems.join('\n');
    assert.match(problems, new RegExp(`settlement batch ${a}: paid 999 but payouts took 1000`));
    assert.match(problems, new RegExp(`payout ${p.transaction_id}: its record names \\[\\] but took`));
    await tamper(1_000, JSON.stringify(p.settlement_batches));
    await verified();
  });
});
