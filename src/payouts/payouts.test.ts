// Payouts (docs/contract.md §17) through the API on SQLite and PostgreSQL: funding under
// concurrency, request_id replays, FX with markup, fees both ways, every failure path
// releasing funds, signed answers, notifications, cancel, the search selectors, the ledger.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { verify } from '../crypto/signature.js';
import { applyMarkup, parseRate, paymentFor, sourceFor } from '../fx/convert.js';
import { setRate } from '../fx/rates.js';
import { accountBalances } from '../ledger/balances.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { type Receiver, startReceiver } from '../notifications/test-receiver.js';
import { DeliveryWorker } from '../notifications/worker.js';
import { advanceClock } from '../scheduler/clock.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { setMarkup, setPayoutPricing, topUp } from './admin.js';

type Json = Record<string, any>;

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
const SWIFT_DELAY = 5_000;

let gw: TestGateway;
let scheduler: Scheduler;
let receiver: Receiver;
before(async () => {
  gw = await testGateway({ start_ms: NOW, settings: { sandbox_swift_delay_ms: SWIFT_DELAY } });
  scheduler = createScheduler(gw.runtime);
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await gw.close();
});

const ACH_BENEFICIARY = {
  entity_type: 'COMPANY',
  company_name: 'Acme Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: { account_name: 'Acme Supplies LLC', account_number: '000123456789', bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' },
};

const SEPA_BENEFICIARY = {
  entity_type: 'PERSONAL',
  first_name: 'Lena',
  last_name: 'Schmidt',
  address: { country_code: 'DE', city: 'Berlin', street_address: 'Unter den Linden 1', postcode: '10117' },
  bank_details: { account_name: 'Lena Schmidt', iban: 'DE89370400440532013000', bank_country_code: 'DE', account_currency: 'EUR' },
};

function withAccount(b: Json, account_number: string): Json {
  return { ...b, bank_details: { ...b.bank_details, account_number } };
}

function body(merchant: CreatedMerchant, overrides: Json = {}): Json {
  const b: Json = {
    merchant_id: merchant.merchant_id,
    account_id: merchant.account_id,
    request_id: randomUUID(),
    beneficiary: ACH_BENEFICIARY,
    payment_currency: 'USD',
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: 'INV-1001',
    source_currency: 'USD',
    payment_amount: '100.00',
    notify_url: receiver.url,
    ...overrides,
  };
  for (const k of Object.keys(b)) if (b[k] === undefined) delete b[k];
  return b;
}

async function payout(merchant: CreatedMerchant, b: Json): Promise<{ status: number; rec: Json; headers: Record<string, unknown> }> {
  const res = await gw.post('/v1/payout', b, { merchant });
  return { status: res.statusCode, rec: JSON.parse(res.body) as Json, headers: res.headers as Record<string, unknown> };
}

async function ok(merchant: CreatedMerchant, overrides: Json = {}): Promise<Json> {
  const r = await payout(merchant, body(merchant, overrides));
  assert.equal(r.status, 200, JSON.stringify(r.rec));
  return r.rec;
}

async function funded(currency = 'USD', amount = '1000.00'): Promise<CreatedMerchant> {
  const merchant = await gw.newMerchant();
  await topUp(gw.runtime.store, { account_id: merchant.account_id, currency, amount }, gw.clock.now);
  return merchant;
}

async function balance(account_id: string, currency = 'USD') {
  const b = (await accountBalances(gw.runtime.store.db, account_id)).find((x) => x.currency === currency);
  return { available: b?.available_minor ?? 0, reserved: b?.payouts_reserved_minor ?? 0 };
}

async function runJobs(ms: number): Promise<void> {
  gw.clock.advance(ms);
  for (let i = 0; i < 10; i++) if ((await scheduler.runDue(gw.clock.now, 100)).claimed === 0) break;
}

async function ledgerOk(): Promise<void> {
  const report = await verifyLedger(gw.runtime.store.db);
  assert.ok(report.ok, report.problems.join('\n'));
}

