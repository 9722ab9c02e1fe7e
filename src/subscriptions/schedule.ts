// Subscription schedule arithmetic (docs/contract.md §16): when deduction n is due, what it costs,
// whether it is due at all, and which one comes next. Pure functions over UTC milliseconds,
// no clock and no I/O, so the scheduler, the answer fields and the test clocks agree by
// construction. Every function does a bounded amount of work whatever the plan or `after`.
// The calendar arithmetic is src/core/calendar.ts; the wire form of a deduction's time and
// period is src/payments/subscription-result.ts.
import { assertTime, civilFromDays, DAY_MS, daysFromCivil, daysInMonth, MAX_TIME_MS, pad } from '../core/calendar.js';

export type Interval = 'day' | 'week' | 'month' | 'year';

export interface Plan {
  interval: Interval;
  interval_count: number; // 1..365
  first_payment_ms: number; // when the first payment (deduction 0, the shopper-present one) succeeded
  contract_start?: string; // 'YYYY-MM-DD': the date of the FIRST scheduled deduction (n = 1); absent: one period after the first payment
  contract_end?: string; // 'YYYY-MM-DD': no deduction after the end of this UTC day
  billing_cycle: number; // total deductions INCLUDING the first payment; 0 = until cancelled
  promotion_cycle: number; // how many charges, counting the first payment, are at the promotional amount
  amount_minor: number; // the first payment's amount (the promotional price)
  contract_amount_minor: number; // the price after the promotion (defaults to amount_minor, decided by the caller)
}

const INTERVALS: readonly Interval[] = ['day', 'week', 'month', 'year'];
const MAX_INTERVAL_COUNT = 365;
/**
 * The period index is computed arithmetically and is off by at most one; this bounds the
 * correction so that a wrong estimate is a loud error instead of a long loop.
 */
const MAX_ADJUST_STEPS = 4;

/**
 * Time of scheduled deduction n (n >= 1). n = 1 is the anchor: contract_start at the first
 * payment's UTC time of day, or first_payment + 1 period. Deduction n = anchor + (n-1) periods
 * computed FROM THE ANCHOR (never by adding to the previous date), monthly/yearly keeping the
 * anchor's day of month clamped to the month's last day: anchor 31 Jan → 28 Feb (29 in leap
 * years) → 31 Mar → 30 Apr; anchor 29 Feb 2028 yearly → 28 Feb 2029 → 28 Feb 2030 → 29 Feb 2032.
 * Day and week add 24h*k / 7*24h*k in UTC.
 *
 * Without contract_start the day kept is the first payment's, not the clamped day of
 * deduction 1: a plan paid on 31 January runs 28 Feb, 31 Mar, 30 Apr (§16), which counting
 * from a 28 Feb anchor would turn into 28 Mar, 28 Apr.
 */
export function deductionTime(plan: Plan, n: number): number {
  assertPlan(plan);
  assertDeductionIndex(n, 1);
  return timeOfDeduction(plan, originOf(plan), n);
}

/**
 * The amount of deduction n: charge number n+1 counting the first payment; promotional
 * (amount_minor) while n+1 <= promotion_cycle, else contract_amount_minor. promotion_cycle 0 or
 * 1 means only the first payment was promotional. n = 0 is the first payment itself, whose
 * amount is amount_minor by definition.
 */
export function deductionAmount(plan: Plan, n: number): number {
  assertDeductionIndex(n, 0);
  if (n === 0) return plan.amount_minor;
  return n + 1 <= plan.promotion_cycle ? plan.amount_minor : plan.contract_amount_minor;
}

/**
 * Whether deduction n is due at all: within billing_cycle (n+1 <= billing_cycle when
 * billing_cycle > 0) and not after contract_end (deductionTime(n) <= end of contract_end's UTC
 * day). Both limits cut the sequence once, so the scheduled deductions are always 1..N (or
 * every n): the first unscheduled one means the plan is over.
 */
export function isScheduled(plan: Plan, n: number): boolean {
  assertPlan(plan);
  assertDeductionIndex(n, 1);
  // The count limit first: it needs no date arithmetic, so a huge n stays cheap.
  if (plan.billing_cycle > 0 && n + 1 > plan.billing_cycle) return false;
  if (plan.contract_end === undefined) return true;
  return timeOfDeduction(plan, originOf(plan), n) <= endOfDayMs(plan.contract_end);
}

/**
 * The first n >= 1 whose time is > after_ms and which isScheduled, or null when the plan is over
 * (Completed). The period index is estimated from after_ms in O(1) and corrected by at most a
 * step, so a far `after` (a test clock moved years ahead) costs the same as a near one.
 *
 * A caller that wants deduction 1 even when it falls at the very instant of the first payment
 * (contract_start on the first payment's own date) must ask with after_ms < first_payment_ms.
 */
