// FX conversion (issue 12 item 2): a table of worked cases and fast-check properties for the
// stated rounding: never creates money, never more than one minor unit in the payer's
// disfavour, markup always in the gateway's favour.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { applyMarkup, formatRate, invertRate, parseRate, paymentFor, RATE_SCALE, sourceFor } from './convert.js';

const rate = (t: string) => {
  const r = parseRate(t);
  assert.ok(r !== null, t);
  return r;
};

test('rates parse and print exactly; bad ones are refused', () => {
  assert.equal(rate('1.0842'), 10_842_000_000n);
  assert.equal(formatRate(rate('1.0842')), '1.0842');
  assert.equal(formatRate(rate('150')), '150.0');
  assert.equal(formatRate(rate('0.0000000001')), '0.0000000001');
  for (const bad of ['0', '0.0', '-1', '1.', '.5', '1e3', '1,5', ' 1.2', '1.00000000001', '1234567890']) assert.equal(parseRate(bad), null, bad);
  assert.equal(formatRate(invertRate(rate('2'))), '0.5');
});

test('worked cases', () => {
  const cases: Array<[string, 'pay' | 'source', number, string, string, number, number]> = [
    // [rate, given, amount, source, payment, source_minor, payment_minor]
    ['0.9223', 'pay', 10_000, 'USD', 'EUR', 10_843, 10_000], // 100.00 EUR costs 108.4245… USD → 108.43
    ['0.9223', 'source', 10_843, 'USD', 'EUR', 10_843, 10_000], // 108.43 USD buys 100.0048… EUR → 100.00
    ['150.25', 'source', 1_000, 'USD', 'JPY', 1_000, 1_502], // 10.00 USD → 1502.5 JPY → 1502
    ['150.25', 'pay', 1_502, 'USD', 'JPY', 1_000, 1_502], // 1502 JPY costs 9.9966… USD → 10.00
    ['3.2455', 'source', 1_000, 'KWD', 'USD', 1_000, 324], // 1.000 KWD → 3.2455 USD → 3.24
    ['1', 'pay', 0, 'USD', 'EUR', 0, 0],
  ];
  for (const [r, given, amount, src, pay, s, p] of cases) {
    const c = given === 'pay' ? sourceFor(amount, rate(r), src, pay) : paymentFor(amount, rate(r), src, pay);
    assert.deepEqual([c.source_minor, c.payment_minor], [s, p], `${r} ${given} ${amount} ${src}→${pay}`);
  }
});

test('markup lowers the rate by its basis points, rounded down; refused outside 0..1000', () => {
  assert.equal(formatRate(applyMarkup(rate('1.0842'), 50)), '1.078779');
  assert.equal(applyMarkup(rate('1.0842'), 0), rate('1.0842'));
  assert.throws(() => applyMarkup(rate('1'), 1_001));
  assert.throws(() => applyMarkup(rate('1'), -1));
});

const CURRENCIES = ['USD', 'EUR', 'JPY', 'KWD', 'GBP', 'BRL'] as const;
const exp: Record<string, number> = { USD: 2, EUR: 2, JPY: 0, KWD: 3, GBP: 2, BRL: 2 };
const arbRate = fc.bigInt({ min: 1_000_000n, max: 10n ** 13n }); // 0.0001 .. 1000
const arbPair = fc.tuple(fc.constantFrom(...CURRENCIES), fc.constantFrom(...CURRENCIES));

/** The value of `minor` of `cur` in source minor units at `r`, exactly, as a fraction num/den over 10^RATE_SCALE. */
const S = 10n ** BigInt(RATE_SCALE);

test('property: a fixed payment amount costs at least its value and less than one source minor unit more', () => {
  fc.assert(
    fc.property(arbRate, arbPair, fc.integer({ min: 0, max: 10 ** 9 }), (r, [src, pay], payment_minor) => {
      // A source beyond 2^53 minor units is refused (RangeError), never rounded.
      const num = BigInt(payment_minor) * S * 10n ** BigInt(exp[src] as number);
      const den = r * 10n ** BigInt(exp[pay] as number);
      if ((num + den - 1n) / den > BigInt(Number.MAX_SAFE_INTEGER)) {
        assert.throws(() => sourceFor(payment_minor, r, src, pay), RangeError);
        return;
      }
      const c = sourceFor(payment_minor, r, src, pay);
      // Compare source * rate * 10^ep against payment * S * 10^es (both sides integers).
      const lhs = BigInt(c.source_minor) * r * 10n ** BigInt(exp[pay] as number);
      const rhs = BigInt(payment_minor) * S * 10n ** BigInt(exp[src] as number);
      assert.ok(lhs >= rhs, 'the payer pays at least what the beneficiary receives');
      const oneLess = BigInt(c.source_minor - 1) * r * 10n ** BigInt(exp[pay] as number);
      assert.ok(c.source_minor === 0 || oneLess < rhs, 'and not one minor unit more than needed');
    }),
  );
});

test('property: a fixed source amount buys at most its value and less than one payment minor unit less', () => {
  fc.assert(
    fc.property(arbRate, arbPair, fc.integer({ min: 0, max: 10 ** 9 }), (r, [src, pay], source_minor) => {
      const exact = (BigInt(source_minor) * r * 10n ** BigInt(exp[pay] as number)) / (S * 10n ** BigInt(exp[src] as number));
      if (exact > BigInt(Number.MAX_SAFE_INTEGER)) {
        assert.throws(() => paymentFor(source_minor, r, src, pay), RangeError);
        return;
      }
      const c = paymentFor(source_minor, r, src, pay);
      const value = BigInt(source_minor) * r * 10n ** BigInt(exp[pay] as number); // payment minor × S × 10^es
      const got = BigInt(c.payment_minor) * S * 10n ** BigInt(exp[src] as number);
      assert.ok(got <= value, 'never more than paid for');
      assert.ok(BigInt(c.payment_minor + 1) * S * 10n ** BigInt(exp[src] as number) > value, 'and not a whole minor unit less');
    }),
  );
});

test('property: markup never raises the rate', () => {
  fc.assert(fc.property(arbRate, fc.integer({ min: 0, max: 1_000 }), (r, bp) => applyMarkup(r, bp) <= r));
});