describe('payouts', () => {
  test('a LOCAL payout completes at once, is signed, and moves the money out of available', async () => {
    const m = await funded();
    const rec = await ok(m, { client_data: 'batch 7', payer: { entity_type: 'COMPANY', company_name: 'Shop Ltd', address: { country_code: 'GB' } } });
    assert.equal(rec.status, 'COMPLETED');
    assert.equal(rec.amount_beneficiary_receives, 10000);
    assert.equal(rec.amount_payer_pays, 10000);
    assert.equal(rec.fee_amount, 0);
    assert.equal(rec.fee_currency, 'USD');
    assert.equal(rec.beneficiary.bank_details.local_clearing_system, 'ACH');
    assert.equal(rec.beneficiary.bank_details.bank_code, undefined, 'bank_code is not echoed');
    assert.equal(rec.beneficiary.address.street_address, '1 Main St');
    assert.equal(rec.client_data, 'batch 7');
    assert.match(rec.beneficiary_id, /^ben_/);
    assert.match(rec.short_reference_id, /^P261124-[A-Z0-9]{8}$/);
    assert.match(rec.created_at, /^2026-11-24T09:00:00\+00:00$/);
    assert.ok(verify(rec, rec.encryption_data, [m.secret_key]), 'the answer signature verifies');
    assert.deepEqual(await balance(m.account_id), { available: 90000, reserved: 0 });
    await ledgerOk();
  });

  test('50 concurrent payouts that exceed the balance: exactly the affordable ones complete, available never below zero', async () => {
    const m = await funded('USD', '1000.00');
    const results = await Promise.all(Array.from({ length: 50 }, () => payout(m, body(m, { payment_amount: '30.00' }))));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.rec));
    const completed = results.filter((r) => r.rec.status === 'COMPLETED');
    const failed = results.filter((r) => r.rec.status === 'FAILED');
    assert.equal(completed.length, 33);
    assert.equal(failed.length, 17);
    for (const f of failed) assert.equal(f.rec.failure_type, 'INSUFFICIENT_FUNDS');
    assert.deepEqual(await balance(m.account_id), { available: 1000, reserved: 0 });
    await ledgerOk();
  });

  test('the same request_id replays the payout; another body with it is 409 and changes nothing', async () => {
    const m = await funded();
    const b = body(m);
    const first = await payout(m, b);
    const again = await payout(m, b);
    assert.equal(again.status, 200);
    assert.equal(again.rec.transaction_id, first.rec.transaction_id);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const upper = await payout(m, { ...b, request_id: String(b.request_id).toUpperCase() });
    assert.equal(upper.rec.transaction_id, first.rec.transaction_id, 'a UUID in upper case names the same payout');
    const changed = await payout(m, { ...b, payment_amount: '101.00' });
    assert.equal(changed.status, 409, JSON.stringify(changed.rec));
    assert.equal(changed.rec.error_field, 'request_id');
    assert.deepEqual(await balance(m.account_id), { available: 90000, reserved: 0 });
  });

  test('an EUR payout from USD: the configured rate less the markup, both amounts consistent, rounded in the gateway’s favour', async () => {
    const m = await funded();
    await setRate(gw.runtime.store, 'USD', 'EUR', '0.9213', gw.clock.now);
    await setMarkup(gw.runtime.store, m.account_id, '0.5', gw.clock.now);
    const rate = applyMarkup(parseRate('0.9213') as bigint, 50);
    const fixedPayment = await ok(m, { beneficiary: SEPA_BENEFICIARY, payment_currency: 'EUR', payment_amount: '100.00' });
    assert.equal(fixedPayment.status, 'COMPLETED', JSON.stringify(fixedPayment));
    assert.equal(fixedPayment.fx_rate, '0.91669350'.replace(/0+$/, ''));
    assert.equal(fixedPayment.beneficiary.bank_details.local_clearing_system, 'SEPA');
    assert.equal(fixedPayment.amount_beneficiary_receives, 10000);
    assert.equal(fixedPayment.amount_payer_pays, sourceFor(10000, rate, 'USD', 'EUR').source_minor);
    // Never worth more than was paid: the source amount converts back to at least the payment.
    assert.ok(paymentFor(fixedPayment.amount_payer_pays, rate, 'USD', 'EUR').payment_minor >= 10000);
    const fixedSource = await ok(m, { beneficiary: SEPA_BENEFICIARY, payment_currency: 'EUR', payment_amount: undefined, source_amount: '50.00' });
    assert.equal(fixedSource.amount_payer_pays, 5000);
    assert.equal(fixedSource.amount_beneficiary_receives, paymentFor(5000, rate, 'USD', 'EUR').payment_minor);
    assert.equal((await balance(m.account_id)).available, 100000 - fixedPayment.amount_payer_pays - 5000);
    await ledgerOk();
  });

  test('fee_paid_by PAYER adds the fee to the debit; BENEFICIARY takes it out of what the beneficiary receives', async () => {
    const m = await funded();
    await setPayoutPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', method: 'LOCAL', percent: '1', fixed: '0.50' }, gw.clock.now);
    const payer = await ok(m, { payment_amount: '100.00', fee_paid_by: 'PAYER' });
    assert.deepEqual([payer.amount_payer_pays, payer.fee_amount, payer.amount_beneficiary_receives], [10000, 150, 10000]);
    const bene = await ok(m, { payment_amount: '100.00', fee_paid_by: 'BENEFICIARY' });
    assert.deepEqual([bene.amount_payer_pays, bene.fee_amount, bene.amount_beneficiary_receives], [9850, 150, 9850]);
    assert.equal((await balance(m.account_id)).available, 100000 - 10150 - 10000);
    const fees = (await accountBalances(gw.runtime.store.db, m.account_id)).find((b) => b.currency === 'USD')?.fees_minor;
    assert.equal(fees, 300);
    await ledgerOk();
  });

  test('every failure path releases the funds: insufficient, invalid account, returned after dispatch', async () => {
    const m = await funded('USD', '100.00');
    const poor = await ok(m, { payment_amount: '100.01' });
    assert.deepEqual([poor.status, poor.failure_type], ['FAILED', 'INSUFFICIENT_FUNDS']);
    const invalid = await ok(m, { beneficiary: withAccount(ACH_BENEFICIARY, '000111111116'), payment_amount: '60.00' });
    assert.deepEqual([invalid.status, invalid.failure_type], ['FAILED', 'INVALID_ACCOUNT']);
    assert.deepEqual(await balance(m.account_id), { available: 10000, reserved: 0 });
    const returned = await ok(m, { beneficiary: withAccount(ACH_BENEFICIARY, '000222222226'), payment_amount: '60.00' });
    assert.equal(returned.status, 'PROCESSING');
    assert.deepEqual(await balance(m.account_id), { available: 4000, reserved: 6000 });
    // While it is reserved, the rest cannot be paid twice over.
    const blocked = await ok(m, { payment_amount: '60.00' });
    assert.equal(blocked.failure_type, 'INSUFFICIENT_FUNDS');
    await runJobs(SWIFT_DELAY);
    const [after] = await search(m, { transaction_ids: [returned.transaction_id] });
    assert.deepEqual([after?.status, after?.failure_type], ['FAILED', 'RETURNED']);
    assert.deepEqual(await balance(m.account_id), { available: 10000, reserved: 0 });
    await ledgerOk();
  });

  test('SWIFT payouts are PROCESSING until the sandbox delay has passed, then COMPLETED', async () => {
    const m = await funded();
    const swiftBeneficiary = { ...ACH_BENEFICIARY, bank_details: { ...ACH_BENEFICIARY.bank_details, swift_code: 'CHASUS33' } };
    const rec = await ok(m, { beneficiary: swiftBeneficiary, payment_method: 'SWIFT', swift_charge_option: 'SHARED' });
    assert.equal(rec.status, 'PROCESSING');
    assert.equal(rec.beneficiary.bank_details.local_clearing_system, 'SWIFT');
    await runJobs(SWIFT_DELAY - 1_000);
    assert.equal((await search(m, { request_ids: [rec.request_id] }))[0]?.status, 'PROCESSING');
    await runJobs(1_000);
    assert.equal((await search(m, { request_ids: [rec.request_id] }))[0]?.status, 'COMPLETED');
    assert.deepEqual(await balance(m.account_id), { available: 90000, reserved: 0 });
    await ledgerOk();
  });

  test('a SCHEDULED payout reserves its funds, can be cancelled (funds back), and one not cancelled is paid on its date', async () => {
    const m = await funded();
    const cancelMe = await ok(m, { payment_date: '2026-11-26' });
    const keep = await ok(m, { payment_date: '2026-11-25', payment_amount: '10.00' });
    assert.equal(cancelMe.status, 'SCHEDULED');
    assert.deepEqual(await balance(m.account_id), { available: 89000, reserved: 11000 });
    const cancel = async (sel: Json) =>
      JSON.parse((await gw.post('/v1/cancelpayout', { merchant_id: m.merchant_id, account_id: m.account_id, ...sel }, { merchant: m })).body) as Json;
    const c = await cancel({ request_id: cancelMe.request_id });
    assert.deepEqual([c.cancel_status, c.status, c.error_message], ['1', 'CANCELLED', '']);
    assert.ok(verify(c, c.encryption_data, [m.secret_key]));
    assert.equal((await cancel({ transaction_id: cancelMe.transaction_id })).cancel_status, '1', 'cancelling again answers 1');
    assert.deepEqual(await balance(m.account_id), { available: 99000, reserved: 1000 });
    await runJobs(86_400_000);
    const [kept] = await search(m, { transaction_ids: [keep.transaction_id] });
    assert.equal(kept?.status, 'COMPLETED');
    const late = await cancel({ transaction_id: keep.transaction_id });
    assert.equal(late.cancel_status, '0');
    assert.match(late.error_message, /^1012:/);
    assert.match((await cancel({ request_id: randomUUID() })).error_message, /^0404:/);
    assert.deepEqual(await balance(m.account_id), { available: 99000, reserved: 0 });
    await runJobs(86_400_000);
    assert.equal((await search(m, { transaction_ids: [cancelMe.transaction_id] }))[0]?.status, 'CANCELLED', 'a cancelled payout is never dispatched');
    await ledgerOk();
  });

  test('a payout dated later that the balance does not cover fails at once (SCHEDULED → FAILED, nothing reserved) and is never dispatched', async () => {
    const m = await funded('USD', '10.00');
    const date = new Date(gw.clock.now + 2 * 86_400_000).toISOString().slice(0, 10);
    const poor = await ok(m, { payment_date: date, payment_amount: '20.00' });
    assert.deepEqual([poor.status, poor.failure_type], ['FAILED', 'INSUFFICIENT_FUNDS']);
    assert.deepEqual(await balance(m.account_id), { available: 1000, reserved: 0 });
    await runJobs(3 * 86_400_000);
    assert.equal((await search(m, { transaction_ids: [poor.transaction_id] }))[0]?.status, 'FAILED');
    assert.deepEqual(await balance(m.account_id), { available: 1000, reserved: 0 });
    await ledgerOk();
  });

  test('notifications arrive: payout.completed and payout.failed, signed, to the payout’s notify_url', async () => {
    const m = await funded('USD', '50.00');
    const good = await ok(m, { payment_amount: '10.00' });
    const bad = await ok(m, { payment_amount: '100.00' });
    const w = new DeliveryWorker({
      store: gw.runtime.store,
      merchants: gw.runtime.merchants,
      allow_private: true,
      timeout_ms: 10_000,
      now: () => gw.clock.now,
    });
    await w.drain();
    const mine = receiver.received.map((r) => JSON.parse(r.body) as Json).filter((e) => e.data?.account_id === m.account_id);
    const byType = new Map(mine.map((e) => [e.event_type, e]));
    assert.equal(byType.get('payout.completed')?.data.transaction_id, good.transaction_id);
    assert.equal(byType.get('payout.failed')?.data.transaction_id, bad.transaction_id);
    for (const e of mine) assert.ok(verify(e, e.encryption_data, [m.secret_key]), 'the notification signature verifies');
  });

  test('retrievalPayout selects by request_ids, transaction_ids, short_reference_ids and a date range with a cursor', async () => {
    const m = await funded();
    const made: Json[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await ok(m, { payment_amount: '1.00' }));
      gw.clock.advance(1_000);
    }
    const [a, b, c] = made as [Json, Json, Json];
    assert.deepEqual(
      (await search(m, { request_ids: [a.request_id] })).map((p) => p.transaction_id),
      [a.transaction_id],
    );
    assert.deepEqual(
      (await search(m, { transaction_ids: `${b.transaction_id},${c.transaction_id}` })).map((p) => p.transaction_id),
      [b.transaction_id, c.transaction_id],
    );
    assert.deepEqual(
      (await search(m, { short_reference_ids: [c.short_reference_id] })).map((p) => p.request_id),
      [c.request_id],
    );
    const missing = await search(m, { request_ids: [randomUUID()] });
    assert.equal(missing[0]?.query_result, '0');
    // Another merchant's payout is not found.
    const other = await funded();
    assert.equal((await search(other, { transaction_ids: [a.transaction_id] }))[0]?.query_result, '0');
    const fmt = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const range = { start_date: fmt(NOW - 86_400_000), end_date: fmt(gw.clock.now + 86_400_000) };
    const all = await search(m, range);
    assert.deepEqual(
      all.map((p) => p.transaction_id),
      made.map((p) => p.transaction_id),
    );
  });

  test('bad requests are refused with the field named and write nothing', async () => {
    const m = await funded();
    const cases: Array<[Json, string]> = [
      [{ payment_amount: undefined }, 'payment_amount'],
      [{ source_amount: '10.00' }, 'source_amount'],
      [{ payment_amount: '10.5' }, 'payment_amount'],
      [{ payment_currency: 'XYZ' }, 'payment_currency'],
      [{ beneficiary: undefined }, 'beneficiary'],
      [{ beneficiary_id: 'ben_doesnotexist', beneficiary: undefined }, 'beneficiary_id'],
      [
        { beneficiary: { ...ACH_BENEFICIARY, bank_details: { ...ACH_BENEFICIARY.bank_details, bank_code: '011000016' } } },
        'beneficiary.bank_details.bank_code',
      ],
      [
        { beneficiary: { ...SEPA_BENEFICIARY, bank_details: { ...SEPA_BENEFICIARY.bank_details, iban: 'DE89370400440532013001' } }, payment_currency: 'EUR' },
        'beneficiary.bank_details.iban',
      ],
      [{ payment_date: '2026-11-23' }, 'payment_date'],
      [{ payment_date: '2026-02-30' }, 'payment_date'],
      [{ swift_charge_option: 'PAYER' }, 'swift_charge_option'],
      [{ request_id: 'not-a-uuid' }, 'request_id'],
    ];
    for (const [overrides, field] of cases) {
      const r = await payout(m, body(m, overrides));
      assert.equal(r.status, 400, `${JSON.stringify(overrides)} → ${JSON.stringify(r.rec)}`);
      assert.equal(r.rec.error_field, field, JSON.stringify(r.rec));
    }
    const count = await gw.runtime.store.db
      .selectFrom('payouts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', m.account_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
    assert.deepEqual(await balance(m.account_id), { available: 100000, reserved: 0 });
  });

  test('a test clock dispatches a SCHEDULED payout on its date, and SWIFT checks as of the clock', async () => {
    const m = await funded();
    const swift = { ...ACH_BENEFICIARY, bank_details: { ...ACH_BENEFICIARY.bank_details, swift_code: 'CHASUS33' } };
    const rec = await ok(m, { payment_date: '2026-12-01', beneficiary: swift, payment_method: 'SWIFT' });
    assert.equal(rec.status, 'SCHEDULED');
    await advanceClock(gw.runtime.store, scheduler, m.account_id, Date.UTC(2026, 11, 1, 0, 0, 1), gw.clock.now);
    assert.equal((await search(m, { transaction_ids: [rec.transaction_id] }))[0]?.status, 'PROCESSING');
    await advanceClock(gw.runtime.store, scheduler, m.account_id, Date.UTC(2026, 11, 1, 0, 0, 10), gw.clock.now);
    assert.equal((await search(m, { transaction_ids: [rec.transaction_id] }))[0]?.status, 'COMPLETED');
    await ledgerOk();
  });

  test('a live account without a payout connector is refused (1016) and nothing is written', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const r = await payout(live, body(live));
    assert.equal(r.status, 403, JSON.stringify(r.rec));
    assert.match(r.rec.return_message, /^1016:/);
    const n = await gw.runtime.store.db
      .selectFrom('payouts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', live.account_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 0);
  });

  test('ledger verify notices a payout whose status disagrees with its postings', async () => {
    const m = await funded();
    const rec = await ok(m, { payment_amount: '3.00' });
    await gw.runtime.store.transaction(async (tx) => {
      await tx.updateTable('payouts').set({ status: 'PROCESSING' }).where('transaction_id', '=', rec.transaction_id).execute();
    });
    const report = await verifyLedger(gw.runtime.store.db);
    assert.ok(
      report.problems.some((p) => p.includes(rec.transaction_id) && p.includes('payouts_reserved')),
      report.problems.join('\n'),
    );
    await gw.runtime.store.transaction(async (tx) => {
      await tx.updateTable('payouts').set({ status: 'COMPLETED' }).where('transaction_id', '=', rec.transaction_id).execute();
    });
    await ledgerOk();
  });

  test('bodies are compared unambiguously: a value holding "&key=value" is not another field (found in review)', async () => {
    const m = await funded();
    await setPayoutPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', method: 'LOCAL', percent: '1', fixed: '0.00' }, gw.clock.now);
    const request_id = randomUUID();
    const first = await payout(m, body(m, { request_id, client_data: 'x', fee_paid_by: 'BENEFICIARY' }));
    assert.equal(first.status, 200);
    const other = await payout(m, body(m, { request_id, client_data: 'x&fee_paid_by=BENEFICIARY' }));
    assert.equal(other.status, 409, JSON.stringify(other.rec));
    // Two beneficiaries that differ only that way are two saved beneficiaries.
    const { address: _address, ...noAddress } = ACH_BENEFICIARY;
    const b1 = await ok(m, {
      beneficiary: { ...noAddress, company_name: 'A', bank_details: { ...ACH_BENEFICIARY.bank_details, bank_name: 'B' } },
      payment_amount: '1.00',
    });
    const b2 = await ok(m, { beneficiary: { ...noAddress, company_name: 'A&bank_details.bank_name=B' }, payment_amount: '1.00' });
    assert.notEqual(b1.beneficiary_id, b2.beneficiary_id);
  });

  test('with an IBAN, the IBAN is the account: an account_number beside it does not decide (found in review)', async () => {
    const m = await funded('EUR');
    const rec = await ok(m, {
      beneficiary: { ...SEPA_BENEFICIARY, bank_details: { ...SEPA_BENEFICIARY.bank_details, account_number: '000111111116' } },
      payment_currency: 'EUR',
      source_currency: 'EUR',
    });
    assert.equal(rec.status, 'COMPLETED', JSON.stringify(rec));
  });

  test('a date of birth before 1900 is refused', async () => {
    const m = await funded();
    const r = await payout(
      m,
      body(m, { beneficiary: { ...ACH_BENEFICIARY, entity_type: 'PERSONAL', first_name: 'A', last_name: 'B', date_of_birth: '0000-02-29' } }),
    );
    assert.equal(r.status, 400);
    assert.equal(r.rec.error_field, 'beneficiary.date_of_birth');
  });

  test('a saved beneficiary is paid again by its beneficiary_id', async () => {
    const m = await funded();
    const first = await ok(m, { payment_amount: '5.00' });
    const second = await ok(m, { beneficiary: undefined, beneficiary_id: first.beneficiary_id, payment_amount: '6.00' });
    assert.equal(second.status, 'COMPLETED');
    assert.equal(second.beneficiary.company_name, 'Acme Supplies LLC');
    const third = await ok(m, { payment_amount: '7.00' });
    assert.equal(third.beneficiary_id, first.beneficiary_id, 'the same beneficiary is saved once');
  });
});

async function search(m: CreatedMerchant, sel: Json): Promise<Json[]> {
  const res = await gw.post('/v1/retrievalPayout', { merchant_id: m.merchant_id, account_id: m.account_id, ...sel }, { merchant: m });
  assert.equal(res.statusCode, 200, res.body);
  const answer = JSON.parse(res.body) as Json;
  assert.ok(verify(answer, answer.encryption_data, [m.secret_key]));
  return answer.payouts as Json[];
}
