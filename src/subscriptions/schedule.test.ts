// Goal: the subscription schedule (docs/contract.md §16) charges on the dates a person with a
// calendar expects: the anchor day kept and clamped at month ends and in leap years, one
// deduction per period, never two and never a skipped one; billing_cycle, contract_end and
// promotion_cycle cut and price the sequence; nextDeduction answers in bounded time however
// far the clock has moved; the request fields are refused with a named field.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { formatDeductionTime, periodLabel } from '../payments/subscription-result.js';
import { chargesPaid, checkPlanFields, deductionAmount, deductionTime, type Interval, isScheduled, nextDeduction, type Plan } from './schedule.js';

const DAY_MS = 86_400_000;
const at = (iso: string) => Date.parse(iso);

function plan(over: Partial<Plan> & Pick<Plan, 'interval' | 'first_payment_ms'>): Plan {
  return { interval_count: 1, billing_cycle: 0, promotion_cycle: 0, amount_minor: 500, contract_amount_minor: 1500, ...over };
}

/** The first k deduction times, formatted, for a readable table. */
function firstDeductions(p: Plan, k: number): string[] {
  return Array.from({ length: k }, (_, i) => formatDeductionTime(deductionTime(p, i + 1)));
}

describe('deduction dates (table)', () => {
  const cases: Array<{ name: string; plan: Plan; expect: string[] }> = [
    {
      name: 'monthly from 31 Jan keeps the 31st, clamped: 28 Feb, 31 Mar, 30 Apr, 31 May',
      plan: plan({ interval: 'month', first_payment_ms: at('2025-01-31T09:15:00Z') }),
      expect: ['2025-02-28 09:15:00', '2025-03-31 09:15:00', '2025-04-30 09:15:00', '2025-05-31 09:15:00'],
    },
    {
      name: 'monthly from 31 Jan in a leap year: 29 Feb',
      plan: plan({ interval: 'month', first_payment_ms: at('2028-01-31T00:00:00Z') }),
      expect: ['2028-02-29 00:00:00', '2028-03-31 00:00:00', '2028-04-30 00:00:00'],
    },
    {
      name: 'monthly from 30 Jan: 28 Feb then back to the 30th',
      plan: plan({ interval: 'month', first_payment_ms: at('2025-01-30T12:00:00Z') }),
      expect: ['2025-02-28 12:00:00', '2025-03-30 12:00:00', '2025-04-30 12:00:00'],
    },
    {
      name: 'monthly across a year end',
      plan: plan({ interval: 'month', first_payment_ms: at('2025-11-30T23:59:59Z') }),
      expect: ['2025-12-30 23:59:59', '2026-01-30 23:59:59', '2026-02-28 23:59:59', '2026-03-30 23:59:59'],
    },
    {
      name: 'every 2 months from 31 Dec: Feb clamped, then the 31st again',
      plan: plan({ interval: 'month', interval_count: 2, first_payment_ms: at('2024-12-31T08:00:00Z') }),
      expect: ['2025-02-28 08:00:00', '2025-04-30 08:00:00', '2025-06-30 08:00:00', '2025-08-31 08:00:00'],
    },
    {
      name: 'every 3 months from 31 Aug: 30 Nov, 28 Feb, 31 May',
      plan: plan({ interval: 'month', interval_count: 3, first_payment_ms: at('2025-08-31T10:00:00Z') }),
      expect: ['2025-11-30 10:00:00', '2026-02-28 10:00:00', '2026-05-31 10:00:00', '2026-08-31 10:00:00'],
    },
    {
      name: 'yearly from 29 Feb 2028: 28 Feb in common years, 29 Feb in 2032',
      plan: plan({ interval: 'year', first_payment_ms: at('2028-02-29T06:30:00Z') }),
      expect: ['2029-02-28 06:30:00', '2030-02-28 06:30:00', '2031-02-28 06:30:00', '2032-02-29 06:30:00'],
    },
    {
      name: 'yearly from 29 Feb 2096: 2100 is not a leap year, 2104 is',
      plan: plan({ interval: 'year', interval_count: 4, first_payment_ms: at('2096-02-29T00:00:00Z') }),
      expect: ['2100-02-28 00:00:00', '2104-02-29 00:00:00'],
    },
    {
      name: 'weekly: 7 days at the same UTC time',
      plan: plan({ interval: 'week', first_payment_ms: at('2025-03-28T01:02:03Z') }),
      expect: ['2025-04-04 01:02:03', '2025-04-11 01:02:03', '2025-04-18 01:02:03'],
    },
    {
      name: 'every 2 weeks',
      plan: plan({ interval: 'week', interval_count: 2, first_payment_ms: at('2025-12-24T18:00:00Z') }),
      expect: ['2026-01-07 18:00:00', '2026-01-21 18:00:00', '2026-02-04 18:00:00'],
    },
    {
      name: 'daily across 28 Feb in a leap year',
      plan: plan({ interval: 'day', first_payment_ms: at('2028-02-27T22:00:00Z') }),
      expect: ['2028-02-28 22:00:00', '2028-02-29 22:00:00', '2028-03-01 22:00:00'],
    },
    {
      name: 'every 3 days',
      plan: plan({ interval: 'day', interval_count: 3, first_payment_ms: at('2025-01-30T00:00:00Z') }),
      expect: ['2025-02-02 00:00:00', '2025-02-05 00:00:00', '2025-02-08 00:00:00'],
    },
    {
      name: 'contract_start is deduction 1, at the first payment’s time of day',
      plan: plan({ interval: 'month', first_payment_ms: at('2025-01-15T10:20:30Z'), contract_start: '2025-02-01' }),
      expect: ['2025-02-01 10:20:30', '2025-03-01 10:20:30', '2025-04-01 10:20:30'],
    },
    {
      name: 'contract_start on the 31st anchors the day of month',
      plan: plan({ interval: 'month', first_payment_ms: at('2025-01-02T07:00:00Z'), contract_start: '2025-03-31' }),
      expect: ['2025-03-31 07:00:00', '2025-04-30 07:00:00', '2025-05-31 07:00:00', '2025-06-30 07:00:00'],
    },
    {
      name: 'contract_start with a weekly plan',
      plan: plan({ interval: 'week', first_payment_ms: at('2025-01-02T07:00:00Z'), contract_start: '2025-01-06' }),
      expect: ['2025-01-06 07:00:00', '2025-01-13 07:00:00', '2025-01-20 07:00:00'],
    },
    {
      name: 'contract_start 29 Feb, yearly',
      plan: plan({ interval: 'year', first_payment_ms: at('2027-06-01T05:00:00Z'), contract_start: '2028-02-29' }),
      expect: ['2028-02-29 05:00:00', '2029-02-28 05:00:00', '2030-02-28 05:00:00', '2031-02-28 05:00:00', '2032-02-29 05:00:00'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(firstDeductions(c.plan, c.expect.length), c.expect);
    });
  }

  test('deduction 12 of a monthly plan is computed from the anchor, not by chaining clamped dates', () => {
    const p = plan({ interval: 'month', first_payment_ms: at('2025-01-31T00:00:00Z') });
    assert.equal(formatDeductionTime(deductionTime(p, 12)), '2026-01-31 00:00:00');
  });
});

