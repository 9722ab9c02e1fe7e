// The payout quote's stated rules (quote.ts), by table and by property: the debit is always
// amount_payer_pays + fee_amount, the beneficiary never receives more than
// amount_payer_pays is worth at the applied rate (no money created), and rounding costs
// the payer at most one minor unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseRate, paymentFor } from '../fx/convert.js';
import { payoutFee, type QuoteInput, quotePayout } from './quote.js';

const rate = (t: string) => parseRate(t) as bigint;
const base: Omit<QuoteInput, 'payment_minor' | 'source_minor'> = {
  source_currency: 'USD',
  payment_currency: 'EUR',
  rate: rate('0.9'),
  fee_paid_by: 'PAYER',
  payment_method: 'LOCAL',
  swift_charge_option: 'SHARED',
  price: { percent_bp: 100, fixed_minor: 50, swift_payer_minor: 1500 },
};

test('table: both amounts, the fee and who bears it', () => {
  const rows: Array<[Partial<QuoteInput>, [number, number, number]]> = [
    // [input, [amount_payer_pays, fee_amount, amount_beneficiary_receives]]
    [{ payment_minor: 9000 }, [10000, 150, 9000]],
    [{ payment_minor: 9001 }, [10002, 150, 9001]], // 100.0111… rounded up
    [{ source_minor: 10000 }, [10000, 150, 9000]],
    [{ source_minor: 10001 }, [10001, 150, 9000]], // 90.009 rounded down
    [{ payment_minor: 9000, fee_paid_by: 'BENEFICIARY' }, [9850, 150, 8865]],
    [{ source_minor: 10000, fee_paid_by: 'BENEFICIARY' }, [9850, 150, 8865]],
    [{ payment_minor: 9000, payment_method: 'SWIFT', swift_charge_option: 'PAYER' }, [10000, 1650, 9000]],
    [{ payment_minor: 9000, payment_method: 'SWIFT', swift_charge_option: 'SHARED' }, [10000, 150, 9000]],
    // BENEFICIARY bears the gateway's fee; the SWIFT charge of option PAYER stays the payer's.
    [{ payment_minor: 9000, fee_paid_by: 'BENEFICIARY', payment_method: 'SWIFT', swift_charge_option: 'PAYER' }, [9850, 1650, 8865]],
    [{ payment_minor: 1000, payment_currency: 'JPY', rate: rate('150.25') }, [666, 57, 1000]],
  ];
  for (const [input, [pays, fee, receives]] of rows) {
    const q = quotePayout({ ...base, ...input } as QuoteInput);
    assert.ok(q.ok, String(Object.entries(input).map(([k, v]) => `${k}=${v}`)));
    assert.deepEqual(
      [q.quote.amount_payer_pays, q.quote.fee_amount, q.quote.amount_beneficiary_receives],
      [pays, fee, receives],
      String(Object.entries(input).map(([k, v]) => `${k}=${v}`)),
    );
  }
});

test('refusals: zero, a fee that takes everything, a beneficiary who would get nothing', () => {
  assert.deepEqual(quotePayout({ ...base, payment_minor: 0 }), { ok: false, field: 'payment_amount', problem: 'must be greater than zero' });
  const eaten = quotePayout({ ...base, source_minor: 50, fee_paid_by: 'BENEFICIARY' });
  assert.equal(eaten.ok, false);
  const nothing = quotePayout({
    ...base,
    source_minor: 1,
    price: { percent_bp: 0, fixed_minor: 0, swift_payer_minor: 0 },
    payment_currency: 'KWD',
    rate: rate('0.0003'),
  });
  assert.equal(nothing.ok, false);
});

test('the fee: percentage half up, plus fixed, plus the SWIFT charge only for SWIFT with PAYER', () => {
  const price = { percent_bp: 250, fixed_minor: 30, swift_payer_minor: 700 };
  assert.equal(payoutFee(1000, price, 'LOCAL', 'SHARED'), 25 + 30);
  assert.equal(payoutFee(1020, price, 'LOCAL', 'PAYER'), 26 + 30); // 25.5 → 26
  assert.equal(payoutFee(1019, price, 'SWIFT', 'SHARED'), 25 + 30); // 25.475 → 25
  assert.equal(payoutFee(1000, price, 'SWIFT', 'PAYER'), 25 + 30 + 700);
});

const currencies = fc.constantFrom(['USD', 2], ['JPY', 0], ['KWD', 3], ['EUR', 2]);

test('property: no money is created, the debit is pays + fee, and rounding costs the payer at most one minor unit', () => {
  fc.assert(
    fc.property(
      currencies,
      currencies,
      fc.bigInt({ min: 10n ** 6n, max: 10n ** 13n }), // 0.0001 … 1000
      fc.integer({ min: 1, max: 10_000_000_00 }),
      fc.boolean(),
      fc.constantFrom('PAYER' as const, 'BENEFICIARY' as const),
      fc.integer({ min: 0, max: 1000 }),
      fc.integer({ min: 0, max: 500 }),
      ([src], [pay], r, amount, fixedPayment, fee_paid_by, percent_bp, fixed_minor) => {
        const input: QuoteInput = {
          ...base,
          source_currency: src as string,
          payment_currency: pay as string,
          rate: r,
          fee_paid_by,
          price: { percent_bp, fixed_minor, swift_payer_minor: 0 },
          ...(fixedPayment ? { payment_minor: amount } : { source_minor: amount }),
        };
        const q = quotePayout(input);
        if (!q.ok) return true; // too small for the fee, or converts to nothing: refused, nothing created
        const { amount_payer_pays: pays, fee_amount: fee, amount_beneficiary_receives: receives } = q.quote;
        const worth = paymentFor(pays, r, src as string, pay as string).payment_minor;
        assert.ok(receives <= worth, `receives ${receives} > worth ${worth}`);
        assert.ok(pays > 0 && fee >= 0 && receives > 0);
        if (fee_paid_by === 'PAYER' && fixedPayment) {
          assert.equal(receives, amount);
          // The smallest source that buys it: one minor unit less would not.
          assert.ok(pays === 0 || paymentFor(pays - 1, r, src as string, pay as string).payment_minor < amount);
        }
        if (fee_paid_by === 'BENEFICIARY' && !fixedPayment) assert.equal(pays + fee, amount);
        if (fee_paid_by === 'PAYER' && !fixedPayment) assert.equal(pays, amount);
        // What the beneficiary misses by rounding down is under one minor unit of the source.
        assert.ok(paymentFor(pays + 1, r, src as string, pay as string).payment_minor >= receives);
        return true;
      },
    ),
    { numRuns: 3_000 },
  );
});
