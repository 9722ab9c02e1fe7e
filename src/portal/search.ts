// The portal's transaction search (docs/contract.md §19): the filters of GET /portal/transactions
// and of its CSV, checked and turned into one query shape: the selected account's payments,
// newest first by keyset on (created_at, transaction_id). Each filter is served by an index
// of migration 0061 (src/db/migrations/portal-search.ts), so a page costs one bounded index range whatever
// the number of payments.
import cc from 'currency-codes';
import type { Kysely } from 'kysely';
import { PostgresAdapter, sql } from 'kysely';
import { LAST4_EXPRESSION } from '../db/migrations/portal-search.js';
import type { DB } from '../db/schema.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { currencyExponent, MAX_AMOUNT_MINOR } from '../money/currency.js';
import { accountPaymentsQuery, paymentCursor } from '../payments/reader.js';
import { PAYMENT_STATUS_CODE, type PaymentStatus } from '../payments/states.js';

export const PAGE_SIZE = 50;
/** Rows per query while the CSV pages through the keyset. */
export const CSV_BATCH = 1000;
const DAY_MS = 86_400_000;

export const PAYMENT_STATUSES = Object.keys(PAYMENT_STATUS_CODE) as PaymentStatus[];

/** The filters as the GET form sends them: strings, '' (or absent) for "any". */
export interface FilterInput {
  from?: string;
  to?: string;
  status?: string;
  order_no?: string;
  transaction_id?: string;
  last4?: string;
  amount?: string;
  email?: string;
}
export const FILTER_FIELDS = ['from', 'to', 'status', 'order_no', 'email', 'transaction_id', 'last4', 'amount'] as const;

/** An amount filter in one currency exponent: `amount_minor` in one of `currencies`. */
export interface AmountMatch {
  exponent: number;
  amount_minor: number;
  currencies: readonly string[];
}

export interface TransactionFilter {
  /** Inclusive, UTC midnight of `from`. */
  created_from_ms?: number;
  /** Exclusive, UTC midnight of the day after `to` (so `to` is inclusive). */
  created_before_ms?: number;
  status?: PaymentStatus;
  /** The order numbers starting with this (case as written: order numbers are the merchant's exact strings). */
  order_no?: string;
  /**
   * Also bound `order_no` by the range [order_no, successor) so the unique (account_id,
   * order_no) index reads only the prefix's rows; set (by `withOrderRange`) only where the
   * column compares by code point, the one order in which that range holds exactly the prefix.
   */
  order_no_range?: boolean;
  /** The shopper e-mails starting with this, in any case (lower-cased). */
  email?: string;
  transaction_id?: string;
  last4?: string;
  /**
   * The amount in major units matches in any currency: one match per currency exponent the
   * decimal fits ("12.34" is 1234 of a 2-digit currency, 12340 of a 3-digit one, never 1234
   * yen). Each is its own index range; the pages are merged.
   */
  amounts?: AmountMatch[];
}

/** A filter value the form cannot mean: the page says which field and why. */
export class FilterProblem extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** Active ISO 4217 currencies by exponent (from the same table as `currencyExponent`). */
let byExponent: Map<number, string[]> | undefined;
function currenciesByExponent(): Map<number, string[]> {
  if (!byExponent) {
    byExponent = new Map();
    for (const code of cc.codes()) {
      const exp = currencyExponent(code);
      if (exp === null) continue;
      const list = byExponent.get(exp) ?? [];
      list.push(code);
      byExponent.set(exp, list);
    }
  }
  return byExponent;
}

/** A decimal in major units ("12", "12.3", "12.34") as minor units of a currency with `exponent` digits; null when it has more decimals than that. */
export function majorToMinor(text: string, exponent: number): number | null {
  const m = /^(\d{1,15})(?:\.(\d{1,4}))?$/.exec(text);
  if (!m) return null;
  const frac = m[2] ?? '';
  if (frac.length > exponent) return null;
  const minor = Number(m[1]) * 10 ** exponent + Number(frac.padEnd(exponent, '0') || '0');
  return Number.isSafeInteger(minor) && minor <= MAX_AMOUNT_MINOR ? minor : null;
}

function utcDay(text: string, field: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) throw new FilterProblem(field, `"${text}" is not a date (YYYY-MM-DD)`);
  return ms;
}

