// What a payment's change posts (README.md), as a table: the pure decision behind
// postPaymentChange and its unit-building form, one line per change of held and captured
// amounts. And what a posting adds to a write unit: its posting, entries and balance
// upsert, the balance slot shared by every posting of the unit.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WriteUnit } from '../db/unit.js';
import { BALANCE_SLOTS, capturedBy, type PaymentMoney, paymentChangePostings, postInto, postPaymentChangeInto, UnbalancedPosting } from './postings.js';

const money = (authorised_minor: number, captured_minor: number): PaymentMoney => ({
  account_id: 'acct',
  currency: 'USD',
  transaction_id: 'T1',
  authorised_minor,
  captured_minor,
});

/** A posting as `reason: ledger_account amount, …`, zero lines dropped as `post` drops them. */
const show = (before: PaymentMoney | null, after: PaymentMoney, fee: number) =>
  paymentChangePostings(before, after, fee).map(
    (p) =>
      `${p.reason}: ${p.entries
        .filter((e) => e.amount_minor !== 0)
        .map((e) => `${e.ledger_account} ${e.amount_minor}`)
        .join(', ')}`,
  );

describe('paymentChangePostings', () => {
  const cases: Array<[what: string, before: PaymentMoney | null, after: PaymentMoney, fee: number, want: string[]]> = [
    ['new authorisation: a hold', null, money(1000, 0), 0, ['authorise_hold: processor_clearing -1000, customer_holds 1000']],
    ['new declined payment: nothing', null, money(0, 0), 0, []],
    [
      'new automatic capture: captured from outside, fee taken',
      null,
      money(0, 1000),
      30,
      ['capture: processor_clearing -1000, merchant_pending 1000', 'fee: merchant_pending -30, fees 30'],
    ],
    ['capture without a fee: no fee posting', null, money(0, 1000), 0, ['capture: processor_clearing -1000, merchant_pending 1000']],
    ['full capture of a hold', money(1000, 0), money(0, 1000), 0, ['capture: customer_holds -1000, merchant_pending 1000']],
    [
      'partial capture: the rest of the hold released',
      money(1000, 0),
      money(0, 600),
      10,
      ['capture: customer_holds -600, merchant_pending 600', 'hold_release: customer_holds -400, processor_clearing 400', 'fee: merchant_pending -10, fees 10'],
    ],
    ['cancel: the hold released', money(1000, 0), money(0, 0), 0, ['hold_release: customer_holds -1000, processor_clearing 1000']],
    ['no change: nothing (a fee without a capture is not posted)', money(1000, 0), money(1000, 0), 50, []],
  ];
  for (const [what, before, after, fee, want] of cases) test(what, () => assert.deepEqual(show(before, after, fee), want));

  test('a captured amount never decreases', () => {
    assert.throws(() => capturedBy(money(0, 1000), money(0, 999)), UnbalancedPosting);
    assert.throws(() => paymentChangePostings(money(0, 1000), money(0, 999), 0), UnbalancedPosting);
  });
});

describe('postings in a write unit', () => {
  test('a posting adds its posting row, entries and one balance upsert; every posting of a unit takes one slot', () => {
    const unit = new WriteUnit('sqlite');
    postPaymentChangeInto(unit, money(1000, 0), money(0, 600), 10, 1_700_000_000_000);
    assert.deepEqual(
      unit.ops.map((op) => op.kind),
      ['insert', 'insert', 'upsert', 'insert', 'insert', 'upsert', 'insert', 'insert', 'upsert'],
    );
    assert.ok(unit.ops.every((op) => !op.expected));
    // The slot is the one parameter the balance upserts share besides account, currency and time.
    const slots = unit.ops.filter((op) => op.kind === 'upsert').map((op) => op.parameters.find((v) => typeof v === 'number' && v < BALANCE_SLOTS && v >= 0));
    assert.equal(new Set(slots).size, 1, String(slots));
  });

  test('a posting that nets to nothing adds nothing; an unbalanced one is refused before anything is added', () => {
    const unit = new WriteUnit('postgres');
    assert.equal(postInto(unit, { account_id: 'a', currency: 'USD', reason: 'x', entries: [{ ledger_account: 'fees', amount_minor: 0 }] }, 1), null);
    assert.throws(
      () => postInto(unit, { account_id: 'a', currency: 'USD', reason: 'x', entries: [{ ledger_account: 'fees', amount_minor: 5 }] }, 1),
      UnbalancedPosting,
    );
    assert.equal(unit.ops.length, 0);
  });
});
