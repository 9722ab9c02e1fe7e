// Refunds (interface.md "Refund a transaction"; docs/contract.md §4, §5, §6): several partial
// refunds up to the captured amount, safe under any concurrency: the amount is reserved by
// one compare-and-set on the payment (`reserveRefund`), and the refund's sequence number is
// read after that statement has locked the payment row, so it is race-free too (the
// primary key on refund_reference_id backs it up).
import type { FastifyBaseLogger } from 'fastify';
import type { Store, Tx } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { postRefund } from '../ledger/postings.js';
import { formatAmount, parseAmount } from '../money/currency.js';
import { recordEvent } from '../notifications/outbox.js';
import {
  checkItem,
  describeStatus,
  failure,
  type ItemFailure,
  ItemRefused,
  itemString,
  ORDER_ITEM_REQUIRED,
  OrderItemFields,
  runItem,
} from '../payments/lifecycle.js';
import { requirePayment } from '../payments/reader.js';
import { canApply, releaseRefund, reserveRefund } from '../payments/states.js';
import type { Deps } from '../web/context.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { toRefundResultItem, toRefundSearchItem } from './record.js';
import { applyRefundTransition, type RefundStatus } from './states.js';
import type { RefundRow } from './tables.js';

/** The refund_reference_id sequence has two digits (interface.md "Identifiers"). */
export const MAX_REFUNDS_PER_PAYMENT = 99;

export const RefundItemFields = {
  ...OrderItemFields,
  refund_amount: itemString(24, 'the decimal amount to refund'),
  refund_reason: itemString(255, 'free text kept with the refund'),
};

/** What every refund item needs (checkItem's fields and `refund_amount`); the published `required` list reads it too. */
export const REFUND_ITEM_REQUIRED = [...ORDER_ITEM_REQUIRED, 'refund_amount'] as const;

export interface RefundItem {
  transaction_id?: string;
  order_no?: string;
  currency?: string;
  amount?: string;
  refund_amount?: string;
  refund_reason?: string;
}

/** The answer for an item that made no refund. */
function refused(item: RefundItem, f: ItemFailure): Record<string, string> {
  return {
    transaction_id: item.transaction_id ?? '',
    order_no: item.order_no ?? '',
    currency: item.currency ?? '',
    amount: item.amount ?? '',
    refund_amount: item.refund_amount ?? '',
    refund_reason: item.refund_reason ?? '',
    refund_reference: '',
    refund_reference_id: '',
    refund_status: '0',
    refund_message: f.message,
  };
}

function notRefundable(row: Pick<PaymentRow, 'status' | 'captured_minor' | 'refunded_minor' | 'currency'>, item: RefundItem): ItemFailure {
  if (!canApply('refund_partial', row.status)) {
    const hint = row.status === 'authorised' ? '; capture or cancel it' : '';
    return failure('1012', `cannot refund a payment that is ${describeStatus(row.status)}${hint}`);
  }
  const left = Number(row.captured_minor) - Number(row.refunded_minor);
  return failure('1013', `refund_amount ${item.refund_amount} is more than the ${formatAmount(left, row.currency)} left to refund`);
}

/**
 * One refund item, in its own transaction. `idempotency_ref` (`<key id>:<item index>`) is
 * given when the request carries an Idempotency-Key: a re-run of that request answers
 * from the refund it already made.
 */
export async function refundItem(
  deps: Deps,
  log: FastifyBaseLogger,
  account: AccountRow,
  item: RefundItem,
  idempotency_ref: string | null = null,
): Promise<Record<string, string>> {
  const outcome = await makeRefund(deps, log, account, item, idempotency_ref);
  return outcome.ok ? toRefundResultItem(outcome.refund, resultText(outcome.refund.result_code as ResultCode)) : refused(item, outcome);
}

/**
 * The one refund of a payment (the acquiring batch item and the generic interface's
 * `POST /v1/refunds`): the cap by compare-and-set, the row, postings and event in one
 * transaction. `metadata` is the generic interface's (JSON), '{}' otherwise.
 */
export async function makeRefund(
  deps: Deps,
  log: FastifyBaseLogger,
  account: AccountRow,
  item: RefundItem,
  idempotency_ref: string | null = null,
  metadata = '{}',
): Promise<Made | ItemFailure> {
  const processor = deps.processorFor(account);
  return runItem<Made | ItemFailure>(
    deps.store,
    log,
    async (tx) => {
      const now = deps.now();
      if (idempotency_ref) {
        const made = await refundMadeFor(tx, account.account_id, idempotency_ref);
        if (made) return { ok: true, refund: made };
      }
      const checked = await checkItem(tx, account.account_id, item, 'original');
      if (!checked.ok) return checked;
      const { row } = checked;
      const amount = refundAmountOf(item, row.currency);
      if (!amount.ok) return amount;
      const n = amount.minor;
      if (!processor) return failure('1016', 'this account is in live mode and no processor is configured for it');
      if (!canApply('refund_partial', row.status) || Number(row.refunded_minor) + n > Number(row.captured_minor)) return notRefundable(row, item);

      const after = await reserveRefund(tx, row.transaction_id, n, now);
      if (!after) {
        // Another refund, or a status change, got there first: say what stands now.
        const current = await requirePayment(tx, row.transaction_id);
        return notRefundable(current, item);
      }
      const seq = await nextRefundSeq(tx, row.transaction_id);
      // The sandbox answers at once; a processor that answers later leaves the refund pending.
      const status: RefundStatus = processor.inline ? 'succeeded' : 'pending';
      const refund = newRefundRow(row, item, { seq, n, status, now, idempotency_ref, metadata });
      await recordRefund(tx, refund, n, after.status, now);
      return { ok: true, refund };
    },
    (f) => f,
  );
}

