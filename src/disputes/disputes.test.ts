// The dispute aggregate (docs/contract.md §22; issue 34 items 1 and 2): the sandbox's dispute cards
// open a chargeback or an inquiry a few seconds after capture (the scheduler, moved by the
// test clock), the amount and the dispute fee leave the available balance and come back when
// won, evidence is kept encrypted and checked by content and size, the sandbox decides by the
// evidence's words, a repeated notification changes nothing, a missed deadline loses, and the
// ledger verifies after each. Both engines.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { accountBalances } from '../ledger/balances.js';
import { negativeAvailableNote } from '../ledger/cli.js';
import { verifyLedger } from '../ledger/verify.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { acceptDispute, DisputeRefused, EVIDENCE_MAX_BYTES, giveEvidence, moveDispute, openDispute, sniffEvidence } from './service.js';

let gw: TestGateway;
let key: string;
let scheduler: Scheduler;
const YEAR = new Date().getUTCFullYear() + 2;
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(200, 0x20)]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]);

before(async () => {
  gw = await testGateway();
  key = await gw.apiKey();
  scheduler = createScheduler(gw.runtime);
  await gw.runtime.store.transaction((tx) =>
    tx.insertInto('dispute_fees').values({ account_id: gw.merchant.account_id, currency: 'USD', fee_minor: 1500, updated_at: 0 }).execute(),
  );
});
after(async () => gw.close());

