// UTC calendar arithmetic without Date, shared by the subscription schedule (src/subscriptions/
// schedule.ts) and the wire form of its times (src/payments/subscription-result.ts). Pure: no
// clock, no I/O. It sits in src/core, below both, so neither imports the other for it.

export const DAY_MS = 86_400_000;
/** ECMAScript's time value range (±100,000,000 days): beyond it no Date can show the result. */
export const MAX_TIME_MS = 8.64e15;

export function assertTime(name: string, ms: number): void {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_TIME_MS) throw new RangeError(`${name} must be whole UTC milliseconds within the Date range`);
}

export function pad(v: number, width: number): string {
  return String(v).padStart(width, '0');
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

export function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

// Proleptic Gregorian day numbers (H. Hinnant, "chrono-compatible low-level date algorithms").
// Integer arithmetic instead of Date: no quirk for years 0–99 and no object per step.

export function daysFromCivil(y: number, m: number, d: number): number {
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const year_of_era = year - era * 400;
  const day_of_year = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1; // from 1 March
  const day_of_era = year_of_era * 365 + Math.floor(year_of_era / 4) - Math.floor(year_of_era / 100) + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

export function civilFromDays(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const day_of_era = z - era * 146097;
  const year_of_era = Math.floor((day_of_era - Math.floor(day_of_era / 1460) + Math.floor(day_of_era / 36524) - Math.floor(day_of_era / 146096)) / 365);
  const day_of_year = day_of_era - (365 * year_of_era + Math.floor(year_of_era / 4) - Math.floor(year_of_era / 100));
  const mp = Math.floor((5 * day_of_year + 2) / 153); // month counted from March
  const d = day_of_year - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: year_of_era + era * 400 + (m <= 2 ? 1 : 0), m, d };
}
