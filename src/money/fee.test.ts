// Fee rounding, pinned (issue 30 item 3): the one helper both fee computations go through
// (src/test/fees.test.ts checks each of them against the same rows). One row per case: the
// answers are the ones both computations gave before they shared the helper.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { feeMinor } from './fee.js';

// amount_minor, percent_bp, fixed_minor → fee_minor (percent half up, then the fixed part)
const FEE_CASES: Array<[number, number, number, number]> = [
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

test('feeMinor: basis points of the amount rounded half up, plus the fixed part', () => {
  for (const [amount_minor, percent_bp, fixed_minor, fee] of FEE_CASES) {
    assert.equal(feeMinor(amount_minor, percent_bp, fixed_minor), fee, `${amount_minor} × ${percent_bp} bp + ${fixed_minor}`);
  }
});

test('every amount of 0 to 20,000 at a spread of rates: the exact half-up quotient', () => {
  for (const percent_bp of [0, 1, 7, 99, 100, 125, 290, 333, 5000, 9999, 10_000]) {
    for (let amount_minor = 0; amount_minor <= 20_000; amount_minor++) {
      // The exact half-up quotient in plain integers (the product stays far below 2^53 here).
      const product = amount_minor * percent_bp;
      const expected = Math.floor(product / 10_000) + (product % 10_000 >= 5000 ? 1 : 0);
      assert.equal(feeMinor(amount_minor, percent_bp, 0), expected);
    }
  }
});
