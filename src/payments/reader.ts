// The one reader of the `payments` table (issue 30, item 2): every read of a payment by the
// order query, the acquiring routes, the generic interface, the portal, review, APM, the
// risk engine and the method ranking goes through a function of this file, so the columns,
// the scoping by account and the indexes each read relies on are written in one place.
// Two folders below payments read the table themselves, because payments writes through
// them and they cannot import it: `ledger verify` (an audit of the ledger against the raw
// rows, on purpose independent of this code) and the event listing's order-number lookup
// (src/notifications/service.ts).
//
// Each function builds exactly the statement its caller built before (same columns, same
// conditions, same order and limit), so the query plans do not move: the order query of
// 100 ids and the portal's searches are performance targets (issue 6; docs/performance.md).
// Kysely writes a statement from its tree, not from the order of the builder calls, so a
// caller that adds its own conditions or columns to a `...Query` base below gets the SQL
// it wrote before.
//
// Every function takes a `Kysely<DB>`: `store.db` for committed data, or a transaction's
// `tx` when the read must see that transaction's own writes.
import type { Kysely } from 'kysely';
import { param, runPrepared } from '../db/prepared.js';
import type { DB } from '../db/schema.js';
import { ORDER_RECORD_COLUMNS, type OrderRecordRow } from './order-record.js';
import type { PaymentStatus } from './states.js';
import type { PaymentRow } from './tables.js';

// --- One payment -------------------------------------------------------------------------

/** The payment `transaction_id`, whatever its account (callers that hold an id the gateway issued). */
export function paymentById(db: Kysely<DB>, transaction_id: string, opts: { lock?: boolean } = {}): Promise<PaymentRow | undefined> {
  const q = db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id);
  // `lock` (PostgreSQL, in a transaction): FOR UPDATE, so a concurrent writer of the row waits.
  return (opts.lock ? q.forUpdate() : q).executeTakeFirst();
}

/** The payment `transaction_id`, which must exist (a row this process just wrote or a foreign key points at); Kysely's NoResultError otherwise. */
export function requirePayment(db: Kysely<DB>, transaction_id: string): Promise<PaymentRow> {
  return db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
}

/** A column of a payment row. */
export type PaymentColumn = keyof PaymentRow & string;

/** Some columns of payment `transaction_id` (a batch item reporting where a race left it, a job reading one field). */
export function paymentColumns<C extends PaymentColumn>(
  db: Kysely<DB>,
  transaction_id: string,
  columns: readonly C[],
): Promise<Pick<PaymentRow, C> | undefined> {
  return db.selectFrom('payments').select(columns).where('transaction_id', '=', transaction_id).executeTakeFirst() as Promise<Pick<PaymentRow, C> | undefined>;
}

/** Some columns of payment `transaction_id`, which must exist (a row locked by this transaction); Kysely's NoResultError otherwise. */
export async function requirePaymentColumns<C extends PaymentColumn>(
  db: Kysely<DB>,
  transaction_id: string,
  columns: readonly C[],
): Promise<Pick<PaymentRow, C>> {
  // Kysely cannot relate its row type over a generic column list to Pick<PaymentRow, C>; the columns are C.
  const row: unknown = await db.selectFrom('payments').select(columns).where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
  return row as Pick<PaymentRow, C>;
}

/** Some columns of payment `transaction_id` if it belongs to `account_id` (a batch re-run checking what its first attempt did). */
export function accountPaymentColumns<C extends PaymentColumn>(
  db: Kysely<DB>,
  account_id: string,
  transaction_id: string,
  columns: readonly C[],
): Promise<Pick<PaymentRow, C> | undefined> {
  return db
    .selectFrom('payments')
    .select(columns)
    .where('transaction_id', '=', transaction_id)
    .where('account_id', '=', account_id)
    .executeTakeFirst() as Promise<Pick<PaymentRow, C> | undefined>;
}

/** The payment `transaction_id` if it belongs to `account_id` (an id of another account is none). */
export function accountPayment(db: Kysely<DB>, account_id: string, transaction_id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).where('account_id', '=', account_id).executeTakeFirst();
}

/**
 * The payment of `order_no` on `account_id` (unique per account, docs/contract.md §4): the
 * duplicate-order check of every payment request. On the authorise hot path, so it is a
 * prepared shape (src/db/prepared.ts): built and compiled once per engine.
 */
export async function paymentByOrderNo(db: Kysely<DB>, account_id: string, order_no: string): Promise<PaymentRow | undefined> {
  const r = await runPrepared<PaymentRow>(
    db,
    'authorise:existing',
    () => db.selectFrom('payments').selectAll().where('account_id', '=', param('account_id')).where('order_no', '=', param('order_no')),
    { account_id, order_no },
  );
  return r.rows[0];
}

// --- The order query (src/payments/query.ts) ---------------------------------------------

