// `POST /v1/retrievalPayout` (docs/contract.md §17): by request_ids, transaction_ids or
// short_reference_ids (≤ 100 ids together), or by a date range over created_at with a
// cursor; at most 100 payouts per answer, always of the caller's own account. An id that
// names no payout is answered with `query_result` `0` and that id, as the order query does.
import type { Store } from '../db/store.js';
import { dateRange, decodeCursor, encodeCursor, idList, MAX_QUERY_IDS } from '../payments/query.js';
import { ApiError, invalid } from '../web/errors.js';
import { normaliseRequestId } from './command.js';
import { payoutRecord } from './record.js';
import type { RetrievalPayoutInput } from './schema.js';

export const PAYOUT_PAGE = 100;

type IdField = 'request_id' | 'transaction_id' | 'short_reference_id';

export async function searchPayouts(
  store: Store,
  account_id: string,
  input: RetrievalPayoutInput,
): Promise<{ payouts: Record<string, unknown>[]; next_cursor?: string }> {
  const asked: Array<[IdField, string[]]> = [
    ['request_id', idList('request_ids', input.request_ids).map(normaliseRequestId)],
    ['transaction_id', idList('transaction_ids', input.transaction_ids)],
    ['short_reference_id', idList('short_reference_ids', input.short_reference_ids)],
  ];
  const ids = asked.reduce((n, [, l]) => n + l.length, 0);
  if (ids > MAX_QUERY_IDS) {
    const field = `${(asked.find(([, l]) => l.length) as [IdField, string[]])[0]}s`;
    throw new ApiError('0400', `at most ${MAX_QUERY_IDS} ids may be searched at once; got ${ids}`, field);
  }
  let q = store.db.selectFrom('payouts').selectAll().where('account_id', '=', account_id);
  if (ids > 0) {
    if (input.start_date || input.end_date) throw invalid('start_date', 'cannot be combined with request_ids, transaction_ids or short_reference_ids');
    q = q.where((eb) => eb.or(asked.filter(([, l]) => l.length).map(([f, l]) => eb(f, 'in', l))));
  } else {
    if (!input.start_date && !input.end_date)
      throw invalid('request_ids', 'or transaction_ids, or short_reference_ids, or start_date and end_date, must select the payouts');
    const [from, to] = dateRange(input.start_date, input.end_date);
    q = q.where('created_at', '>=', from).where('created_at', '<=', to);
  }
  if (input.cursor) {
    const [at, id] = decodeCursor(input.cursor);
    q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('transaction_id', '>', id)])]));
  }
  const rows = await q
    .orderBy('created_at')
    .orderBy('transaction_id')
    .limit(PAYOUT_PAGE + 1)
    .execute();
  const page = rows.slice(0, PAYOUT_PAGE);
  const payouts: Record<string, unknown>[] = page.map((r) => ({ ...payoutRecord(r), query_result: '1' }));
  if (ids > 0 && !input.cursor) {
    for (const [field, list] of asked) {
      if (list.length === 0) continue;
      const known = new Set(page.map((r) => r[field]));
      for (const id of list) if (!known.has(id)) payouts.push({ request_id: '', transaction_id: '', short_reference_id: '', [field]: id, query_result: '0' });
    }
  }
  const last = page[page.length - 1];
  return { payouts, ...(rows.length > PAYOUT_PAGE && last ? { next_cursor: encodeCursor(Number(last.created_at), last.transaction_id) } : {}) };
}