describe('billing_cycle, contract_end and promotion_cycle (table)', () => {
  const monthly31 = plan({ interval: 'month', first_payment_ms: at('2025-01-31T09:15:00Z') });

  test('billing_cycle 3: the first payment and deductions 1 and 2, then Completed', () => {
    const p = { ...monthly31, billing_cycle: 3 };
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => isScheduled(p, n)),
      [true, true, false, false],
    );
    const first = nextDeduction(p, p.first_payment_ms);
    assert.deepEqual(first, { n: 1, at_ms: at('2025-02-28T09:15:00Z'), amount_minor: 1500 });
    const second = nextDeduction(p, first!.at_ms);
    assert.deepEqual(second, { n: 2, at_ms: at('2025-03-31T09:15:00Z'), amount_minor: 1500 });
    assert.equal(nextDeduction(p, second!.at_ms), null);
    assert.equal(nextDeduction(p, at('2030-01-01T00:00:00Z')), null);
  });

  test('billing_cycle 1: nothing but the first payment', () => {
    const p = { ...monthly31, billing_cycle: 1 };
    assert.equal(isScheduled(p, 1), false);
    assert.equal(nextDeduction(p, p.first_payment_ms), null);
  });

  test('billing_cycle 0 runs until cancelled', () => {
    const p = { ...monthly31, billing_cycle: 0 };
    assert.equal(isScheduled(p, 10_000), true);
    assert.equal(nextDeduction(p, at('2100-01-01T00:00:00Z'))?.at_ms, at('2100-01-31T09:15:00Z'));
  });

  test('contract_end includes its whole UTC day and nothing after', () => {
    const through30Apr = { ...monthly31, contract_end: '2025-04-30' };
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => isScheduled(through30Apr, n)),
      [true, true, true, false],
    );
    assert.equal(nextDeduction(through30Apr, at('2025-04-01T00:00:00Z'))?.n, 3);
    assert.equal(nextDeduction(through30Apr, at('2025-04-30T09:15:00Z')), null);
    const through29Apr = { ...monthly31, contract_end: '2025-04-29' };
    assert.equal(isScheduled(through29Apr, 3), false);
    assert.equal(nextDeduction(through29Apr, at('2025-04-01T00:00:00Z')), null);
  });

  test('contract_end at 23:59:59.999 of its day: a deduction at that instant is scheduled', () => {
    const p = plan({ interval: 'day', first_payment_ms: at('2025-05-01T23:59:59.999Z'), contract_end: '2025-05-03' });
    assert.deepEqual(
      [1, 2, 3].map((n) => isScheduled(p, n)),
      [true, true, false],
    );
  });

  test('contract_end before contract_start: no deduction at all', () => {
    const p = plan({ interval: 'month', first_payment_ms: at('2025-01-01T00:00:00Z'), contract_start: '2025-03-01', contract_end: '2025-02-28' });
    assert.equal(nextDeduction(p, p.first_payment_ms), null);
  });

  test('the stricter of billing_cycle and contract_end wins', () => {
    const p = { ...monthly31, billing_cycle: 10, contract_end: '2025-03-31' };
    assert.equal(nextDeduction(p, at('2025-03-01T00:00:00Z'))?.n, 2);
    assert.equal(nextDeduction(p, at('2025-03-31T09:15:00Z')), null);
  });

  test('promotion_cycle 2: the first payment and deduction 1 promotional, deduction 2 on at contract_amount', () => {
    const p = { ...monthly31, promotion_cycle: 2 };
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((n) => deductionAmount(p, n)),
      [500, 500, 1500, 1500, 1500],
    );
    assert.equal(nextDeduction(p, p.first_payment_ms)?.amount_minor, 500);
    assert.equal(nextDeduction(p, deductionTime(p, 1))?.amount_minor, 1500);
  });

  for (const promotion_cycle of [0, 1]) {
    test(`promotion_cycle ${promotion_cycle}: only the first payment is promotional`, () => {
      const p = { ...monthly31, promotion_cycle };
      assert.deepEqual(
        [0, 1, 2].map((n) => deductionAmount(p, n)),
        [500, 1500, 1500],
      );
    });
  }

  test('promotion_cycle equal to billing_cycle: every charge promotional', () => {
    const p = { ...monthly31, billing_cycle: 3, promotion_cycle: 3 };
    assert.deepEqual(
      [0, 1, 2].map((n) => deductionAmount(p, n)),
      [500, 500, 500],
    );
  });
});