/** The form's values as a filter; throws FilterProblem naming the first field that cannot be read. */
export function parseFilters(input: FilterInput): TransactionFilter {
  const f: TransactionFilter = {};
  const given = (v: string | undefined) => (v === undefined ? '' : v.trim());
  const from = given(input.from);
  const to = given(input.to);
  if (from) f.created_from_ms = utcDay(from, 'from');
  if (to) f.created_before_ms = utcDay(to, 'to') + DAY_MS;
  if (f.created_from_ms !== undefined && f.created_before_ms !== undefined && f.created_before_ms <= f.created_from_ms)
    throw new FilterProblem('to', 'is before from');
  const status = given(input.status);
  if (status) {
    if (!(PAYMENT_STATUSES as string[]).includes(status)) throw new FilterProblem('status', `must be one of ${PAYMENT_STATUSES.join(', ')}`);
    f.status = status as PaymentStatus;
  }
  const order_no = given(input.order_no);
  if (order_no) f.order_no = order_no;
  const email = given(input.email);
  if (email) {
    if (/\s/.test(email)) throw new FilterProblem('email', 'must be an e-mail address or its beginning, without spaces');
    f.email = email.toLowerCase();
  }
  const transaction_id = given(input.transaction_id);
  if (transaction_id) f.transaction_id = transaction_id;
  const last4 = given(input.last4);
  if (last4) {
    if (!/^\d{4}$/.test(last4)) throw new FilterProblem('last4', 'must be the four last digits of the card');
    f.last4 = last4;
  }
  const amount = given(input.amount);
  if (amount) {
    if (!/^\d{1,15}(\.\d{1,4})?$/.test(amount)) throw new FilterProblem('amount', 'must be a decimal amount in major units, like 12.34');
    const amounts: AmountMatch[] = [];
    for (const [exponent, currencies] of [...currenciesByExponent()].sort((a, b) => a[0] - b[0])) {
      const amount_minor = majorToMinor(amount, exponent);
      if (amount_minor !== null) amounts.push({ exponent, amount_minor, currencies });
    }
    if (amounts.length === 0) throw new FilterProblem('amount', 'is too large or has more decimals than any currency');
    f.amounts = amounts;
  }
  return f;
}

/**
 * The LIKE pattern of a shopper e-mail prefix inside a payment's `details` (its JSON as
 * written, `"shopper_email":"…"`; lower-cased on both sides): the prefix as JSON would write
 * it, with LIKE's wildcards and the escape character `!` escaped.
 */
