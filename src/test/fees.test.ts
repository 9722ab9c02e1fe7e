// Both fee computations, a payment's (ledger/postings.ts computeFee) and a payout's
// (payouts/quote.ts payoutFee), round as the one helper does (src/money/fee.ts, issue 30
// item 3): the rows are the ones both gave before they shared it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeFee } from '../ledger/postings.js';
import { payoutFee } from '../payouts/quote.js';

// amount_minor, percent_bp, fixed_minor → fee_minor (percent half up, then the fixed part)
const CASES: Array<[number, number, number, number]> = [
  [0, 0, 0, 0],
  [0, 290, 30, 30],
  [1, 0, 0, 0],
  [1, 4999, 0, 0], // 0.4999 → 0
  [1, 5000, 0, 1], // 0.5 → 1 (half up)
  [1, 5001, 0, 1],
  [1, 10_000, 0, 1],
  [3, 5000, 0, 2], // 1.5 → 2
  [5, 5000, 0, 3], // 2.5 → 3 (half up, not half even)
  [100, 290, 30, 33], // 2.9 → 3
  [1000, 290, 30, 59],
  [1050, 290, 0, 30], // 30.45 → 30
  [1052, 250, 0, 26], // 26.3 → 26
  [1020, 250, 0, 26], // 25.5 → 26
  [10_000, 1, 0, 1],
  [4999, 1, 0, 0], // 0.4999 → 0
  [5000, 1, 0, 1], // 0.5 → 1
  [12_345, 175, 25, 241], // 216.0375 → 216
  [999_999, 9999, 0, 999_899], // 999899.0001 → 999899
  [Number.MAX_SAFE_INTEGER, 1, 0, 900_719_925_474], // 900719925474.0991: past 2^53 in the product, exact
  [Number.MAX_SAFE_INTEGER, 10_000, 0, Number.MAX_SAFE_INTEGER],
];

test("a payment's fee is that, never above the captured amount", () => {
  for (const [amount_minor, percent_bp, fixed_minor, fee] of CASES) {
    assert.equal(computeFee(amount_minor, percent_bp, fixed_minor), Math.min(fee, amount_minor), `${amount_minor} × ${percent_bp} bp + ${fixed_minor}`);
  }
});

test("a payout's fee is that, plus the SWIFT charge when the payer bears it", () => {
  for (const [amount_minor, percent_bp, fixed_minor, fee] of CASES) {
    const price = { percent_bp, fixed_minor, swift_payer_minor: 1500 };
    assert.equal(payoutFee(amount_minor, price, 'LOCAL', 'PAYER'), fee);
    assert.equal(payoutFee(amount_minor, price, 'SWIFT', 'SHARED'), fee);
    assert.equal(payoutFee(amount_minor, price, 'SWIFT', 'PAYER'), fee + 1500);
  }
});

test('every amount of 0 to 20,000 at a spread of rates rounds as both computations did', () => {
  for (const percent_bp of [0, 1, 7, 99, 100, 125, 290, 333, 5000, 9999, 10_000]) {
    for (let amount_minor = 0; amount_minor <= 20_000; amount_minor++) {
      // The exact half-up quotient in plain integers (the product stays far below 2^53 here).
      const product = amount_minor * percent_bp;
      const expected = Math.floor(product / 10_000) + (product % 10_000 >= 5000 ? 1 : 0);
      assert.equal(computeFee(amount_minor, percent_bp, 0), Math.min(expected, amount_minor));
      assert.equal(payoutFee(amount_minor, { percent_bp, fixed_minor: 0, swift_payer_minor: 0 }, 'LOCAL', 'SHARED'), expected);
    }
  }
});