type Made = { ok: true; refund: RefundRow };

/** The refund a request with this Idempotency-Key item already made on the account, if any. */
function refundMadeFor(tx: Tx, account_id: string, idempotency_ref: string): Promise<RefundRow | undefined> {
  return tx.selectFrom('refunds').selectAll().where('idempotency_ref', '=', idempotency_ref).where('account_id', '=', account_id).executeTakeFirst();
}

/** The item's refund_amount in the payment currency's minor units: sent, a decimal amount, above zero. */
function refundAmountOf(item: RefundItem, currency: string): { ok: true; minor: number } | ItemFailure {
  if (!item.refund_amount) return failure('0400', 'refund_amount is required');
  const parsed = parseAmount(item.refund_amount, currency);
  if (!parsed.ok) return failure('0400', `refund_amount ${parsed.problem}`);
  if (parsed.minor <= 0) return failure('0400', 'refund_amount must be greater than zero');
  return { ok: true, minor: parsed.minor };
}

/**
 * The payment's next refund sequence number, at most MAX_REFUNDS_PER_PAYMENT. Called after
 * reserveRefund: the payment row is locked by that statement until commit, so counting is race-free.
 */
async function nextRefundSeq(tx: Tx, transaction_id: string): Promise<number> {
  const { count } = await tx
    .selectFrom('refunds')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('transaction_id', '=', transaction_id)
    .executeTakeFirstOrThrow();
  const seq = Number(count) + 1;
  if (seq > MAX_REFUNDS_PER_PAYMENT) throw new ItemRefused(failure('1012', `a payment takes at most ${MAX_REFUNDS_PER_PAYMENT} refunds`));
  return seq;
}

/** The refund row of the payment's refund number `seq` of n minor units. */
function newRefundRow(
  row: PaymentRow,
  item: RefundItem,
  r: { seq: number; n: number; status: RefundStatus; now: number; idempotency_ref: string | null; metadata: string },
): RefundRow {
  const code: ResultCode = r.status === 'succeeded' ? '0000' : '0005';
  return {
    refund_reference_id: `${row.transaction_id}-${String(r.seq).padStart(2, '0')}`,
    transaction_id: row.transaction_id,
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    order_no: row.order_no,
    currency: row.currency,
    amount_minor: Number(row.amount_minor),
    refund_amount_minor: r.n,
    refund_reason: item.refund_reason ?? '',
    refund_reference: '',
    status: r.status,
    result_code: code,
    notify_url: row.notify_url,
    created_at: r.now,
    processed_at: r.status === 'succeeded' ? r.now : null,
    updated_at: r.now,
    idempotency_ref: r.idempotency_ref,
    metadata: r.metadata,
  };
}

/** The refund's row, its postings and, when it succeeded at once, its event, in the item's transaction. */
async function recordRefund(tx: Tx, refund: RefundRow, n: number, payment_status: PaymentRow['status'], now: number): Promise<void> {
  await tx.insertInto('refunds').values(refund).execute();
  await postRefund(tx, { ...refund, amount_minor: n }, refund.status, now);
  if (refund.status !== 'succeeded') return;
  await recordEvent(
    tx,
    {
      merchant_id: refund.merchant_id,
      account_id: refund.account_id,
      event_type: 'refund.succeeded',
      object_id: refund.refund_reference_id,
      notify_url: refund.notify_url,
      data: toRefundSearchItem(refund, payment_status),
    },
    now,
  );
}

/**
 * Completes a pending refund when its processor answers (refund_status 2 → 1 or 0). A
 * failed refund gives its amount back to the payment, so it can be refunded again.
 * Returns false when the refund was not pending any more.
 */
export async function completeRefund(
  store: Store,
  refund_reference_id: string,
  outcome: { kind: 'succeeded'; reference?: string } | { kind: 'failed'; code: ResultCode },
  now_ms: number,
): Promise<boolean> {
  return store.transaction(async (tx) => {
    const refund = await tx.selectFrom('refunds').selectAll().where('refund_reference_id', '=', refund_reference_id).executeTakeFirst();
    if (refund?.status !== 'pending') return false;
    const succeeded = outcome.kind === 'succeeded';
    const patch = succeeded
      ? { result_code: '0000', refund_reference: outcome.reference ?? '', processed_at: now_ms }
      : { result_code: outcome.code, processed_at: now_ms };
    const after = await applyRefundTransition(tx, refund_reference_id, succeeded ? 'settle' : 'fail', 'pending', patch, now_ms);
    if (!after) return false;
    const n = Number(refund.refund_amount_minor);
    let payment = await requirePayment(tx, refund.transaction_id);
    if (!succeeded) {
      const released = await releaseRefund(tx, refund.transaction_id, n, now_ms);
      if (!released) throw new Error(`refund ${refund_reference_id} failed but its payment could not take the amount back`);
      payment = released;
    }
    await postRefund(tx, { ...refund, amount_minor: n }, succeeded ? 'settled' : 'failed', now_ms);
    await recordEvent(
      tx,
      {
        merchant_id: refund.merchant_id,
        account_id: refund.account_id,
        event_type: succeeded ? 'refund.succeeded' : 'refund.failed',
        object_id: refund_reference_id,
        notify_url: refund.notify_url,
        data: toRefundSearchItem(after, payment.status),
      },
      now_ms,
    );
    return true;
  });
}
