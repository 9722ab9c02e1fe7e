// Dispute search (`POST /v1/retrievalDispute`; docs/contract.md §22): by dispute_ids,
// transaction_ids or order_nos (≤100 ids together), or by a date range over the dispute's
// created_at, with a cursor; at most 100 disputes per answer. Always scoped to the caller's
// own account: another account's ids are answered as not found, like the order query.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import { dateRange, decodeCursor, encodeCursor, idList, MAX_QUERY_IDS } from '../payments/query.js';
import { ApiError, invalid } from '../web/errors.js';
import type { RetrievalDisputeInput } from './schema.js';
import { disputeRecord } from './service.js';

export const DISPUTE_PAGE = 100;

type EvidenceMeta = { dispute_id: string; field: string; content_type: string; file_name: string; size_bytes: number };

/** The evidence of each dispute (what it is, never its content), oldest first. */
export async function evidenceMetaOf(db: Kysely<DB>, dispute_ids: readonly string[]): Promise<Map<string, EvidenceMeta[]>> {
  const out = new Map<string, EvidenceMeta[]>();
  if (dispute_ids.length === 0) return out;
  const rows = await db
    .selectFrom('dispute_evidence')
    .select(['dispute_id', 'field', 'content_type', 'file_name', 'size_bytes'])
    .where('dispute_id', 'in', [...dispute_ids])
    .orderBy('created_at')
    .orderBy('evidence_id')
    .execute();
  for (const r of rows) {
    const list = out.get(r.dispute_id) ?? [];
    list.push(r);
    out.set(r.dispute_id, list);
  }
  return out;
}

/** One dispute's record with its evidence, as the acquiring answers give it. */
export async function recordOf(db: Kysely<DB>, d: DisputeRow): Promise<ReturnType<typeof disputeRecord>> {
  return disputeRecord(d, (await evidenceMetaOf(db, [d.dispute_id])).get(d.dispute_id) ?? []);
}

/** The caller's dispute `dispute_id`, or undefined (another account's is not found too). */
export function disputeOfAccount(db: Kysely<DB>, account_id: string, dispute_id: string): Promise<DisputeRow | undefined> {
  return db.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).where('account_id', '=', account_id).executeTakeFirst();
}

type IdField = 'dispute_id' | 'transaction_id' | 'order_no';

export async function searchDisputes(
  db: Kysely<DB>,
  account_id: string,
  input: RetrievalDisputeInput,
): Promise<{ disputes: Record<string, unknown>[]; next_cursor?: string }> {
  const disputeIds = idList('dispute_ids', input.dispute_ids);
  const txIds = idList('transaction_ids', input.transaction_ids);
  const orderNos = idList('order_nos', input.order_nos);
  const ids = disputeIds.length + txIds.length + orderNos.length;
  if (ids > MAX_QUERY_IDS) {
    const field = disputeIds.length ? 'dispute_ids' : txIds.length ? 'transaction_ids' : 'order_nos';
    throw new ApiError('0400', `at most ${MAX_QUERY_IDS} ids may be searched at once; got ${ids}`, field);
  }
  let q = db.selectFrom('disputes').selectAll().where('account_id', '=', account_id);
  if (ids > 0) {
    if (input.start_date || input.end_date) throw invalid('start_date', 'cannot be combined with dispute_ids, transaction_ids or order_nos');
    q = q.where((eb) =>
      eb.or([
        ...(disputeIds.length ? [eb('dispute_id', 'in', disputeIds)] : []),
        ...(txIds.length ? [eb('transaction_id', 'in', txIds)] : []),
        ...(orderNos.length ? [eb('order_no', 'in', orderNos)] : []),
      ]),
    );
  } else {
    if (!input.start_date && !input.end_date)
      throw invalid('dispute_ids', 'or transaction_ids, or order_nos, or start_date and end_date, must select the disputes');
    const [from, to] = dateRange(input.start_date, input.end_date);
    q = q.where('created_at', '>=', from).where('created_at', '<=', to);
  }
  if (input.cursor) {
    const [at, id] = decodeCursor(input.cursor);
    q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('dispute_id', '>', id)])]));
  }
  const rows = await q
    .orderBy('created_at')
    .orderBy('dispute_id')
    .limit(DISPUTE_PAGE + 1)
    .execute();
  const page = rows.slice(0, DISPUTE_PAGE);
  const last = page[page.length - 1];
  const evidence = await evidenceMetaOf(
    db,
    page.map((d) => d.dispute_id),
  );
  const disputes: Record<string, unknown>[] = page.map((d) => ({ ...disputeRecord(d, evidence.get(d.dispute_id) ?? []), query_result: '1' }));
  // Every requested id that matches no dispute of the account: query_result 0 and its id, once, on the first page.
  if (ids > 0 && !input.cursor) {
    const asked: Array<[IdField, string[]]> = [
      ['dispute_id', disputeIds],
      ['transaction_id', txIds],
      ['order_no', orderNos],
    ];
    for (const [field, list] of asked) {
      if (list.length === 0) continue;
      const known = new Set(
        (await db.selectFrom('disputes').select(field).distinct().where('account_id', '=', account_id).where(field, 'in', list).execute()).map(
          (r) => (r as Record<IdField, string>)[field],
        ),
      );
      for (const id of list) if (!known.has(id)) disputes.push(notFoundItem(field, id));
    }
  }
  return {
    disputes,
    ...(rows.length > DISPUTE_PAGE && last ? { next_cursor: encodeCursor(Number(last.created_at), last.dispute_id) } : {}),
  };
}

/** The item for an id that matches no dispute: every field empty but the id, query_result 0. */
function notFoundItem(field: IdField, id: string): Record<string, unknown> {
  return {
    dispute_id: '',
    transaction_id: '',
    order_no: '',
    amount: '',
    currency: '',
    fee: '',
    reason: '',
    kind: '',
    status: '',
    evidence_due_by: '',
    evidence_submitted_at: '',
    evidence: [],
    created_at: '',
    response_error: '',
    closed_at: '',
    [field]: id,
    query_result: '0',
  };
}
