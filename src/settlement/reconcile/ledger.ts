// Tollgate's side of a reconciliation: the ledger's movements of an account (src/ledger/README.md),
// looked up by the references a batch of report lines names, never the whole ledger at once
// (issue 35 item 3: bounded memory). A movement is what a processor reports as one line:
//
//   movement          postings (reason)                 amount: the posting's positive entry
//   capture           capture (+ its fee postings)      merchant_pending +C; fee: fees +F
//   refund            refund or refund_settled          processor_clearing +N (refund_pending: pending)
//   refund_reversal   refund_failed                     merchant_available +N
//   dispute (n-th)    dispute (+ its dispute_fee)       processor_clearing +A; fee: fees +F
//   dispute_won (n-th) dispute_won                      merchant_available +A
//
// Every one of these postings has exactly one positive entry, and it carries the amount.
import { type SqlBool, sql } from 'kysely';
import { timeOrderedId } from '../../crypto/ids.js';
import type { Tx } from '../../db/store.js';
import type { MovementKind } from '../../db/tables/reconciliation.js';
import { engineOf } from '../../db/unit.js';

/**
 * A batch's references as a table `want` of one column, given as one parameter: `unnest` of a
 * text array on PostgreSQL, json_each of a JSON array on SQLite. Joined, not tested with `IN`:
 * PostgreSQL planned a list of 500 values longer than it ran the query, and with `= any(…)`
 * chose a scan of the whole table on a ledger of a few hundred thousand postings (issue 35's
 * bench); a function in the join is looked up row by row through the index on either engine.
 */
function wanted(db: Tx, values: readonly string[]) {
  const pg = engineOf(db) === 'postgres';
  const unique = [...new Set(values)];
  const table = pg ? sql`unnest(${unique}::text[])` : sql`json_each(${JSON.stringify(unique)})`;
  // A function returning a scalar names its column after its alias on PostgreSQL; json_each's is `value`.
  const id = sql.ref(pg ? 'want.want' : 'want.value');
  return { table: table.as('want'), is: (column: string) => sql<SqlBool>`${sql.ref(column)} = ${id}` };
}

type Role = 'amount' | 'fee' | 'pending';

/** Each posting reason the reconciler reads: the movement it belongs to and what it gives it. */
const ROLES: Readonly<Record<string, { kind: MovementKind; role: Role }>> = {
  capture: { kind: 'capture', role: 'amount' },
  fee: { kind: 'capture', role: 'fee' },
  refund: { kind: 'refund', role: 'amount' },
  refund_settled: { kind: 'refund', role: 'amount' },
  refund_pending: { kind: 'refund', role: 'pending' },
  refund_failed: { kind: 'refund_reversal', role: 'amount' },
  dispute: { kind: 'dispute', role: 'amount' },
  dispute_fee: { kind: 'dispute', role: 'fee' },
  dispute_won: { kind: 'dispute_won', role: 'amount' },
};
const READ_REASONS = Object.keys(ROLES);

/**
 * The postings a processor reports a line for (a refund that failed before it left, a pending
 * refund and fees are not): the file's date range is held against these.
 */
export const REPORTED_REASONS = ['capture', 'refund', 'refund_settled', 'dispute', 'dispute_won'] as const;

/** Tollgate's side of one movement. */
export interface Movement {
  key: string;
  kind: MovementKind;
  transaction_id: string;
  refund_id: string;
  /** The connector that took the payment. */
  connector: string;
  currency: string;
  amount_minor: number;
  fee_minor: number;
  /** A refund sent and not yet confirmed by the processor. */
  pending_minor: number;
  /** The time of each REPORTED_REASONS posting of it. */
  times: number[];
}

/** The key a line and a movement are paired by (refunds by our refund id, disputes by their order on the payment). */
export function movementKey(kind: MovementKind, transaction_id: string, refund_id: string, ordinal: number): string {
  if (kind === 'refund' || kind === 'refund_reversal') return `${kind}|${refund_id}`;
  if (kind === 'capture') return `capture|${transaction_id}`;
  return `${kind}|${transaction_id}|${ordinal}`;
}

export interface PostingRow {
  posting_id: string;
  transaction_id: string;
  reason: string;
  ref: string;
  currency: string;
  created_at: number | string;
  amount_minor: number | string;
  connector: string | null;
}

/** Postings of one moment in the order they are folded: a dispute before its fee. */
const byTime = (a: PostingRow, b: PostingRow) => Number(a.created_at) - Number(b.created_at) || rank(a) - rank(b);
const rank = (r: PostingRow) => (ROLES[r.reason]?.role === 'amount' ? 0 : 1);