export function emailPattern(prefix: string): string {
  const json = JSON.stringify(prefix.toLowerCase()).slice(1, -1);
  return `%"shopper_email":"${json.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/**
 * The first string after every string that starts with `prefix`, in code point order: the
 * last code point one higher (surrogates skipped; a last U+10FFFF dropped and the one before
 * raised). Undefined when there is none (the prefix is all U+10FFFF).
 */
export function successor(prefix: string): string | undefined {
  const cps = [...prefix].map((c) => c.codePointAt(0) as number);
  while (cps.length > 0) {
    const last = (cps.pop() as number) + 1;
    if (last > 0x10ffff) continue;
    cps.push(last === 0xd800 ? 0xe000 : last);
    return String.fromCodePoint(...cps);
  }
  return undefined;
}

const codePointOrdered = new WeakMap<object, Promise<boolean>>();

/**
 * Whether `payments.order_no` compares by code point (asked once per database): SQLite's
 * BINARY always; on PostgreSQL, a C, POSIX or C.UTF-8 collation of the column or database.
 * A linguistic collation (en_US…) sorts `a-b` after `a.`, so the range would lose rows there:
 * the prefix is then matched by `substr` alone (every row of the account read).
 */
export function orderedByCodePoint(db: Kysely<DB>): Promise<boolean> {
  let known = codePointOrdered.get(db);
  if (!known) {
    known = (async () => {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return true;
      const r = await sql<{ collation: string | null }>`select coalesce(
          (select collation_name from information_schema.columns where table_schema = current_schema() and table_name = 'payments' and column_name = 'order_no'),
          (select datcollate from pg_database where datname = current_database())) as collation`.execute(db);
      return /^(C|POSIX|C\.UTF-?8|ucs_basic)$/i.test(r.rows[0]?.collation ?? '');
    })();
    codePointOrdered.set(db, known);
  }
  return known;
}

/** `f` with the order number's index range where the database allows it (see `order_no_range`). */
export async function withOrderRange(db: Kysely<DB>, f: TransactionFilter): Promise<TransactionFilter> {
  return f.order_no !== undefined && (await orderedByCodePoint(db)) ? { ...f, order_no_range: true } : f;
}

/** The shopper's e-mail kept in a payment's details ('' when none was given). */
export function shopperEmailOf(row: { details: string }): string {
  try {
    const d = JSON.parse(row.details || '{}') as { shopper_email?: unknown };
    return typeof d.shopper_email === 'string' ? d.shopper_email : '';
  } catch {
    return '';
  }
}

/** Where a page starts: after this row in newest-first order. */
export interface Cursor {
  created_at: number;
  transaction_id: string;
}

export const LISTED_COLUMNS = [
  'transaction_id',
  'created_at',
  'order_no',
  'currency',
  'amount_minor',
  'captured_minor',
  'refunded_minor',
  'status',
  'result_code',
  'card_masked',
  'card_brand',
  'kind',
  'details',
] as const;
export type ListedPayment = Pick<PaymentRow, (typeof LISTED_COLUMNS)[number]>;

/** A filter that can lead a query: its index is the range read, the others are checked on its rows. */
export type Lead = 'status' | 'last4' | 'amount' | 'created';

/** Rows a probe counts at most: enough to tell a needle from a haystack, cheap enough to run before every page. */
export const PROBE_LIMIT = 2000;

/**
 * The filters that could lead, in the order a tie is settled: when several count
 * PROBE_LIMIT rows or more, the date range leads (its index reads exactly the window, in
 * result order), then the card, the amount, the status.
 */
function leadsOf(f: TransactionFilter): Lead[] {
  const leads: Lead[] = [];
  if (f.created_from_ms !== undefined || f.created_before_ms !== undefined) leads.push('created');
  if (f.last4 !== undefined) leads.push('last4');
  if (f.amounts !== undefined) leads.push('amount');
  if (f.status !== undefined) leads.push('status');
  return leads;
}

// The account's payments from the one reader (src/payments/reader.ts); the filters, the
// choice of the leading index and the order stay here, written against migration 0061.
type PaymentsQuery = ReturnType<typeof paymentsOf>;
const paymentsOf = accountPaymentsQuery;

/**
 * The filter conditions. A filter that is not `lead` is written so that no index serves it
 * (`status || ''`, `amount_minor + 0`: same value, but an expression no index holds), so
 * both engines read the lead's index range and check the rest on its rows.
 */
function where(q: PaymentsQuery, f: TransactionFilter, amount: AmountMatch | undefined, lead: Lead | undefined, only?: Lead): PaymentsQuery {
  const indexed = (l: Lead) => lead === undefined || lead === l;
  const wanted = (l: Lead) => only === undefined || only === l;
  if (only === undefined) {
    if (f.transaction_id !== undefined) q = q.where('transaction_id', '=', f.transaction_id);
    // A prefix, compared exactly (LIKE folds case in SQLite and reads `_` and `%` as wildcards).
    if (f.order_no !== undefined) {
      q = q.where(sql`substr(${sql.ref('order_no')}, 1, ${[...f.order_no].length})`, '=', f.order_no);
      if (f.order_no_range) {
        q = q.where('order_no', '>=', f.order_no);
        const upper = successor(f.order_no);
        if (upper !== undefined) q = q.where('order_no', '<', upper);
      }
    }
    if (f.email !== undefined) q = q.where(sql<boolean>`lower(${sql.ref('details')}) like ${emailPattern(f.email)} escape '!'`);
  }
  if (f.status !== undefined && wanted('status')) q = q.where(indexed('status') ? sql.ref('status') : sql`${sql.ref('status')} || ''`, '=', f.status);
  if (f.last4 !== undefined && wanted('last4')) q = q.where(sql.raw(indexed('last4') ? LAST4_EXPRESSION : `(${LAST4_EXPRESSION}) || ''`), '=', f.last4);
  if (amount && wanted('amount'))
    q = q
      .where(indexed('amount') ? sql.ref('amount_minor') : sql`${sql.ref('amount_minor')} + 0`, '=', amount.amount_minor)
      .where('currency', 'in', [...amount.currencies]);
  const created = indexed('created') ? sql.ref('created_at') : sql`${sql.ref('created_at')} + 0`;
  if (f.created_from_ms !== undefined && wanted('created')) q = q.where(created, '>=', f.created_from_ms);
  if (f.created_before_ms !== undefined && wanted('created')) q = q.where(created, '<', f.created_before_ms);
  return q;
}

/**
 * One query of the search: the account's payments that pass `f` (with one amount match, if
 * any), after `after`, newest first, at most `limit`, reading the index of `lead`. Exported
 * so the plans can be read (EXPLAIN) exactly as they run.
 */
export function searchQuery(
  db: Kysely<DB>,
  account_id: string,
  f: TransactionFilter,
  amount: AmountMatch | undefined,
  after: Cursor | undefined,
  limit: number,
  lead?: Lead,
) {
  let q = where(paymentsOf(db, account_id), f, amount, lead).select(LISTED_COLUMNS);
  if (after) q = q.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'transaction_id'), '<', tuple(after.created_at, after.transaction_id)));
  // The leading equality filter's own column first in the order: one value, so the rows
  // come in the same order, but only that filter's index gives this order without a sort.
  // PostgreSQL otherwise may read (account_id, created_at) backward for a common value and
  // skip every newer row of other values (its statistics cannot see that correlation).
  // SQLite does the opposite: it sorts the whole range for such an order (19 s at 1M rows
  // in the bench), and its own choice of the lead's index is right: PostgreSQL only.
  const leading = lead ?? (leadsOf(f).length === 1 ? leadsOf(f)[0] : undefined);
  if (f.transaction_id === undefined && db.getExecutor().adapter instanceof PostgresAdapter) {
    if (leading === 'status') q = q.orderBy('status', 'desc');
    else if (leading === 'last4') q = q.orderBy(sql.raw(LAST4_EXPRESSION), 'desc');
    else if (leading === 'amount') q = q.orderBy('amount_minor', 'desc');
  }
  return q.orderBy('created_at', 'desc').orderBy('transaction_id', 'desc').limit(limit);
}

/**
 * Which of several filters leads: the one with the fewest rows, counted (up to PROBE_LIMIT)
 * on each filter's own index. A planner without statistics of the values (SQLite keeps none
 * unless ANALYZE ran) may otherwise read a million rows of a common card for a status that
 * has none. Undefined when one filter or none could lead, or a unique one is given.
 */
export async function chooseLead(db: Kysely<DB>, account_id: string, f: TransactionFilter): Promise<Lead | undefined> {
  const leads = leadsOf(f);
  if (leads.length < 2 || f.transaction_id !== undefined) return undefined;
  const count = async (lead: Lead, amount?: AmountMatch) => {
    const probe = where(paymentsOf(db, account_id), f, amount, lead, lead).select(sql<number>`1`.as('one')).limit(PROBE_LIMIT);
    const row = await db
      .selectFrom(probe.as('probe'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  const counts = await Promise.all(
    leads.map(async (lead) => (lead === 'amount' ? (await Promise.all((f.amounts ?? []).map((a) => count(lead, a)))).reduce((x, y) => x + y, 0) : count(lead))),
  );
  let best = 0;
  for (let i = 1; i < leads.length; i++) if ((counts[i] as number) < (counts[best] as number)) best = i;
  return leads[best];
}

function newestFirst(a: ListedPayment, b: ListedPayment): number {
  const d = Number(b.created_at) - Number(a.created_at);
  if (d !== 0) return d;
  return a.transaction_id < b.transaction_id ? 1 : a.transaction_id > b.transaction_id ? -1 : 0;
}

/** The next `limit` payments of the search after `after` (the first ones without it); `lead` as chooseLead gave it. */
export async function searchPayments(
  db: Kysely<DB>,
  account_id: string,
  f: TransactionFilter,
  after: Cursor | undefined,
  limit: number,
  lead?: Lead,
): Promise<ListedPayment[]> {
  const branches = f.amounts ?? [undefined];
  const pages = await Promise.all(branches.map((amount) => searchQuery(db, account_id, f, amount, after, limit, lead).execute()));
  if (pages.length === 1) return pages[0] as ListedPayment[];
  return pages.flat().sort(newestFirst).slice(0, limit);
}

/** The cursor of `transaction_id` on the account (an id of another account is no cursor). */
export function cursorOf(db: Kysely<DB>, account_id: string, transaction_id: string): Promise<Cursor | undefined> {
  return paymentCursor(db, account_id, transaction_id);
}

/** What the list and the CSV show of a card: the BIN and the last four, never more (PCI DSS 3.4.1). */
export function cardOf(row: Pick<PaymentRow, 'card_masked'>): string {
  const masked = row.card_masked ?? '';
  if (masked.length < 10) return '';
  const bin = masked.slice(0, 6);
  const last4 = masked.slice(-4);
  // Built from the two ends only, so a middle digit can never be shown whatever the column holds.
  return /^\d{6}$/.test(bin) && /^\d{4}$/.test(last4) ? `${bin}******${last4}` : '';
}
