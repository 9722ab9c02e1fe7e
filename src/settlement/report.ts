// Settlement reports (docs/contract.md §23; issue 35 item 2): an account's batches and each
// batch's lines, as JSON records and as CSV (docs/finance.md "Settlement report" lists the
// columns). Amounts are given twice, in the currency's decimal form and in minor units; text
// cells are made safe for spreadsheets. One reader for every interface (the CLI today).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { SettlementBatchRow } from '../db/tables/settlement.js';
import { formatAmount } from '../money/currency.js';
import { spreadsheetSafe } from '../web/csv.js';
import { type BatchLine, batchLines } from './batches.js';

/** Batches of one report at most. */
export const REPORT_BATCHES_MAX = 100;

export interface BatchQuery {
  account_id: string;
  /** First and last UTC day, YYYY-MM-DD, inclusive. */
  from: string;
  to: string;
  currency?: string;
}

/** The account's batches of those days, oldest first (at most REPORT_BATCHES_MAX). */
export function listBatches(db: Kysely<DB>, q: BatchQuery): Promise<SettlementBatchRow[]> {
  let s = db.selectFrom('settlement_batches').selectAll().where('account_id', '=', q.account_id).where('day', '>=', q.from).where('day', '<=', q.to);
  if (q.currency) s = s.where('currency', '=', q.currency);
  return s.orderBy('day').orderBy('currency').limit(REPORT_BATCHES_MAX).execute();
}

const iso = (ms: number | null) => (ms === null ? '' : new Date(Number(ms)).toISOString());

/** A batch as the report's JSON has it. */
export function batchRecord(b: SettlementBatchRow) {
  const money = (minor: number) => formatAmount(Number(minor), b.currency);
  return {
    batch_id: b.batch_id,
    day: b.day,
    currency: b.currency,
    status: b.status,
    lines: Number(b.lines),
    gross: money(b.gross_minor),
    fee: money(b.fee_minor),
    net: money(b.net_minor),
    gross_minor: Number(b.gross_minor),
    fee_minor: Number(b.fee_minor),
    net_minor: Number(b.net_minor),
    pending: money(b.pending_minor),
    pending_minor: Number(b.pending_minor),
    delay_days: Number(b.delay_days),
    closed_at: iso(b.closes_at),
    available_at: iso(b.available_at),
    settled_at: iso(b.settled_at),
  };
}

export type ReportLine = BatchLine & { order_no: string };

/** A batch's lines with each payment's order number. */
export async function reportLines(db: Kysely<DB>, b: SettlementBatchRow): Promise<ReportLine[]> {
  const lines = await batchLines(db, b.account_id, b.currency, b.batch_id);
  const ids = [...new Set(lines.map((l) => l.transaction_id).filter((t) => t !== ''))];
  const orders = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('payments')
      .select(['transaction_id', 'order_no'])
      .where('transaction_id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) orders.set(r.transaction_id, r.order_no);
  }
  return lines.map((l) => ({ ...l, order_no: orders.get(l.transaction_id) ?? '' }));
}

/** A line as the report's JSON has it. */
export function lineRecord(b: SettlementBatchRow, l: ReportLine) {
  return {
    kind: l.kind,
    transaction_id: l.transaction_id,
    order_no: l.order_no,
    reference: l.ref,
    created_at: iso(l.created_at),
    gross: formatAmount(l.gross_minor, b.currency),
    fee: formatAmount(l.fee_minor, b.currency),
    net: formatAmount(l.net_minor, b.currency),
    gross_minor: l.gross_minor,
    fee_minor: l.fee_minor,
    net_minor: l.net_minor,
  };
}

/** The CSV's columns, in order (docs/finance.md). */
export const CSV_COLUMNS = [
  'batch_id',
  'batch_day',
  'currency',
  'batch_status',
  'available_at',
  'kind',
  'transaction_id',
  'order_no',
  'reference',
  'created_at',
  'gross',
  'fee',
  'net',
  'gross_minor',
  'fee_minor',
  'net_minor',
] as const;

/** The report of `batches` as CSV, written as it is read (a batch's lines at a time). */
export function reportCsv(db: Kysely<DB>, batches: readonly SettlementBatchRow[]): Readable {
  async function* rows(): AsyncGenerator<string[]> {
    for (const b of batches) {
      for (const l of await reportLines(db, b)) {
        const r = lineRecord(b, l);
        const text = [b.batch_id, b.day, b.currency, b.status, iso(b.available_at), r.kind, r.transaction_id, r.order_no, r.reference, r.created_at];
        yield [...text.map(spreadsheetSafe), r.gross, r.fee, r.net, String(r.gross_minor), String(r.fee_minor), String(r.net_minor)];
      }
    }
  }
  const csv = stringify({ header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' });
  Readable.from(rows())
    .on('error', (e) => csv.destroy(e))
    .pipe(csv);
  return csv;
}