export function nextDeduction(plan: Plan, after_ms: number): { n: number; at_ms: number; amount_minor: number } | null {
  assertPlan(plan);
  assertTime('after_ms', after_ms);
  const origin = originOf(plan);
  const time = (n: number) => timeOfDeduction(plan, origin, n);
  let n = Math.max(1, estimatePeriod(plan, origin, after_ms) + 1 - origin.shift);
  for (let steps = 0; n > 1 && time(n - 1) > after_ms; steps++) {
    if (steps >= MAX_ADJUST_STEPS) throw new Error('nextDeduction: period estimate too low; schedule arithmetic is inconsistent');
    n--;
  }
  for (let steps = 0; time(n) <= after_ms; steps++) {
    if (steps >= MAX_ADJUST_STEPS) throw new Error('nextDeduction: period estimate too high; schedule arithmetic is inconsistent');
    n++;
  }
  // Scheduled deductions are a prefix 1..N, so if the smallest later one is not scheduled none is.
  if (!isScheduled(plan, n)) return null;
  return { n, at_ms: time(n), amount_minor: deductionAmount(plan, n) };
}

/** `1 month`, `2 week`: recurring_deduction_period as the spec shows it (the unit stays singular). */
/**
 * How many of the plan's charges are paid, the first payment included, as operators read it:
 * "2 of 12" for a 12-charge plan after its first deduction ("charged 1 of 11" counted only the
 * deductions against a total without the first payment, issue 36 item 10); "2" until cancelled.
 */
export function chargesPaid(charged_count: number, billing_cycle: number): string {
  const paid = charged_count + 1;
  return billing_cycle > 0 ? `${paid} of ${billing_cycle}` : String(paid);
}

/**
 * Checks the §16 fields' shapes and ranges given as strings/numbers from a request; returns null
 * or { field, message } naming the first problem (field paths like `subscription.interval_count`).
 * Absent and empty fields take their defaults (interval_count 1, billing_cycle and
 * promotion_cycle 0, no contract dates), except interval, which has none. Whole numbers come as
 * JSON numbers or as digit strings (form and XML bodies carry only text).
 */
