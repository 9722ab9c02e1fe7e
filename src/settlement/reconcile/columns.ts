// Reading a processor's report cell by cell (issue 35 item 3): columns found by their header
// name, never by position (a report may add, drop or reorder optional columns); amounts in the
// currency's decimal form made into integer minor units with the ISO 4217 exponent, no float
// ever touching money (docs/style.md §3); times with their zone made into UTC milliseconds.
// Every refusal names the line, so an operator can open the file there.
import { currencyExponent, MAX_AMOUNT_MINOR, type MinorUnits } from '../../money/currency.js';

/** A report the reconciler cannot read: the line it stopped at (1 is the header row) and why. */
export class ReportError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** A column a format reads: its key, the header names it goes by (first is the documented one), and whether the file must have it. */
export interface ColumnSpec<K extends string> {
  key: K;
  names: readonly string[];
  required: boolean;
}

/** Where each column is in the rows: its index, or -1 for an optional column the file lacks. */
export type ColumnIndex<K extends string> = Readonly<Record<K, number>>;

const normal = (name: string) => name.trim().toLowerCase();

/**
 * The index of every column of `specs` in `header`. Names compare trimmed and case-blind;
 * unknown extra columns are ignored. A required column missing, or one named twice, is a
 * ReportError on line 1 naming it: a file of another format fails here, before any line.
 */
export function indexColumns<K extends string>(header: readonly string[], specs: readonly ColumnSpec<K>[], title: string): ColumnIndex<K> {
  const at = new Map<string, number>();
  header.forEach((name, i) => {
    const n = normal(name);
    if (n === '') return;
    if (at.has(n)) throw new ReportError(1, `the column "${name.trim()}" appears twice`);
    at.set(n, i);
  });
  const index = {} as Record<K, number>;
  const missing: string[] = [];
  for (const spec of specs) {
    const found = spec.names.map((n) => at.get(normal(n))).find((i) => i !== undefined);
    index[spec.key] = found ?? -1;
    if (found === undefined && spec.required) missing.push(`"${spec.names[0]}"`);
  }
  if (missing.length > 0) throw new ReportError(1, `not ${title}: the header row lacks the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  return index;
}

/** A cell's text, trimmed; '' for a column the file lacks. */
export function cell(cells: readonly string[], i: number): string {
  return i < 0 ? '' : (cells[i] ?? '').trim();
}

/** An upper-case ISO 4217 code Tollgate knows, from a cell (Stripe writes them lower-case). */
export function currencyCell(text: string, column: string, line: number): string {
  const code = text.toUpperCase();
  if (currencyExponent(code) === null) throw new ReportError(line, `${column} "${text}" is not an ISO 4217 currency`);
  return code;
}

const DECIMAL = /^(-?)(\d{1,16})(?:\.(\d{1,12}))?$/;

/**
 * A decimal amount in `currency`'s unit ("12.5", "-0.30", "1200") as signed minor units, or
 * null for an empty cell. Digits past the exponent must be zeros ("1000.00" ISK is 1000): a
 * report never carries a fraction of a minor unit, so one is refused, not rounded.
 */
export function amountCell(text: string, currency: string, column: string, line: number): MinorUnits | null {
  if (text === '') return null;
  const m = DECIMAL.exec(text);
  const exp = currencyExponent(currency) as number;
  const refuse = () => new ReportError(line, `${column} "${text}" is not an amount in ${currency} (digits, a point and at most ${exp} decimal places)`);
  if (!m) throw refuse();
  const fraction = m[3] ?? '';
  if (!/^0*$/.test(fraction.slice(exp))) throw refuse();
  const minor = Number(`${m[2]}${fraction.slice(0, exp).padEnd(exp, '0')}`);
  if (!Number.isSafeInteger(minor) || minor > MAX_AMOUNT_MINOR) throw new ReportError(line, `${column} "${text}" is too large`);
  return m[1] === '-' && minor !== 0 ? -minor : minor;
}

/**
 * UTC offsets (minutes) of the zone abbreviations a report's TimeZone column carries (Adyen:
 * "the ISO code for the configured time zone for your company account … BST, CET, CEST, etc.").
 * An abbreviation not listed is refused rather than guessed: IST, for one, is two zones.
 */
export const ZONE_OFFSETS_MIN: Readonly<Record<string, number>> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  WEST: 60,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  MSK: 180,
  GST: 240,
  SGT: 480,
  HKT: 480,
  AWST: 480,
  JST: 540,
  KST: 540,
  ACST: 570,
  ACDT: 630,
  AEST: 600,
  AEDT: 660,
  NZST: 720,
  NZDT: 780,
  BRT: -180,
  ART: -180,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
};

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CLOCK = /^(\d{2}):(\d{2})(?::(\d{2}))?(?: ?(?:Z|UTC|[+-]00:?00))?$/;

/** Midnight UTC of each day written (a report holds a few days and a line each second): NaN for a date that is not one. */
const days = new Map<string, number>();
function dayMs(text: string): number {
  let ms = days.get(text);
  if (ms === undefined) {
    const m = DATE.exec(text);
    const [y, mo, d] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
    ms = m ? Date.UTC(y, mo - 1, d) : Number.NaN;
    if (m && new Date(ms).getUTCDate() !== d) ms = Number.NaN;
    if (days.size > 10_000) days.clear();
    days.set(text, ms);
  }
  return ms;
}

/** A time as it is written ("2026-05-01 10:00:00" or to the minute) in `zone`: its UTC ms and the last ms it may stand for (its precision). */
export function timeCell(text: string, zone: string, column: string, line: number): { at_ms: number; end_ms: number } {
  const offset = ZONE_OFFSETS_MIN[zone.toUpperCase()];
  if (offset === undefined) throw new ReportError(line, `time zone "${zone}" is not one Tollgate knows (${Object.keys(ZONE_OFFSETS_MIN).join(', ')})`);
  const sep = text.charAt(10);
  const clock = sep === ' ' || sep === 'T' ? CLOCK.exec(text.slice(11)) : null;
  const day = clock ? dayMs(text.slice(0, 10)) : Number.NaN;
  if (!clock || (Number.isNaN(day) && !DATE.test(text.slice(0, 10))))
    throw new ReportError(line, `${column} "${text}" is not a time written YYYY-MM-DD HH:MM[:SS]`);
  const [h, mi, sec] = [Number(clock[1]), Number(clock[2]), clock[3] === undefined ? 0 : Number(clock[3])];
  if (Number.isNaN(day) || h > 23 || mi > 59 || sec > 59) throw new ReportError(line, `${column} "${text}" is not a real time`);
  const at_ms = day + ((h * 60 + mi - offset) * 60 + sec) * 1000;
  return { at_ms, end_ms: at_ms + (clock[3] === undefined ? 59_999 : 999) };
}
