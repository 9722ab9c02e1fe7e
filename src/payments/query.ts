// Order query (interface.md "Query a transaction"; docs/contract.md §3, §8): by ids (≤100) or by
// a date range with a cursor. Always scoped to the caller's own account.
import { Type } from 'typebox';
import type { Store } from '../db/store.js';
import type { AccountCredentials } from '../merchants/service.js';
import { ApiError, invalid } from '../web/errors.js';
import { parseCompactTime } from './format.js';
import { notFoundRecord, type OrderRecordRow, parseDetails, toOrderRecord } from './order-record.js';
import { orderRowsByIds, orderRowsByOrderNos, orderRowsCreatedIn } from './reader.js';
import { subscriptionResult } from './subscription-result.js';

/** `subscription_result` of the rows that created or charged a subscription: one read, and none when no row did. */
async function subscriptionsOf(store: Store, rows: readonly OrderRecordRow[]): Promise<Map<string, Record<string, string>> | undefined> {
  const ids = new Set<string>();
  for (const r of rows) {
    const id = parseDetails(r).recurring_id;
    if (typeof id === 'string') ids.add(id);
  }
  if (ids.size === 0) return undefined;
  const subs = await store.db
    .selectFrom('subscriptions')
    .selectAll()
    .where('recurring_id', 'in', [...ids])
    .execute();
  return new Map(subs.map((x) => [x.recurring_id, subscriptionResult(x)]));
}

export const MAX_QUERY_IDS = 100;
export const QUERY_PAGE = 100;

/** Ids as a JSON array or a comma-separated string; the limit of 100 is checked in code so it gets a clear message. */
export const IdList = Type.Union([Type.String({ maxLength: 10_000 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10_000 })], {
  description: 'a JSON array, or a comma-separated string, of at most 100 ids in total',
});

export const QueryBody = Type.Object(
  {
    merchant_id: Type.String({ pattern: '^\\d{1,20}$' }),
    account_id: Type.String({ pattern: '^\\d{1,20}$' }),
    encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    order_nos: Type.Optional(IdList),
    transaction_ids: Type.Optional(IdList),
    start_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC)' })),
    end_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC)' })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export type QueryInput = {
  order_nos?: string | string[];
  transaction_ids?: string | string[];
  start_date?: string;
  end_date?: string;
  cursor?: string;
};

export function idList(field: string, value: string | string[] | undefined): string[] {
  if (value === undefined || value === '') return [];
  const ids = (Array.isArray(value) ? value : value.split(',')).map((s) => String(s).trim()).filter(Boolean);
  for (const id of ids) if (id.length > 64) throw invalid(field, 'holds an id longer than 64 characters');
  return [...new Set(ids)];
}

export function encodeCursor(created_at: number, id: string): string {
  return Buffer.from(JSON.stringify([created_at, id])).toString('base64url');
}

export function decodeCursor(cursor: string): [number, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw invalid('cursor', 'is not a cursor this gateway issued');
}

export function dateRange(start?: string, end?: string): [number, number] {
  const from = start ? parseCompactTime(start) : null;
  const to = end ? parseCompactTime(end) : null;
  if (start && from === null) throw invalid('start_date', 'is not a real time shaped YYYYMMDDhhmmss');
  if (end && to === null) throw invalid('end_date', 'is not a real time shaped YYYYMMDDhhmmss');
  if (from === null || to === null) throw invalid(start ? 'end_date' : 'start_date', 'is required with a date range');
  if (to < from) throw invalid('end_date', 'is before start_date');
  // end_date is inclusive to the second.
  return [from, to + 999];
}

export async function queryOrders(
  store: Store,
  creds: AccountCredentials,
  input: QueryInput,
): Promise<{ orders: Record<string, unknown>[]; next_cursor?: string }> {
  const account_id = creds.account.account_id;
  const orderNos = idList('order_nos', input.order_nos);
  const txIds = idList('transaction_ids', input.transaction_ids);
  if (orderNos.length + txIds.length > MAX_QUERY_IDS) {
    throw new ApiError(
      '0400',
      `at most ${MAX_QUERY_IDS} ids may be queried at once; got ${orderNos.length + txIds.length}`,
      orderNos.length ? 'order_nos' : 'transaction_ids',
    );
  }
  if (orderNos.length + txIds.length > 0) {
    if (input.start_date || input.end_date || input.cursor) throw invalid('start_date', 'cannot be combined with order_nos or transaction_ids');
    const orders: Record<string, unknown>[] = [];
    if (txIds.length) {
      const rows = await orderRowsByIds(store.db, account_id, txIds);
      const byId = new Map(rows.map((r) => [r.transaction_id, r]));
      const subs = await subscriptionsOf(store, rows);
      for (const id of txIds) {
        const r = byId.get(id);
        orders.push(r ? toOrderRecord(r, subs) : notFoundRecord({ transaction_id: id }));
      }
    }
    if (orderNos.length) {
      const rows = await orderRowsByOrderNos(store.db, account_id, orderNos);
      const byNo = new Map(rows.map((r) => [r.order_no, r]));
      const subs = await subscriptionsOf(store, rows);
      for (const no of orderNos) {
        const r = byNo.get(no);
        orders.push(r ? toOrderRecord(r, subs) : notFoundRecord({ order_no: no }));
      }
    }
    return { orders };
  }
  if (!input.start_date && !input.end_date) throw invalid('order_nos', 'or transaction_ids, or start_date and end_date, must select the orders');
  const [from, to] = dateRange(input.start_date, input.end_date);
  const after = input.cursor ? decodeCursor(input.cursor) : undefined;
  const rows = await orderRowsCreatedIn(store.db, account_id, from, to, after && { created_at: after[0], transaction_id: after[1] }, QUERY_PAGE + 1);
  const page = rows.slice(0, QUERY_PAGE);
  const last = page[page.length - 1];
  const subs = await subscriptionsOf(store, page);
  return {
    orders: page.map((r) => toOrderRecord(r, subs)),
    ...(rows.length > QUERY_PAGE && last ? { next_cursor: encodeCursor(last.created_at, last.transaction_id) } : {}),
  };
}