export function checkPlanFields(
  sub: {
    interval?: string;
    interval_count?: string | number;
    billing_cycle?: string | number;
    promotion_cycle?: string | number;
    contract_start?: string;
    contract_end?: string;
  },
  first_payment_ms: number,
): { field: string; message: string } | null {
  const problem = (name: string, message: string) => ({ field: `subscription.${name}`, message });
  const given = (v: unknown) => v !== undefined && v !== null && v !== '';

  if (!given(sub.interval)) return problem('interval', 'is required');
  if (!INTERVALS.includes(sub.interval as Interval)) return problem('interval', `must be one of ${INTERVALS.join(', ')}`);

  if (given(sub.interval_count)) {
    const count = wholeNumber(sub.interval_count);
    if (count === null || count < 1 || count > MAX_INTERVAL_COUNT) return problem('interval_count', `must be a whole number from 1 to ${MAX_INTERVAL_COUNT}`);
  }

  let billing_cycle = 0;
  if (given(sub.billing_cycle)) {
    const v = wholeNumber(sub.billing_cycle);
    if (v === null) return problem('billing_cycle', 'must be a whole number, 0 or more (0: until cancelled)');
    billing_cycle = v;
  }
  if (given(sub.promotion_cycle)) {
    const v = wholeNumber(sub.promotion_cycle);
    if (v === null) return problem('promotion_cycle', 'must be a whole number, 0 or more');
    if (billing_cycle > 0 && v > billing_cycle) return problem('promotion_cycle', `must not exceed billing_cycle (${billing_cycle})`);
  }

  // Dates are compared as UTC day numbers: the first payment's UTC date is the earliest a
  // contract may start or end on, whatever its time of day.
  const first_day = Math.floor(first_payment_ms / DAY_MS);
  let start_day: number | null = null;
  if (given(sub.contract_start)) {
    start_day = typeof sub.contract_start === 'string' ? parseDate(sub.contract_start) : null;
    if (start_day === null) return problem('contract_start', 'must be a real calendar date shaped YYYY-MM-DD');
    if (start_day < first_day) return problem('contract_start', `must not be before the first payment's date (${formatDay(first_day)})`);
  }
  if (given(sub.contract_end)) {
    const end_day = typeof sub.contract_end === 'string' ? parseDate(sub.contract_end) : null;
    if (end_day === null) return problem('contract_end', 'must be a real calendar date shaped YYYY-MM-DD');
    if (start_day !== null && end_day < start_day) return problem('contract_end', 'must not be before contract_start');
    // A contract that ended before it was paid for is a merchant's mistake, not a plan.
    if (end_day < first_day) return problem('contract_end', `must not be before the first payment's date (${formatDay(first_day)})`);
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Internals

/**
 * Where the schedule counts from. Deduction n is period index n - 1 + shift from the origin:
 * with contract_start the origin is deduction 1 (shift 0); without, the origin is the first
 * payment and deduction 1 is one period later (shift 1).
 */
interface Origin {
  ms: number;
  day: number; // days since 1970-01-01
  y: number;
  m: number; // 1..12
  d: number; // 1..31: the day of month that monthly and yearly plans keep
  shift: 0 | 1;
}

function originOf(plan: Plan): Origin {
  const first_day = Math.floor(plan.first_payment_ms / DAY_MS);
  const time_of_day_ms = plan.first_payment_ms - first_day * DAY_MS;
  let day = first_day;
  let shift: 0 | 1 = 1;
  if (plan.contract_start !== undefined) {
    // assertPlan has parsed it already; a second parse costs a regex and keeps this total.
    day = parseDate(plan.contract_start) ?? first_day;
    shift = 0;
  }
  return { ms: day * DAY_MS + time_of_day_ms, day, ...civilFromDays(day), shift };
}

function timeOfDeduction(plan: Plan, origin: Origin, n: number): number {
  return timeOfPeriod(plan, origin, n - 1 + origin.shift);
}

/** Origin + k periods, always from the origin so that a clamped day never propagates. */
function timeOfPeriod(plan: Plan, origin: Origin, k: number): number {
  let t: number;
  if (plan.interval === 'day' || plan.interval === 'week') {
    t = origin.ms + k * fixedPeriodMs(plan);
  } else {
    const total = origin.y * 12 + (origin.m - 1) + k * monthsPerPeriod(plan);
    const y = Math.floor(total / 12);
    const m = total - y * 12 + 1;
    const day = daysFromCivil(y, m, Math.min(origin.d, daysInMonth(y, m)));
    t = day * DAY_MS + (origin.ms - origin.day * DAY_MS);
  }
  if (!(Math.abs(t) <= MAX_TIME_MS)) throw new RangeError(`deduction falls outside the representable time range (period ${k})`);
  return t;
}

/**
 * A period index k such that the first period after after_ms is k or k + 1 (or the estimate
 * is below 1 and clamped by the caller). Fixed periods divide; calendar periods count months,
 * because period k always falls in calendar month origin + k * months, whatever its clamped day.
 */
function estimatePeriod(plan: Plan, origin: Origin, after_ms: number): number {
  if (plan.interval === 'day' || plan.interval === 'week') {
    return Math.floor((after_ms - origin.ms) / fixedPeriodMs(plan)) + 1;
  }
  const after = civilFromDays(Math.floor(after_ms / DAY_MS));
  const months_between = after.y * 12 + (after.m - 1) - (origin.y * 12 + (origin.m - 1));
  return Math.floor(months_between / monthsPerPeriod(plan));
}

function fixedPeriodMs(plan: Plan): number {
  return (plan.interval === 'week' ? 7 : 1) * plan.interval_count * DAY_MS;
}

function monthsPerPeriod(plan: Plan): number {
  return (plan.interval === 'year' ? 12 : 1) * plan.interval_count;
}

function endOfDayMs(date: string): number {
  const day = parseDate(date);
  if (day === null) throw new RangeError('contract_end is not a real date shaped YYYY-MM-DD');
  return (day + 1) * DAY_MS - 1;
}

/** Plans reach here validated (checkPlanFields); this catches a caller's slip before it loops or lies. */
function assertPlan(plan: Plan): void {
  if (!INTERVALS.includes(plan.interval)) throw new RangeError(`unknown interval ${String(plan.interval)}`);
  if (!Number.isInteger(plan.interval_count) || plan.interval_count < 1 || plan.interval_count > MAX_INTERVAL_COUNT) {
    throw new RangeError(`interval_count must be a whole number from 1 to ${MAX_INTERVAL_COUNT}`);
  }
  assertTime('first_payment_ms', plan.first_payment_ms);
  if (!Number.isSafeInteger(plan.billing_cycle) || plan.billing_cycle < 0) throw new RangeError('billing_cycle must be a whole number >= 0');
  if (plan.contract_start !== undefined && parseDate(plan.contract_start) === null) throw new RangeError('contract_start is not a real date shaped YYYY-MM-DD');
  if (plan.contract_end !== undefined && parseDate(plan.contract_end) === null) throw new RangeError('contract_end is not a real date shaped YYYY-MM-DD');
}

function assertDeductionIndex(n: number, min: number): void {
  if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`deduction index must be a whole number >= ${min}, got ${n}`);
}

/** A JSON whole number or a string of digits; anything else (signs, decimals, spaces) is refused. */
function wholeNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v === 'string' && /^[0-9]{1,15}$/.test(v)) return Number(v);
  return null;
}

/** Days since 1970-01-01 of a real calendar date `YYYY-MM-DD`, or null (2025-02-30 is null). */
function parseDate(s: string): number | null {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!match) return null;
  const y = Number(match[1]);
  const m = Number(match[2]);
  const d = Number(match[3]);
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return null;
  return daysFromCivil(y, m, d);
}

function formatDay(day: number): string {
  const { y, m, d } = civilFromDays(day);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}