/** The order records' columns of the account's payments among `transaction_ids` (≤ 100), in no order. */
export function orderRowsByIds(db: Kysely<DB>, account_id: string, transaction_ids: readonly string[]): Promise<OrderRecordRow[]> {
  return db.selectFrom('payments').select(ORDER_RECORD_COLUMNS).where('account_id', '=', account_id).where('transaction_id', 'in', transaction_ids).execute();
}

/** The order records' columns of the account's payments among `order_nos` (≤ 100), in no order. */
export function orderRowsByOrderNos(db: Kysely<DB>, account_id: string, order_nos: readonly string[]): Promise<OrderRecordRow[]> {
  return db.selectFrom('payments').select(ORDER_RECORD_COLUMNS).where('account_id', '=', account_id).where('order_no', 'in', order_nos).execute();
}

/**
 * The order records' columns of the account's payments created in [from_ms, to_ms], oldest
 * first by keyset on (created_at, transaction_id) after `after`, at most `limit` rows.
 */
export function orderRowsCreatedIn(
  db: Kysely<DB>,
  account_id: string,
  from_ms: number,
  to_ms: number,
  after: { created_at: number; transaction_id: string } | undefined,
  limit: number,
): Promise<OrderRecordRow[]> {
  let q = db
    .selectFrom('payments')
    .select(ORDER_RECORD_COLUMNS)
    .where('account_id', '=', account_id)
    .where('created_at', '>=', from_ms)
    .where('created_at', '<=', to_ms);
  if (after) {
    const { created_at: at, transaction_id: id } = after;
    q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('transaction_id', '>', id)])]));
  }
  return q.orderBy('created_at').orderBy('transaction_id').limit(limit).execute();
}

// --- The generic interface (src/generic/payments.ts) -------------------------------------

/** The payments one API key sees (its account, in its mode), every column: the base of its list (keyset pages in src/generic/wire.ts). */
export function modePaymentsQuery(db: Kysely<DB>, account_id: string, livemode: 0 | 1) {
  return db.selectFrom('payments').selectAll().where('account_id', '=', account_id).where('livemode', '=', livemode);
}

/** The payment `transaction_id` if the key's account and mode hold it. */
export function modePayment(db: Kysely<DB>, account_id: string, livemode: 0 | 1, transaction_id: string): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('transaction_id', '=', transaction_id)
    .where('account_id', '=', account_id)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

// --- The portal and the method ranking: bases that callers narrow ------------------------

/**
 * The account's payments, nothing selected yet: the base of the portal's search
 * (src/portal/search.ts: its filters are written against the indexes of migration 0061,
 * and it chooses the leading one), the dashboard's daily figures and the method ranking's
 * recent attempts (index `payments_method_recent`).
 */
export function accountPaymentsQuery(db: Kysely<DB>, account_id: string) {
  return db.selectFrom('payments').where('account_id', '=', account_id);
}

/** The keyset position (created_at, transaction_id) of `transaction_id` on the account. */
export async function paymentCursor(
  db: Kysely<DB>,
  account_id: string,
  transaction_id: string,
): Promise<{ created_at: number; transaction_id: string } | undefined> {
  const row = await db
    .selectFrom('payments')
    .select(['created_at', 'transaction_id'])
    .where('transaction_id', '=', transaction_id)
    .where('account_id', '=', account_id)
    .executeTakeFirst();
  return row ? { created_at: Number(row.created_at), transaction_id: row.transaction_id } : undefined;
}

// --- Jobs ----------------------------------------------------------------------------------

/** Payments held for review whose hold ended by `now_ms`, oldest first, at most `limit` (of one account if given). */
export function reviewsDue(db: Kysely<DB>, now_ms: number, limit: number, account_id?: string): Promise<PaymentRow[]> {
  let q = db.selectFrom('payments').selectAll().where('status', '=', 'review').where('expires_at', '<=', now_ms);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  return q.orderBy('expires_at').limit(limit).execute();
}

/** Ids of the payments in `status` whose deadline passed by `now_ms`, earliest first, at most `limit` (of one account if given): the expiry job's batch. */
export function expiringIds(
  db: Kysely<DB>,
  status: PaymentStatus,
  now_ms: number,
  limit: number,
  account_id?: string,
): Promise<Array<{ transaction_id: string }>> {
  let q = db.selectFrom('payments').select('transaction_id').where('status', '=', status).where('expires_at', '<=', now_ms);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  return q.orderBy('expires_at').limit(limit).execute();
}

// --- Facts for the risk engine ---------------------------------------------------------------

/** The amounts of an account's latest `limit` payments in `currency` with one of `statuses`, newest first (the risk engine's amount history). */
export function recentAmounts(
  db: Kysely<DB>,
  account_id: string,
  currency: string,
  statuses: readonly PaymentStatus[],
  limit: number,
): Promise<Array<{ amount_minor: number }>> {
  return db
    .selectFrom('payments')
    .select('amount_minor')
    .where('account_id', '=', account_id)
    .where('currency', '=', currency)
    .where('status', 'in', statuses)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}
