// A settlement batch's lines as the ledger holds them (docs/contract.md §23): its postings
// (`ledger_postings.batch_id`) grouped by kind, payment and sub-object, with what each moved in
// the merchant's balance (net) and the fees charged with it. Here, below src/settlement, so
// that `ledger verify` checks batches without importing the capability that builds them.
import { sql } from 'kysely';
import type { Tx } from '../db/store.js';

/** A batch's unsettled merchant_pending entries: how many, and their sum. */
export async function unsettledPending(tx: Pick<Tx, 'selectFrom'>, account_id: string, currency: string, batch_id: string) {
  const r = await tx
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
    .select([sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(e.amount_minor), 0)`.as('total')])
    .where('p.account_id', '=', account_id)
    .where('p.currency', '=', currency)
    .where('p.batch_id', '=', batch_id)
    .where('e.ledger_account', '=', 'merchant_pending')
    .where('e.settled', '=', 0)
    .executeTakeFirstOrThrow();
  return { entries: Number(r.n), total: Number(r.total) };
}

/** A posting's reason as its line's kind: a capture and its fee are one line, a dispute and its fee another. */
const KIND_SQL = sql`case p.reason ${sql.join(
  Object.entries({ fee: 'capture', dispute_fee: 'dispute', refund_pending: 'refund', refund_settled: 'refund' }).map(
    ([from, to]) => sql`when ${from} then ${to}`,
  ),
  sql` `,
)} else p.reason end`;

/** A batch's lines grouped in SQL: kind, payment, sub-object, their net and fee, and whether they move the balance. */
export function groupedLines(account_id: string, currency: string, batch_id: string) {
  return sql`select ${KIND_SQL} as kind, p.transaction_id as transaction_id, p.ref as ref, min(p.created_at) as created_at,
      sum(case when e.ledger_account in ('merchant_pending', 'merchant_available') then e.amount_minor else 0 end) as net,
      sum(case when e.ledger_account = 'fees' then e.amount_minor else 0 end) as fee,
      sum(case when e.ledger_account in ('merchant_pending', 'merchant_available') then 1 else 0 end) as touches
    from ledger_postings p join ledger_entries e on e.posting_id = p.posting_id
    where p.account_id = ${account_id} and p.currency = ${currency} and p.batch_id = ${batch_id} and p.reason != 'settlement'
    group by 1, 2, 3`;
}

export interface BatchLine {
  kind: string;
  transaction_id: string;
  /** The refund, payout, transfer or dispute the movement belongs to, '' for a payment's own. */
  ref: string;
  gross_minor: number;
  fee_minor: number;
  net_minor: number;
  /** The first movement's time (ms). */
  created_at: number;
}

/** A batch's lines: its balance movements grouped by payment, sub-object and kind, oldest first. */
export async function batchLines(tx: Pick<Tx, 'selectFrom'>, account_id: string, currency: string, batch_id: string): Promise<BatchLine[]> {
  const r = await sql<{
    kind: string;
    transaction_id: string;
    ref: string;
    created_at: number;
    net: number;
    fee: number;
  }>`select * from (${groupedLines(account_id, currency, batch_id)}) l
    where touches > 0 order by created_at, transaction_id, kind, ref`.execute(tx as Tx);
  return r.rows.map((l) => {
    const net = Number(l.net);
    const fee = Number(l.fee);
    return {
      kind: l.kind,
      transaction_id: l.transaction_id,
      ref: l.ref,
      gross_minor: net + fee,
      fee_minor: fee,
      net_minor: net,
      created_at: Number(l.created_at),
    };
  });
}