/**
 * Postings folded into movements. A payment's n-th dispute (or win) is its n-th such posting in
 * time; a dispute's fee is posted with it (same time), so it belongs to the dispute counted last.
 */
export function foldMovements(rows: readonly PostingRow[], into = new Map<string, Movement>()): Map<string, Movement> {
  const ordinals = new Map<string, number>();
  for (const r of [...rows].sort(byTime)) {
    const role = ROLES[r.reason];
    if (!role) continue;
    let ordinal = 1;
    if (role.kind === 'dispute' || role.kind === 'dispute_won') {
      const counter = `${role.kind}|${r.transaction_id}`;
      ordinal = (ordinals.get(counter) ?? 0) + (role.role === 'amount' ? 1 : 0);
      ordinal = Math.max(ordinal, 1);
      ordinals.set(counter, ordinal);
    }
    const key = movementKey(role.kind, r.transaction_id, r.ref, ordinal);
    let m = into.get(key);
    if (!m) {
      const refund_id = role.kind === 'refund' || role.kind === 'refund_reversal' ? r.ref : '';
      m = {
        key,
        kind: role.kind,
        transaction_id: r.transaction_id,
        refund_id,
        connector: r.connector ?? '',
        currency: r.currency,
        amount_minor: 0,
        fee_minor: 0,
        pending_minor: 0,
        times: [],
      };
      into.set(key, m);
    }
    const amount = Number(r.amount_minor);
    if (role.role === 'amount') {
      m.amount_minor += amount;
      if ((REPORTED_REASONS as readonly string[]).includes(r.reason)) m.times.push(Number(r.created_at));
    } else if (role.role === 'fee') m.fee_minor += amount;
    else m.pending_minor += amount;
  }
  return into;
}

/** The movements of these payments of the account (one query; the caller keeps batches to a few hundred ids). */
export async function movementsOf(db: Tx, account_id: string, transaction_ids: readonly string[]): Promise<Map<string, Movement>> {
  if (transaction_ids.length === 0) return new Map();
  const want = wanted(db, transaction_ids);
  const rows = await db
    .selectFrom(want.table)
    .innerJoin('ledger_postings as p', (j) => j.on(want.is('p.transaction_id')))
    .innerJoin('ledger_entries as e', 'e.posting_id', 'p.posting_id')
    .leftJoin('payments as pay', 'pay.transaction_id', 'p.transaction_id')
    .select(['p.posting_id', 'p.transaction_id', 'p.account_id', 'p.reason', 'p.ref', 'p.currency', 'p.created_at', 'e.amount_minor', 'pay.connector'])
    .where('p.reason', 'in', READ_REASONS)
    .where('e.amount_minor', '>', 0)
    .execute();
  // The account is checked here, not in SQL: given both, SQLite's planner may walk an index of the
  // account's postings instead of the payments' (a transaction id is one account's anyway).
  return foldMovements(rows.filter((r) => r.account_id === account_id));
}

/** What a processor's reference names in Tollgate: a payment, and for a refund our refund id. */
export interface Named {
  transaction_id: string;
  refund_id: string;
}

/**
 * The processor's references (a PaymentIntent, a refund, a dispute) our attempts and disputes
 * of this account and connector carry (`processor_attempts.reference`, `disputes.processor_ref`).
 */
export async function namedBy(db: Tx, account_id: string, connector: string, refs: readonly string[]): Promise<Map<string, Named>> {
  const named = new Map<string, Named>();
  if (refs.length === 0) return named;
  const want = wanted(db, refs);
  const attempts = await db
    .selectFrom(want.table)
    .innerJoin('processor_attempts as a', (j) => j.on(want.is('a.reference')))
    .leftJoin('refunds as r', (j) => j.onRef('r.refund_reference_id', '=', 'a.object_id').on('a.operation', '=', 'refund'))
    .select(['a.reference', 'a.operation', 'a.object_id', 'r.transaction_id as refund_transaction_id'])
    .where('a.account_id', '=', account_id)
    .where('a.connector', '=', connector)
    .where('a.operation', 'in', ['authorise', 'capture', 'refund', 'cancel'])
    .execute();
  for (const a of attempts) {
    if (a.operation === 'refund') named.set(a.reference, { transaction_id: a.refund_transaction_id ?? '', refund_id: a.object_id });
    else if (!named.has(a.reference)) named.set(a.reference, { transaction_id: a.object_id, refund_id: '' });
  }
  const disputes = await db
    .selectFrom(want.table)
    .innerJoin('disputes as d', (j) => j.on(want.is('d.processor_ref')))
    .select(['d.processor_ref', 'd.transaction_id'])
    .where('d.connector', '=', connector)
    .where('d.account_id', '=', account_id)
    .execute();
  for (const d of disputes) named.set(d.processor_ref, { transaction_id: d.transaction_id, refund_id: '' });
  return named;
}