describe('nextDeduction (table)', () => {
  const p = plan({ interval: 'month', first_payment_ms: at('2025-01-31T09:15:00Z') });
  const cases: Array<[string, number]> = [
    ['2025-01-31T09:15:00Z', 1], // the first payment itself: deduction 1 is next
    ['2025-02-28T09:14:59.999Z', 1],
    ['2025-02-28T09:15:00Z', 2], // strictly after: the deduction at this instant is the current one
    ['2025-03-15T00:00:00Z', 2],
    ['2025-03-31T09:15:00.001Z', 3],
    ['2020-01-01T00:00:00Z', 1], // a time before the plan began
  ];
  for (const [after, n] of cases) {
    test(`after ${after}: deduction ${n}`, () => {
      const next = nextDeduction(p, at(after));
      assert.equal(next?.n, n);
      assert.equal(next?.at_ms, deductionTime(p, n));
    });
  }

  test('contract_start on the first payment’s own date: deduction 1 shares its instant', () => {
    const q = plan({ interval: 'month', first_payment_ms: at('2025-01-15T10:00:00Z'), contract_start: '2025-01-15' });
    assert.equal(deductionTime(q, 1), q.first_payment_ms);
    assert.equal(nextDeduction(q, q.first_payment_ms - 1)?.n, 1);
    assert.equal(nextDeduction(q, q.first_payment_ms)?.n, 2);
  });

  test('far clocks answer in bounded time: 2,000 calls ~100 million periods ahead', () => {
    // A walk over periods would take seconds per call here. node:test's timeout cannot stop
    // a synchronous loop, so the test keeps its own budget and fails after the first slow call.
    const daily = plan({ interval: 'day', first_payment_ms: at('1970-01-01T00:00:00Z') });
    const started = performance.now();
    for (let i = 0; i < 2_000; i++) {
      const after = 8e15 + i * 1_234_567;
      const next = nextDeduction(daily, after);
      assert.ok(next && next.at_ms > after && deductionTime(daily, next.n - 1) <= after);
      assert.ok(performance.now() - started < 2_000, `call ${i} ran past the 2 s budget for all 2,000 calls`);
    }
  });
});

