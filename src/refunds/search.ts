// Refund search (interface.md "Search a refund transaction"; docs/contract.md §8): by
// refund_reference_ids, transaction_ids or order_nos (≤100 ids together), or by a date
// range over refund_date, with a cursor; at most 100 refunds per answer. Always scoped to
// the caller's own account.
import { Type } from 'typebox';
import type { Store } from '../db/store.js';
import { dateRange, decodeCursor, encodeCursor, IdList, idList, MAX_QUERY_IDS } from '../payments/query.js';
import { ApiError, invalid } from '../web/errors.js';
import { toRefundSearchItem } from './record.js';

export const REFUND_PAGE = 100;

export const RefundSearchBody = Type.Object(
  {
    merchant_id: Type.String({ pattern: '^\\d{1,20}$' }),
    account_id: Type.String({ pattern: '^\\d{1,20}$' }),
    encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    refund_reference_ids: Type.Optional(IdList),
    transaction_ids: Type.Optional(IdList),
    order_nos: Type.Optional(IdList),
    start_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC)' })),
    end_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC)' })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export interface RefundSearchInput {
  refund_reference_ids?: string | string[];
  transaction_ids?: string | string[];
  order_nos?: string | string[];
  start_date?: string;
  end_date?: string;
  cursor?: string;
}

export async function searchRefunds(
  store: Store,
  account_id: string,
  input: RefundSearchInput,
): Promise<{ refunds: Record<string, string>[]; next_cursor?: string }> {
  const refIds = idList('refund_reference_ids', input.refund_reference_ids);
  const txIds = idList('transaction_ids', input.transaction_ids);
  const orderNos = idList('order_nos', input.order_nos);
  const ids = refIds.length + txIds.length + orderNos.length;
  if (ids > MAX_QUERY_IDS) {
    const field = refIds.length ? 'refund_reference_ids' : txIds.length ? 'transaction_ids' : 'order_nos';
    throw new ApiError('0400', `at most ${MAX_QUERY_IDS} ids may be searched at once; got ${ids}`, field);
  }
  let q = store.db
    .selectFrom('refunds as r')
    .innerJoin('payments as p', 'p.transaction_id', 'r.transaction_id')
    .selectAll('r')
    .select('p.status as payment_status')
    .where('r.account_id', '=', account_id);
  if (ids > 0) {
    if (input.start_date || input.end_date) throw invalid('start_date', 'cannot be combined with refund_reference_ids, transaction_ids or order_nos');
    q = q.where((eb) =>
      eb.or([
        ...(refIds.length ? [eb('r.refund_reference_id', 'in', refIds)] : []),
        ...(txIds.length ? [eb('r.transaction_id', 'in', txIds)] : []),
        ...(orderNos.length ? [eb('r.order_no', 'in', orderNos)] : []),
      ]),
    );
  } else {
    if (!input.start_date && !input.end_date) {
      throw invalid('refund_reference_ids', 'or transaction_ids, or order_nos, or start_date and end_date, must select the refunds');
    }
    const [from, to] = dateRange(input.start_date, input.end_date);
    q = q.where('r.created_at', '>=', from).where('r.created_at', '<=', to);
  }
  if (input.cursor) {
    const [at, id] = decodeCursor(input.cursor);
    q = q.where((eb) => eb.or([eb('r.created_at', '>', at), eb.and([eb('r.created_at', '=', at), eb('r.refund_reference_id', '>', id)])]));
  }
  const rows = await q
    .orderBy('r.created_at')
    .orderBy('r.refund_reference_id')
    .limit(REFUND_PAGE + 1)
    .execute();
  const page = rows.slice(0, REFUND_PAGE);
  const last = page[page.length - 1];
  const refunds: Record<string, string>[] = page.map((r) => toRefundSearchItem(r, r.payment_status));
  // Like the order query (docs/contract.md §6), every requested id that matches no refund of the
  // account is answered with query_result 0 and its id, once, on the first page.
  if (ids > 0 && !input.cursor) {
    const asked: Array<[RefundIdField, string[]]> = [
      ['refund_reference_id', refIds],
      ['transaction_id', txIds],
      ['order_no', orderNos],
    ];
    for (const [field, list] of asked) {
      if (list.length === 0) continue;
      const known = await matchedIds(store, account_id, field, list);
      for (const id of list) if (!known.has(id)) refunds.push(notFoundRefundItem(field, id));
    }
  }
  return {
    refunds,
    ...(rows.length > REFUND_PAGE && last ? { next_cursor: encodeCursor(Number(last.created_at), last.refund_reference_id) } : {}),
  };
}

type RefundIdField = 'refund_reference_id' | 'transaction_id' | 'order_no';

/** Which of the ids (at most 100) name at least one refund of the account. */
async function matchedIds(store: Store, account_id: string, field: RefundIdField, ids: string[]): Promise<Set<string>> {
  const rows = await store.db.selectFrom('refunds').select(field).distinct().where('account_id', '=', account_id).where(field, 'in', ids).execute();
  return new Set(rows.map((r) => (r as Record<RefundIdField, string>)[field]));
}

/** The item for an id that matches no refund: every field empty but the id, query_result 0. */
function notFoundRefundItem(field: RefundIdField, id: string): Record<string, string> {
  return {
    transaction_id: '',
    order_no: '',
    currency: '',
    amount: '',
    refund_amount: '',
    refund_reason: '',
    refund_reference: '',
    refund_reference_id: '',
    refund_status: '',
    payment_status: '',
    refund_date: '',
    refund_processing_date: '',
    [field]: id,
    query_result: '0',
  };
}