/** The posting-id bound of a time: posting ids are `pst_` + a time-ordered id (src/crypto/ids.ts), so ids sort by their creation time. */
function postingIdAt(ms: number): string {
  return `pst_${timeOrderedId(ms).slice(0, 10)}`;
}

/**
 * The account's reported postings made in [from_ms, to_ms], whatever the connector (the
 * payments' table is not joined: most of them are named by the report): a range of the
 * posting ids' index, the time checked too.
 */
function reportedInRange(db: Tx, account_id: string, from_ms: number, to_ms: number) {
  return db
    .selectFrom('ledger_postings as p')
    .where('p.posting_id', '>=', postingIdAt(from_ms))
    .where('p.posting_id', '<', postingIdAt(to_ms + 1))
    .where('p.created_at', '>=', from_ms)
    .where('p.created_at', '<=', to_ms)
    .where('p.account_id', '=', account_id)
    .where('p.reason', 'in', REPORTED_REASONS);
}

/**
 * How many reported postings of the range there are, of any connector: when the report named
 * that many, it named them all (it names only the connector's), and the range need not be read.
 */
export async function countReported(db: Tx, account_id: string, from_ms: number, to_ms: number): Promise<number> {
  const row = await reportedInRange(db, account_id, from_ms, to_ms).select(sql<number | string>`count(*)`.as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Postings read per page of the range scan. */
export const SCAN_PAGE = 2_000;

export interface ReportedPosting {
  posting_id: string;
  key: string;
  kind: MovementKind;
  transaction_id: string;
  refund_id: string;
  currency: string;
}

/**
 * The reported postings of the range, a page at a time after the posting `after` (its id; ''
 * for the first page), each with its movement's key. A dispute's ordinal is counted over all of
 * its payment's postings of that reason up to its time, as `foldMovements` counts it.
 */
export async function reportedPage(db: Tx, account_id: string, range: { from_ms: number; to_ms: number }, after: string): Promise<ReportedPosting[]> {
  const rows = await reportedInRange(db, account_id, range.from_ms, range.to_ms)
    .select(['p.posting_id', 'p.transaction_id', 'p.reason', 'p.ref', 'p.currency'])
    .select(
      sql<
        number | string
      >`case when p.reason in ('dispute', 'dispute_won') then (select count(*) from ledger_postings d where d.transaction_id = p.transaction_id and d.account_id = p.account_id and d.reason = p.reason and d.created_at <= p.created_at) else 1 end`.as(
        'ordinal',
      ),
    )
    .where('p.posting_id', '>', after)
    .orderBy('p.posting_id')
    .limit(SCAN_PAGE)
    .execute();
  return rows.map((r) => {
    const kind = (ROLES[r.reason] as { kind: MovementKind }).kind;
    return {
      posting_id: r.posting_id,
      key: movementKey(kind, r.transaction_id, r.ref, Number(r.ordinal)),
      kind,
      transaction_id: r.transaction_id,
      refund_id: kind === 'refund' ? r.ref : '',
      currency: r.currency,
    };
  });
}

/** Of these postings, those of the connector's payments, with their amounts (a posting's positive entry). */
export async function amountsOf(db: Tx, connector: string, posting_ids: readonly string[]): Promise<Map<string, number>> {
  if (posting_ids.length === 0) return new Map();
  const want = wanted(db, posting_ids);
  const rows = await db
    .selectFrom(want.table)
    .innerJoin('ledger_postings as p', (j) => j.on(want.is('p.posting_id')))
    .innerJoin('payments as pay', 'pay.transaction_id', 'p.transaction_id')
    .innerJoin('ledger_entries as e', 'e.posting_id', 'p.posting_id')
    .select(['p.posting_id', 'e.amount_minor'])
    .where('pay.connector', '=', connector)
    .where('e.amount_minor', '>', 0)
    .execute();
  return new Map(rows.map((r) => [r.posting_id, Number(r.amount_minor)]));
}