describe('labels, formatting and bad arguments', () => {
  test('periodLabel as §16 shows it', () => {
    assert.equal(periodLabel('month', 1), '1 month');
    assert.equal(periodLabel('week', 2), '2 week');
  });

  test('formatDeductionTime is UTC, zero-padded, seconds truncated', () => {
    assert.equal(formatDeductionTime(at('2025-02-03T04:05:06.999Z')), '2025-02-03 04:05:06');
    assert.equal(formatDeductionTime(0), '1970-01-01 00:00:00');
    assert.equal(formatDeductionTime(-1), '1969-12-31 23:59:59');
  });

  test('a caller’s slip is a RangeError, never a loop or a wrong date', () => {
    const p = plan({ interval: 'month', first_payment_ms: at('2025-01-31T00:00:00Z') });
    assert.throws(() => deductionTime(p, 0), RangeError);
    assert.throws(() => deductionTime(p, 1.5), RangeError);
    assert.throws(() => deductionTime({ ...p, interval_count: 0 }, 1), RangeError);
    assert.throws(() => deductionTime({ ...p, interval: 'fortnight' as Interval }, 1), RangeError);
    assert.throws(() => deductionTime({ ...p, contract_start: '2025-02-30' }, 1), RangeError);
    assert.throws(() => nextDeduction(p, Number.NaN), RangeError);
    assert.throws(() => nextDeduction(p, 1e300), RangeError);
  });
});

