// The reconciler's decisions without a database (issue 35 item 3): one line against one movement,
// a table of cases each with the category it must get; the ledger's postings folded into the
// movements a processor reports (a capture with its fee, a refund confirmed or still pending, a
// payment's first and second chargeback with the fee of the first); the set of named movements.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TrackedLine } from './format.js';
import { foldMovements, type Movement, movementKey, type PostingRow } from './ledger.js';
import { type Category, judge } from './match.js';
import { hash64, KeySet, NumberList } from './seen.js';

const line = (o: Partial<TrackedLine> = {}): TrackedLine => ({
  line: 2,
  movement: 'capture',
  type: 'Settled',
  transaction_id: 'TX1',
  refund_id: '',
  refs: ['8815'],
  reference: '8815',
  amount_minor: 1000,
  currency: 'EUR',
  fee_minor: 59,
  at_ms: 0,
  end_ms: 999,
  ordinal: 1,
  ...o,
});
const movement = (o: Partial<Movement> = {}): Movement => ({
  key: 'capture|TX1',
  kind: 'capture',
  transaction_id: 'TX1',
  refund_id: '',
  connector: 'adyen',
  currency: 'EUR',
  amount_minor: 1000,
  fee_minor: 59,
  pending_minor: 0,
  times: [0],
  ...o,
});

describe('judge: the first check that fails names the category', () => {
  const cases: Array<[goal: string, l: TrackedLine, m: Movement | undefined, before: boolean, category: Category, detail: RegExp]> = [
    ['the same payment, amount, currency and fee', line(), movement(), false, 'matched', /^$/],
    ['a fee the report gives in another currency is not compared', line({ fee_minor: null }), movement({ fee_minor: 99 }), false, 'matched', /^$/],
    ['no movement in the ledger', line({ transaction_id: 'TX9' }), undefined, false, 'missing_here', /of payment TX9: no such movement/],
    [
      'no payment named and no reference of ours',
      line({ transaction_id: '', refs: ['ch_1'] }),
      undefined,
      false,
      'missing_here',
      /of reference ch_1: .*names no payment of Tollgate/,
    ],
    ['a payment another connector took', line(), movement({ connector: 'stripe' }), false, 'missing_here', /Tollgate sent this payment to stripe, not adyen/],
    ['a second line for one movement', line(), movement(), true, 'missing_here', /an earlier line of the file reports the same movement/],
    [
      'a refund still pending here',
      line({ movement: 'refund', refund_id: 'TX1-01' }),
      movement({ kind: 'refund', amount_minor: 0, pending_minor: 400 }),
      false,
      'missing_here',
      /refund TX1-01: still pending in Tollgate/,
    ],
    ['another amount', line({ amount_minor: 1100 }), movement(), false, 'amount_differs', /the amounts differ/],
    ['another currency', line({ currency: 'USD' }), movement(), false, 'amount_differs', /EUR in Tollgate, USD at the processor/],
    ['the amount first, though the fee differs too', line({ amount_minor: 1100, fee_minor: 1 }), movement(), false, 'amount_differs', /amounts differ/],
    ['another fee', line({ fee_minor: 50 }), movement(), false, 'fee_differs', /the processor's fee is not the fee Tollgate charged/],
    [
      'a fee where Tollgate charged none',
      line({ movement: 'refund', refund_id: 'R', amount_minor: 400, fee_minor: 12 }),
      movement({ kind: 'refund', amount_minor: 400, fee_minor: 0 }),
      false,
      'fee_differs',
      /fee/,
    ],
  ];
  for (const [goal, l, m, before, category, detail] of cases) {
    test(`${goal}: ${category}`, () => {
      const v = judge(l, m, 'adyen', before);
      assert.equal(v.category, category);
      assert.match(v.detail, detail);
    });
  }
});

const row = (reason: string, amount: number, at: number, o: Partial<PostingRow> = {}): PostingRow => ({
  posting_id: `pst_${at}_${reason}`,
  transaction_id: 'TX1',
  reason,
  ref: '',
  currency: 'EUR',
  created_at: at,
  amount_minor: amount,
  connector: 'adyen',
  ...o,
});

describe('foldMovements: postings into the movements a processor reports', () => {
  test('a capture with its fee; a refund pending then confirmed; another pending only; a failed one', () => {
    const m = foldMovements([
      row('authorise_hold', 5000, 1),
      row('capture', 5000, 2),
      row('fee', 175, 2),
      row('refund_pending', 400, 3, { ref: 'TX1-01' }),
      row('refund_settled', 400, 4, { ref: 'TX1-01' }),
      row('refund_pending', 300, 5, { ref: 'TX1-02' }),
      row('refund_pending', 200, 6, { ref: 'TX1-03' }),
      row('refund_failed', 200, 7, { ref: 'TX1-03' }),
      row('settlement', 4825, 8),
    ]);
    const view = [...m.values()].map((x) => [x.key, x.amount_minor, x.fee_minor, x.pending_minor, x.times]);
    assert.deepEqual(view, [
      ['capture|TX1', 5000, 175, 0, [2]],
      ['refund|TX1-01', 400, 0, 400, [4]],
      ['refund|TX1-02', 0, 0, 300, []],
      ['refund|TX1-03', 0, 0, 200, []],
      ['refund_reversal|TX1-03', 200, 0, 0, []],
    ]);
  });
  test('a chargeback with its fee (posted in the same moment, in either order), won, then a second chargeback', () => {
    const m = foldMovements([
      row('dispute_fee', 1500, 10, { ref: 'dp_1' }),
      row('dispute', 5000, 10, { ref: 'dp_1' }),
      row('dispute_won', 5000, 20, { ref: 'dp_1' }),
      row('dispute', 5000, 30, { ref: 'dp_1' }),
    ]);
    const view = [...m.values()].map((x) => [x.key, x.amount_minor, x.fee_minor]);
    assert.deepEqual(view, [
      ['dispute|TX1|1', 5000, 1500],
      ['dispute_won|TX1|1', 5000, 0],
      ['dispute|TX1|2', 5000, 0],
    ]);
    assert.equal(movementKey('dispute', 'TX1', '', 2), 'dispute|TX1|2');
    assert.equal(movementKey('refund', 'TX1', 'TX1-01', 1), 'refund|TX1-01');
  });
});

describe('KeySet: the movements named so far, as 64-bit hashes', () => {
  test('adds, finds, refuses a second add, and grows without losing any of 200,000 keys', () => {
    const s = new KeySet();
    for (let i = 0; i < 200_000; i++) assert.equal(s.add(`capture|T${i}`), true);
    assert.equal(s.size, 200_000);
    assert.equal(s.add('capture|T12345'), false);
    for (let i = 0; i < 200_000; i += 997) assert.equal(s.has(`capture|T${i}`), true);
    assert.equal(s.has('capture|T200000'), false);
    assert.equal(s.has('refund|T1'), false);
    assert.notDeepEqual(hash64('capture|T1'), hash64('capture|T2'));
  });
  test('NumberList counts the values within a range', () => {
    const l = new NumberList();
    for (let i = 0; i < 5000; i++) l.push(i);
    assert.equal(l.countWithin(100, 199), 100);
    assert.equal(l.length, 5000);
  });
});
