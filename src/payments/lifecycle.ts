// What capture, cancel and refund share (interface.md "Capture/Cancel/Refund a transaction";
// docs/contract.md §4, §5): the acquiring item's fields and its reading (`resolveItem`), the
// batch runner, and the guard every command's transaction runs in. Each item is answered on
// its own, so one bad item never fails the others; a command refuses with an outcome of
// `src/core/outcomes.ts`, which each interface words with its own table.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { type Refusal, Refused, refuse } from '../core/outcomes.js';
import { storageFault } from '../db/faults.js';
import type { DB } from '../db/schema.js';
import type { Store, Tx } from '../db/store.js';
import { formatAmount, parseAmount } from '../money/currency.js';
import { ProcessorsBusy } from '../processors/attempts.js';
import { accountPayment } from './reader.js';
import { PAYMENT_STATUS_CODE, type PaymentStatus } from './states.js';
import type { PaymentRow } from './tables.js';

/** interface.md "Limits". */
export const MAX_CAPTURE_ITEMS = 50;
export const MAX_CANCEL_ITEMS = 50;
export const MAX_REFUND_ITEMS = 50;

/**
 * Item fields are loose strings here and checked per item, so a malformed item fails
 * alone (issue: per-item errors). Lengths stay bounded (docs/style.md §9).
 */
export const itemString = (maxLength: number, description: string) => Type.Optional(Type.String({ maxLength, description }));

export const OrderItemFields = {
  transaction_id: itemString(64, 'the transaction_id the gateway assigned'),
  order_no: itemString(64, "the merchant's order number of that transaction"),
  currency: itemString(3, 'the currency of the transaction'),
  amount: itemString(24, 'a decimal amount'),
};

export interface OrderItem {
  transaction_id?: string;
  order_no?: string;
  currency?: string;
  amount?: string;
}

/** An acquiring item matched to its payment: the row and the item's amount in minor units. */
export type ItemResolved = { ok: true; row: PaymentRow; amount_minor: number };

const STATUS_WORDS: Readonly<Record<PaymentStatus, string>> = {
  pending: 'pending shopper action',
  processing: 'pending at the processor',
  authorised: 'authorised',
  review: 'held for review',
  captured: 'captured',
  refunded: 'refunded in full',
  partially_refunded: 'partially refunded',
  cancelled: 'cancelled',
  declined: 'declined',
  expired: 'expired',
};

export function describeStatus(status: PaymentStatus): string {
  return `${STATUS_WORDS[status]} (payment_status ${PAYMENT_STATUS_CODE[status]})`;
}

/** What every capture and cancel item needs; one without them fails alone (`0400`). The published `required` list reads it too. */
export const ORDER_ITEM_REQUIRED = ['transaction_id', 'order_no', 'currency', 'amount'] as const;

/**
 * The acquiring interface's reading of an item (docs/contract.md §5): finds its transaction
 * on the caller's account and checks that the item matches it. `amount` is the original
 * order amount unless `amountIs` says it is the amount to capture; then it is only parsed
 * here. What it compares never changes once a payment exists (order number, currency,
 * amount), so it reads outside the command's transaction.
 */
export async function resolveItem(db: Kysely<DB>, account_id: string, item: OrderItem, amountIs: 'original' | 'to_capture'): Promise<ItemResolved | Refusal> {
  for (const f of ORDER_ITEM_REQUIRED) {
    if (!item[f]) return refuse('invalid_input', `${f} is required`);
  }
  const row = await accountPayment(db, account_id, item.transaction_id as string);
  // Another account's transaction is "not found" too (docs/contract.md §3).
  if (!row) return refuse('not_found', `no transaction ${item.transaction_id} on this account`);
  if (row.order_no !== item.order_no) return refuse('order_mismatch', `order_no ${item.order_no} is not the order_no of transaction ${row.transaction_id}`);
  if (row.currency !== item.currency) return refuse('order_mismatch', `currency ${item.currency} is not the currency of the transaction (${row.currency})`);
  const parsed = parseAmount(item.amount as string, row.currency);
  if (!parsed.ok) return refuse('invalid_input', `amount ${parsed.problem}`);
  if (amountIs === 'original' && parsed.minor !== Number(row.amount_minor)) {
    return refuse('order_mismatch', `amount ${item.amount} is not the order amount ${formatAmount(row.amount_minor, row.currency)}`);
  }
  return { ok: true, row, amount_minor: parsed.minor };
}

/**
 * Runs `fn` for every item of a batch, at most `store.concurrentTransactions` at once, and
 * gives the results in the items' order; the first failure (a storage fault: the whole
 * request is answered 503) is thrown. When the limit is below the batch (PostgreSQL), no
 * further item starts after it and those already running finish first; when every item
 * runs at once (SQLite), it is `Promise.all`: the failure is thrown while the others may
 * still be running, as before the limit existed.
 */
export async function eachItem<I, R>(store: Store, items: readonly I[], fn: (item: I, index: number) => Promise<R>): Promise<R[]> {
  const limit = Math.min(items.length, store.concurrentTransactions);
  if (limit >= items.length) return Promise.all(items.map(fn));
  const results = new Array<R>(items.length);
  const state: { next: number; failure?: { error: unknown } } = { next: 0 };
  const lane = async (): Promise<void> => {
    while (!state.failure && state.next < items.length) {
      const i = state.next++;
      try {
        results[i] = await fn(items[i] as I, i);
      } catch (error) {
        state.failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  if (state.failure) throw state.failure.error;
  return results;
}

/**
 * Runs one item's step (reading it, or the command in its own transaction). An unexpected
 * failure fails that item only, with a refusal that says a retry is safe (nothing of the
 * item was written); a storage fault is the whole request's (answered 503, issue 17).
 */
export async function guardItem<R>(log: FastifyBaseLogger, fn: () => Promise<R | Refusal>): Promise<R | Refusal> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof Refused) return e.refusal;
    // The database's state, or the processors' bound on waiting calls: the whole request's (503).
    if (storageFault(e) || e instanceof ProcessorsBusy) throw e;
    log.error({ err: { message: (e as Error).message, stack: (e as Error).stack } }, 'batch item failed');
    return refuse('not_processed', 'the item was not processed; it is safe to retry');
  }
}

/** A command's one transaction, guarded as an item: a `Refused` thrown inside undoes its writes. */
export function runItem<R>(store: Store, log: FastifyBaseLogger, fn: (tx: Tx) => Promise<R | Refusal>): Promise<R | Refusal> {
  return guardItem(log, () => store.transaction(fn));
}