describe('checkPlanFields (table)', () => {
  const paid = at('2025-01-31T23:00:00Z');
  const ok = { interval: 'month' };
  const cases: Array<[string, Parameters<typeof checkPlanFields>[0], string | null, RegExp?]> = [
    ['a minimal plan', ok, null],
    ['every field in range, counts as strings', { interval: 'week', interval_count: '2', billing_cycle: '12', promotion_cycle: '3' }, null],
    ['counts as numbers', { interval: 'day', interval_count: 365, billing_cycle: 0, promotion_cycle: 7 }, null],
    ['interval missing', {}, 'subscription.interval', /required/],
    ['interval empty', { interval: '' }, 'subscription.interval', /required/],
    ['interval unknown', { interval: 'fortnight' }, 'subscription.interval', /day, week, month, year/],
    ['interval in capitals', { interval: 'Month' }, 'subscription.interval'],
    ['interval_count 0', { ...ok, interval_count: 0 }, 'subscription.interval_count', /1 to 365/],
    ['interval_count 366', { ...ok, interval_count: '366' }, 'subscription.interval_count'],
    ['interval_count 1.5', { ...ok, interval_count: 1.5 }, 'subscription.interval_count'],
    ['interval_count "1.0"', { ...ok, interval_count: '1.0' }, 'subscription.interval_count'],
    ['interval_count " 1"', { ...ok, interval_count: ' 1' }, 'subscription.interval_count'],
    ['interval_count "-1"', { ...ok, interval_count: '-1' }, 'subscription.interval_count'],
    ['interval_count 365', { ...ok, interval_count: '365' }, null],
    ['billing_cycle negative', { ...ok, billing_cycle: -1 }, 'subscription.billing_cycle'],
    ['billing_cycle fractional', { ...ok, billing_cycle: 2.5 }, 'subscription.billing_cycle'],
    ['billing_cycle beyond safe integers', { ...ok, billing_cycle: 2 ** 60 }, 'subscription.billing_cycle'],
    ['promotion_cycle negative', { ...ok, promotion_cycle: -2 }, 'subscription.promotion_cycle'],
    ['promotion_cycle above billing_cycle', { ...ok, billing_cycle: 3, promotion_cycle: 4 }, 'subscription.promotion_cycle', /billing_cycle \(3\)/],
    ['promotion_cycle equal to billing_cycle', { ...ok, billing_cycle: 3, promotion_cycle: 3 }, null],
    ['promotion_cycle with an open-ended plan', { ...ok, billing_cycle: 0, promotion_cycle: 40 }, null],
    ['contract_start 2025-02-30', { ...ok, contract_start: '2025-02-30' }, 'subscription.contract_start', /real calendar date/],
    ['contract_start 2025-13-01', { ...ok, contract_start: '2025-13-01' }, 'subscription.contract_start'],
    ['contract_start 2025-2-3', { ...ok, contract_start: '2025-2-3' }, 'subscription.contract_start'],
    ['contract_start with a time', { ...ok, contract_start: '2025-03-01T00:00:00Z' }, 'subscription.contract_start'],
    ['contract_start 29 Feb of a leap year', { ...ok, contract_start: '2028-02-29' }, null],
    ['contract_start 29 Feb of 2100 (not leap)', { ...ok, contract_start: '2100-02-29' }, 'subscription.contract_start'],
    ['contract_start the day before the first payment', { ...ok, contract_start: '2025-01-30' }, 'subscription.contract_start', /2025-01-31/],
    ['contract_start on the first payment’s date', { ...ok, contract_start: '2025-01-31' }, null],
    ['contract_end 2025-04-31', { ...ok, contract_end: '2025-04-31' }, 'subscription.contract_end'],
    ['contract_end before contract_start', { ...ok, contract_start: '2025-03-01', contract_end: '2025-02-28' }, 'subscription.contract_end', /contract_start/],
    ['contract_end on contract_start', { ...ok, contract_start: '2025-03-01', contract_end: '2025-03-01' }, null],
    ['contract_end before the first payment', { ...ok, contract_end: '2025-01-30' }, 'subscription.contract_end', /first payment/],
    ['the first problem is named: interval before interval_count', { interval: 'x', interval_count: 0 }, 'subscription.interval'],
  ];
  for (const [name, sub, field, message] of cases) {
    test(`${name}: ${field ?? 'accepted'}`, () => {
      const problem = checkPlanFields(sub, paid);
      assert.equal(problem?.field ?? null, field);
      if (message) assert.match(problem!.message, message);
    });
  }

  test('wrong JSON types are refused, not thrown on', () => {
    const weird = [
      { interval: 3 },
      { interval: 'month', interval_count: true },
      { interval: 'month', contract_start: 20250301 },
      { interval: 'month', billing_cycle: {} },
    ];
    for (const sub of weird) assert.notEqual(checkPlanFields(sub as never, paid), null);
  });
});

// ---------------------------------------------------------------------------------------
// Properties. Anchors anywhere in 1970–2200, any interval and count; n up to 500 keeps the
// longest plan (365 years × 500) inside the Date range.

const YEAR_1970 = at('1970-01-01T00:00:00Z');
const YEAR_2201 = at('2201-01-01T00:00:00Z');
const N_MAX = 500;