/** A captured test payment of `card`, 100.00 USD, through /v1/payments. */
async function pay(card: string): Promise<string> {
  const r = await gw.generic('POST', '/v1/payments', key, {
    amount: 10000,
    currency: 'usd',
    payment_method: { type: 'card', card: { number: card, exp_month: 12, exp_year: YEAR, cvc: '123' } },
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json().transaction_id;
}

const available = async () => (await accountBalances(gw.runtime.store.db, gw.merchant.account_id)).find((b) => b.currency === 'USD')?.available_minor ?? 0;
const disputeOf = (tid: string) => gw.runtime.store.db.selectFrom('disputes').selectAll().where('transaction_id', '=', tid).executeTakeFirst();
const deps = () => gw.runtime.deps;

/** Moves the clock past the sandbox's delay and runs what fell due. */
async function later(ms = 6_000): Promise<void> {
  gw.clock.advance(ms);
  await scheduler.runDue(deps().now());
}

async function ledgerOk(): Promise<void> {
  const report = await verifyLedger(gw.runtime.store.db);
  assert.deepEqual(report.problems, []);
}

describe('disputes from the sandbox’s dispute cards', () => {
  test('4000000000000259: a fraudulent chargeback after capture takes the amount and the fee; winning evidence gives the amount back', async () => {
    const tid = await pay('4000000000000259');
    assert.equal(await disputeOf(tid), undefined, 'not before the delay');
    const before = Number(await available());
    await later();
    const d = await disputeOf(tid);
    assert.ok(d, 'disputed after the delay');
    assert.equal(d.status, 'needs_response');
    assert.equal(d.reason, 'fraudulent');
    assert.equal(d.kind, 'chargeback');
    assert.equal(Number(d.amount_minor), 10000);
    assert.equal(Number(d.fee_minor), 1500);
    assert.equal(Number(await available()), before - 11500, 'amount and fee leave the available balance');
    const events = await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', d.dispute_id).execute();
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['dispute.created'],
    );
    await ledgerOk();

    // A repeated notification (the same processor reference) opens nothing more.
    const payment = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', tid).executeTakeFirstOrThrow();
    const again = await openDispute(
      deps(),
      { connector: 'sandbox', processor_ref: `sandbox:${tid}`, payment, kind: 'chargeback', reason: 'fraudulent' },
      deps().now(),
    );
    assert.equal(again.opened, false);
    assert.equal(again.dispute.dispute_id, d.dispute_id);
    assert.equal(Number(await available()), before - 11500);

    const given = await giveEvidence(
      deps(),
      d,
      [
        { field: 'uncategorized_text', text: 'Delivered and signed for. winning_evidence' },
        { field: 'receipt', file_name: 'receipt.pdf', bytes: PDF },
      ],
      true,
      deps().now(),
    );
    assert.equal(given.dispute.status, 'under_review');
    const stored = await gw.runtime.store.db.selectFrom('dispute_evidence').selectAll().where('dispute_id', '=', d.dispute_id).execute();
    assert.equal(stored.length, 2);
    assert.doesNotMatch(JSON.stringify(stored), /winning_evidence|%PDF/, 'evidence is encrypted at rest');
    await later();
    const won = await disputeOf(tid);
    assert.equal(won?.status, 'won');
    assert.equal(Number(await available()), before - 1500, 'the amount comes back, the fee does not');
    await ledgerOk();
  });

  test('4000000000002685: product not received; losing evidence loses, the money stays out; a closed dispute takes no evidence', async () => {
    const tid = await pay('4000000000002685');
    await later();
    const d = await disputeOf(tid);
    assert.equal(d?.reason, 'product_not_received');
    const before = Number(await available());
    await giveEvidence(deps(), d as NonNullable<typeof d>, [{ field: 'uncategorized_text', text: 'losing_evidence' }], true, deps().now());
    await later();
    const lost = await disputeOf(tid);
    assert.equal(lost?.status, 'lost');
    assert.equal(Number(await available()), before);
    await assert.rejects(
      giveEvidence(deps(), lost as NonNullable<typeof lost>, [{ field: 'uncategorized_text', text: 'more' }], false, deps().now()),
      DisputeRefused,
    );
    await ledgerOk();
  });

  test('4000000000001976: an inquiry moves no money; escalated it does; accepted it closes', async () => {
    const tid = await pay('4000000000001976');
    const before = Number(await available());
    await later();
    const d = await disputeOf(tid);
    assert.equal(d?.status, 'warning_needs_response');
    assert.equal(d?.kind, 'inquiry');
    assert.equal(Number(await available()), before, 'an inquiry moves no money');
    const escalated = await moveDispute(deps(), (d as NonNullable<typeof d>).dispute_id, 'escalate', deps().now());
    assert.equal(escalated.dispute.status, 'needs_response');
    assert.equal(Number(await available()), before - 11500);
    // Reordered: an escalation again changes nothing.
    assert.equal((await moveDispute(deps(), escalated.dispute.dispute_id, 'escalate', deps().now())).moved, false);
    const accepted = await acceptDispute(deps(), escalated.dispute, deps().now());
    assert.equal(accepted.status, 'accepted');
    assert.ok(accepted.closed_at);
    await assert.rejects(acceptDispute(deps(), accepted, deps().now()), DisputeRefused);
    await ledgerOk();
  });

  test('a success card is never disputed; a dispute left unanswered past its deadline is lost', async () => {
    const plain = await pay('4242424242424242');
    await later();
    assert.equal(await disputeOf(plain), undefined);
    const tid = await pay('4000000000000259');
    await later();
    const d = await disputeOf(tid);
    assert.equal(d?.status, 'needs_response');
    gw.clock.advance(8 * 24 * 3600 * 1000);
    await scheduler.runSweeps(deps().now(), gw.merchant.account_id);
    assert.equal((await disputeOf(tid))?.status, 'lost');
    await ledgerOk();
    // The books are checked against each dispute: a status that does not match its postings is a problem.
    await gw.runtime.store.transaction((tx) => tx.updateTable('disputes').set({ status: 'won' }).where('transaction_id', '=', tid).execute());
    const report = await verifyLedger(gw.runtime.store.db);
    assert.equal(report.ok, false);
    assert.match(report.problems.join('\n'), /dispute dp_\w+ \(chargeback, won\): available posts -11500, expected -1500/);
    await gw.runtime.store.transaction((tx) => tx.updateTable('disputes').set({ status: 'lost' }).where('transaction_id', '=', tid).execute());
  });
});

describe('a request re-run after a crash (the same Idempotency-Key record) is answered, never applied twice', () => {
  test('evidence given again stores nothing; a submit again is answered, not refused', async () => {
    const tid = await pay('4000000000000259');
    await later();
    const d = (await disputeOf(tid)) as NonNullable<Awaited<ReturnType<typeof disputeOf>>>;
    const rows = async () =>
      (await gw.runtime.store.db.selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', d.dispute_id).execute()).length;
    const piece = [{ field: 'uncategorized_text', text: 'tracking 1Z999' }];
    await giveEvidence(deps(), d, piece, false, deps().now(), 'idk_first');
    const again = await giveEvidence(deps(), d, piece, false, deps().now(), 'idk_first');
    assert.equal(again.replayed, true);
    assert.equal(await rows(), 1, 'the re-run stored nothing');
    const submitted = await giveEvidence(deps(), d, [{ field: 'product_description', text: 'winning_evidence' }], true, deps().now(), 'idk_submit');
    assert.equal(submitted.dispute.status, 'under_review');
    const rerun = await giveEvidence(deps(), d, [{ field: 'product_description', text: 'winning_evidence' }], true, deps().now(), 'idk_submit');
    assert.equal(rerun.replayed, true);
    assert.equal(rerun.dispute.status, 'under_review');
    assert.equal(await rows(), 2);
    // Another request (another key) is refused: the dispute takes no more evidence.
    await assert.rejects(giveEvidence(deps(), rerun.dispute, piece, false, deps().now(), 'idk_other'), DisputeRefused);
    const events = await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', d.dispute_id).execute();
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['dispute.created', 'dispute.updated', 'dispute.updated'],
    );
  });
});

describe('evidence is checked before anything is kept', () => {
  test('files by content (PDF, PNG, JPEG), never by name; 5 MB in all', async () => {
    assert.equal(sniffEvidence(PDF), 'application/pdf');
    assert.equal(sniffEvidence(PNG), 'image/png');
    assert.equal(sniffEvidence(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), 'image/jpeg');
    assert.equal(sniffEvidence(Buffer.from('MZ\x90\x00 not a pdf')), null);
    const tid = await pay('4000000000000259');
    await later();
    const d = (await disputeOf(tid)) as NonNullable<Awaited<ReturnType<typeof disputeOf>>>;
    const count = async () =>
      (await gw.runtime.store.db.selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', d.dispute_id).execute()).length;
    await assert.rejects(
      giveEvidence(deps(), d, [{ field: 'receipt', file_name: 'receipt.pdf', bytes: Buffer.from('<html>not a pdf</html>') }], false, deps().now()),
      (e: unknown) => e instanceof DisputeRefused && e.field === 'evidence[0]',
    );
    const big = Buffer.concat([PDF, Buffer.alloc(EVIDENCE_MAX_BYTES)]);
    await assert.rejects(
      giveEvidence(deps(), d, [{ field: 'receipt', file_name: 'r.pdf', bytes: big }], false, deps().now()),
      (e: unknown) => e instanceof DisputeRefused && e.field === 'evidence',
    );
    assert.equal(await count(), 0, 'nothing kept of refused evidence');
    await giveEvidence(deps(), d, [{ field: 'shipping_documentation', file_name: 'label.png', bytes: PNG }], false, deps().now());
    assert.equal(await count(), 1);
    assert.equal((await disputeOf(tid))?.status, 'needs_response', 'evidence without submit does not submit');
  });
});

describe('evidence uploads at once', () => {
  // Issue 34 review, item 3: the 5 MB are summed under the dispute's lock, so uploads at once cannot pass it together (PostgreSQL).
  test('four uploads of 2 MB at once: at most two are kept, 5 MB in all, the others refused naming evidence', async () => {
    const tid = await pay('4000000000000259');
    await later();
    const d = (await disputeOf(tid)) as NonNullable<Awaited<ReturnType<typeof disputeOf>>>;
    const file = Buffer.concat([PDF, Buffer.alloc(2 * 1024 * 1024 - PDF.length)]);
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map((i) => giveEvidence(deps(), d, [{ field: 'receipt', file_name: `r${i}.pdf`, bytes: file }], false, deps().now())),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    assert.equal(refused.length, 2, 'two of the four refused');
    for (const r of refused) assert.ok(r.reason instanceof DisputeRefused && r.reason.field === 'evidence', String(r.reason));
    const held = await gw.runtime.store.db.selectFrom('dispute_evidence').select('size_bytes').where('dispute_id', '=', d.dispute_id).execute();
    assert.equal(held.length, 2);
    assert.ok(held.reduce((a, r) => a + Number(r.size_bytes), 0) <= EVIDENCE_MAX_BYTES);
  });
});

describe('a negative balance holds payouts', () => {
  // Issue 34 review, item 5 (§22: a balance may go negative and then holds payouts): refused with its code, nothing reserved.
  test('a chargeback before the capture settled takes available below zero; a payout then fails INSUFFICIENT_FUNDS; the balance note names disputes', async () => {
    const m = await gw.newMerchant({ name: 'Disputed before settlement' });
    const r = await gw.post('/v1/authorise', directPayment(m, { card: '4000000000000259', currency: 'USD', amount: '100.00' }), { merchant: m });
    assert.equal(r.statusCode, 200, r.body);
    await later();
    const usd = async () => (await accountBalances(gw.runtime.store.db, m.account_id)).find((b) => b.currency === 'USD');
    const b = await usd();
    assert.equal(b?.available_minor, -10000, 'the disputed 100.00 left available before the capture settled into it');
    assert.match(negativeAvailableNote(b as NonNullable<typeof b>) ?? '', /disputes/);
    const payout = await gw.post(
      '/v1/payout',
      {
        merchant_id: m.merchant_id,
        account_id: m.account_id,
        request_id: randomUUID(),
        beneficiary: {
          entity_type: 'COMPANY',
          company_name: 'Acme Supplies LLC',
          address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
          bank_details: {
            account_name: 'Acme Supplies LLC',
            account_number: '000123456789',
            bank_code: '011000015',
            bank_country_code: 'US',
            account_currency: 'USD',
          },
        },
        payment_currency: 'USD',
        payment_method: 'LOCAL',
        reason: 'supplier invoice',
        reference: 'INV-1001',
        source_currency: 'USD',
        payment_amount: '1.00',
      },
      { merchant: m },
    );
    assert.equal(payout.statusCode, 200, payout.body);
    const rec = JSON.parse(payout.body) as { status: string; failure_type: string };
    assert.deepEqual([rec.status, rec.failure_type], ['FAILED', 'INSUFFICIENT_FUNDS']);
    const after = await usd();
    assert.deepEqual([after?.available_minor, after?.payouts_reserved_minor], [-10000, 0], 'nothing reserved, nothing paid');
    await ledgerOk();
  });
});