const arbInterval = fc.constantFrom<Interval>('day', 'week', 'month', 'year');
const arbCount = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 365 }));
/** Anchors near month ends are where clamping happens; weight them. */
const arbFirstPayment = fc.oneof(
  fc.integer({ min: YEAR_1970, max: YEAR_2201 - 1 }),
  fc
    .record({
      y: fc.integer({ min: 1970, max: 2200 }),
      m: fc.integer({ min: 0, max: 11 }),
      back: fc.integer({ min: 1, max: 4 }),
      tod: fc.integer({ min: 0, max: DAY_MS - 1 }),
    })
    .map(({ y, m, back, tod }) => Date.UTC(y, m + 1, 1) - back * DAY_MS + tod),
);
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const arbPlan: fc.Arbitrary<Plan> = fc
  .record({
    interval: arbInterval,
    interval_count: arbCount,
    first_payment_ms: arbFirstPayment,
    start_offset_days: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    end_offset_days: fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined }),
    billing_cycle: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 600 })),
    promotion_cycle: fc.integer({ min: 0, max: 10 }),
  })
  .map((r) => {
    const p: Plan = {
      interval: r.interval,
      interval_count: r.interval_count,
      first_payment_ms: r.first_payment_ms,
      billing_cycle: r.billing_cycle,
      promotion_cycle: r.promotion_cycle,
      amount_minor: 100,
      contract_amount_minor: 900,
    };
    if (r.start_offset_days !== undefined) p.contract_start = isoDay(r.first_payment_ms + r.start_offset_days * DAY_MS);
    if (r.end_offset_days !== undefined) p.contract_end = isoDay(r.first_payment_ms + r.end_offset_days * DAY_MS);
    return p;
  });
/** The same plans without the cut-offs, for the properties of the bare sequence. */
const arbOpenPlan = arbPlan.map((p) => ({ ...p, billing_cycle: 0, contract_end: undefined }));

/** Deduction n's period index from the day the plan counts from (see deductionTime's comment). */
function periodIndex(p: Plan, n: number): number {
  return p.contract_start === undefined ? n : n - 1;
}
function originMs(p: Plan): number {
  const tod = ((p.first_payment_ms % DAY_MS) + DAY_MS) % DAY_MS;
  return p.contract_start === undefined ? p.first_payment_ms : Date.parse(`${p.contract_start}T00:00:00Z`) + tod;
}

describe('schedule properties (fast-check)', () => {
  test('deduction times strictly increase with n', () => {
    fc.assert(
      fc.property(arbOpenPlan, fc.integer({ min: 1, max: N_MAX - 1 }), (p, n) => {
        return deductionTime(p, n) < deductionTime(p, n + 1);
      }),
      { numRuns: 2000 },
    );
  });

  test('deduction 1 is contract_start at the first payment’s time of day, or after the first payment', () => {
    fc.assert(
      fc.property(arbOpenPlan, (p) => {
        const t = deductionTime(p, 1);
        assert.equal(((t % DAY_MS) + DAY_MS) % DAY_MS, ((p.first_payment_ms % DAY_MS) + DAY_MS) % DAY_MS);
        if (p.contract_start !== undefined) assert.equal(isoDay(t), p.contract_start);
        else assert.ok(t > p.first_payment_ms);
      }),
      { numRuns: 2000 },
    );
  });

  test('day and week: consecutive deductions exactly one period apart (one per period, none skipped)', () => {
    fc.assert(
      fc.property(
        arbOpenPlan.filter((p) => p.interval === 'day' || p.interval === 'week'),
        fc.integer({ min: 1, max: N_MAX - 1 }),
        (p, n) => {
          const period_ms = (p.interval === 'week' ? 7 : 1) * p.interval_count * DAY_MS;
          assert.equal(deductionTime(p, n + 1) - deductionTime(p, n), period_ms);
          assert.equal(deductionTime(p, n), originMs(p) + periodIndex(p, n) * period_ms);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('month and year: deduction n falls in calendar month origin + index × months, on min(anchor day, month length)', () => {
    fc.assert(
      fc.property(
        arbOpenPlan.filter((p) => p.interval === 'month' || p.interval === 'year'),
        fc.integer({ min: 1, max: N_MAX }),
        (p, n) => {
          // Independent oracle: Date.UTC normalises month overflow; day 0 of the next month is the last day.
          const origin = new Date(originMs(p));
          const months = periodIndex(p, n) * p.interval_count * (p.interval === 'year' ? 12 : 1);
          const month_start = new Date(Date.UTC(origin.getUTCFullYear(), origin.getUTCMonth() + months, 1));
          const days_in_month = new Date(Date.UTC(month_start.getUTCFullYear(), month_start.getUTCMonth() + 1, 0)).getUTCDate();
          const got = new Date(deductionTime(p, n));
          assert.equal(got.getUTCFullYear(), month_start.getUTCFullYear());
          assert.equal(got.getUTCMonth(), month_start.getUTCMonth());
          assert.equal(got.getUTCDate(), Math.min(origin.getUTCDate(), days_in_month));
          assert.equal(got.getTime() % DAY_MS, origin.getTime() % DAY_MS);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('scheduled deductions are a prefix 1..N: once one is not due, none later is', () => {
    fc.assert(
      fc.property(arbPlan, fc.integer({ min: 1, max: N_MAX - 1 }), (p, n) => {
        return isScheduled(p, n) || !isScheduled(p, n + 1);
      }),
      { numRuns: 2000 },
    );
  });

  test('nextDeduction(after) is the smallest scheduled n with time > after (against a linear scan)', () => {
    const LIMIT = N_MAX + 100;
    const arbCase = arbPlan.chain((p) =>
      fc.record({
        p: fc.constant(p),
        after: fc.oneof(
          // Exactly on, just before and just after a deduction: the boundaries that matter.
          fc.record({ m: fc.integer({ min: 1, max: N_MAX }), d: fc.constantFrom(-1, 0, 1) }).map(({ m, d }) => deductionTime(p, m) + d),
          fc.integer({ min: p.first_payment_ms - 400 * DAY_MS, max: deductionTime(p, N_MAX) }),
        ),
      }),
    );
    fc.assert(
      fc.property(arbCase, ({ p, after }) => {
        let expected: number | null = null;
        for (let n = 1; n <= LIMIT; n++) {
          if (deductionTime(p, n) > after) {
            expected = isScheduled(p, n) ? n : null;
            break;
          }
        }
        const got = nextDeduction(p, after);
        assert.equal(got?.n ?? null, expected);
        if (got) {
          assert.equal(got.at_ms, deductionTime(p, got.n));
          assert.equal(got.amount_minor, deductionAmount(p, got.n));
        }
      }),
      { numRuns: 1500 },
    );
  });

  test('amounts: promotional exactly for charges 1..promotion_cycle (counting the first payment)', () => {
    fc.assert(
      fc.property(arbPlan, fc.integer({ min: 0, max: 50 }), (p, n) => {
        const promotional = n === 0 || n + 1 <= p.promotion_cycle;
        assert.equal(deductionAmount(p, n), promotional ? p.amount_minor : p.contract_amount_minor);
      }),
    );
  });

  test('formatDeductionTime agrees with Date for any time 1970–2200', () => {
    fc.assert(
      fc.property(fc.integer({ min: YEAR_1970, max: YEAR_2201 - 1 }), (ms) => {
        assert.equal(formatDeductionTime(ms), new Date(ms).toISOString().slice(0, 19).replace('T', ' '));
      }),
      { numRuns: 2000 },
    );
  });

  test('checkPlanFields accepts exactly the real dates: agrees with Date round-tripping', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1970, max: 2400 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (y, m, d) => {
        const s = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        // Date.UTC rolls 30 Feb over into March: a date is real when it comes back unchanged.
        const back = new Date(Date.UTC(y, m - 1, d));
        const real = m >= 1 && m <= 12 && back.getUTCMonth() === m - 1 && back.getUTCDate() === d;
        const problem = checkPlanFields({ interval: 'month', contract_end: s }, YEAR_1970);
        assert.equal(problem === null, real, s);
      }),
      { numRuns: 2000 },
    );
  });
});

test('charges paid count the first payment, against a total that counts it too (issue 36 item 10)', () => {
  const cases: Array<[charged_count: number, billing_cycle: number, text: string]> = [
    [0, 12, '1 of 12'], // only the first payment
    [1, 12, '2 of 12'], // it read "charged 1 of 11"
    [11, 12, '12 of 12'],
    [0, 0, '1'], // until cancelled
    [5, 0, '6'],
  ];
  for (const [n, cycle, text] of cases) assert.equal(chargesPaid(n, cycle), text, `${n} deductions of a ${cycle}-charge plan`);
});
