// Refunds (interface.md "Refund a transaction"; docs/contract.md §4, §5, §6): several partial
// refunds up to the captured amount, safe under any concurrency: the amount is reserved by
// one compare-and-set on the payment (`reserveRefund`), and the refund's sequence number is
// read after that statement has locked the payment row, so it is race-free too (the
// primary key on refund_reference_id backs it up).
import type { FastifyBaseLogger } from 'fastify';
import { type Refusal, Refused, refuse } from '../core/outcomes.js';
import type { Store, Tx } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { postRefund } from '../ledger/postings.js';
import { formatAmount } from '../money/currency.js';
import { recordEvent } from '../notifications/outbox.js';
import { paymentProcessor, processorReference } from '../payments/at-processor.js';
import { describeStatus, itemString, ORDER_ITEM_REQUIRED, OrderItemFields, runItem } from '../payments/lifecycle.js';
import { accountPayment, requirePayment } from '../payments/reader.js';
import { canApply, releaseRefund, reserveRefund } from '../payments/states.js';
import { callWithDeadline, newAttempt, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { OperationStatusAnswer } from '../processors/types.js';
import type { Deps } from '../web/context.js';
import type { ResultCode } from '../web/errors.js';
import { toRefundSearchItem } from './record.js';
import { applyRefundTransition, type RefundStatus } from './states.js';
import type { RefundRow } from './tables.js';

/** The refund_reference_id sequence has two digits (interface.md "Identifiers"). */
export const MAX_REFUNDS_PER_PAYMENT = 99;

export const RefundItemFields = {
  ...OrderItemFields,
  refund_amount: itemString(24, 'the decimal amount to refund'),
  refund_reason: itemString(255, 'free text kept with the refund'),
};

/** What every refund item needs (resolveItem's fields and `refund_amount`); the published `required` list reads it too. */
export const REFUND_ITEM_REQUIRED = [...ORDER_ITEM_REQUIRED, 'refund_amount'] as const;

export interface RefundItem {
  transaction_id?: string;
  order_no?: string;
  currency?: string;
  amount?: string;
  refund_amount?: string;
  refund_reason?: string;
}

function notRefundable(row: Pick<PaymentRow, 'status' | 'captured_minor' | 'refunded_minor' | 'currency'>, n: number): Refusal {
  if (!canApply('refund_partial', row.status)) {
    const hint = row.status === 'authorised' ? '; capture or cancel it' : '';
    return refuse('invalid_state', `cannot refund a payment that is ${describeStatus(row.status)}${hint}`);
  }
  const left = Number(row.captured_minor) - Number(row.refunded_minor);
  return refuse('amount_exceeds', `the refund of ${formatAmount(n, row.currency)} is more than the ${formatAmount(left, row.currency)} left to refund`);
}

/** The refund decision, pure: a positive amount, a processor to send it to, a refundable status and enough left. */
export function decideRefund(
  row: Pick<PaymentRow, 'status' | 'captured_minor' | 'refunded_minor' | 'currency'>,
  n: number,
  hasProcessor: boolean,
): { ok: true } | Refusal {
  if (!Number.isSafeInteger(n) || n <= 0) return refuse('invalid_input', 'refund_amount must be greater than zero');
  if (!hasProcessor) return refuse('no_processor', 'this account is in live mode and no processor is configured for it');
  if (!canApply('refund_partial', row.status) || Number(row.refunded_minor) + n > Number(row.captured_minor)) return notRefundable(row, n);
  return { ok: true };
}

/**
 * Refund `amount_minor` of a captured payment of `account`. `idempotency_ref` (`<key id>:<item
 * index>`, or the portal's form token) marks the refund: a re-run answers from the refund it
 * already made. `metadata` is the generic interface's (JSON), '{}' otherwise.
 */
export interface RefundCommand {
  account: AccountRow;
  transaction_id: string;
  amount_minor: number;
  reason: string;
  idempotency_ref: string | null;
  metadata: string;
}

/**
 * The one refund of a payment (the acquiring batch item, the generic interface's
 * `POST /v1/refunds`, the portal). One transaction reserves the amount by compare-and-set,
 * writes the refund `pending` with its reserving postings and the processor attempt; the
 * call is made after it commits, outside any transaction (docs/contract.md §20); the
 * processor's answer settles the refund (`settleRefundAttempt`). A refund whose answer is
 * not final stays pending (`refund_status` 2) for the sweeper or a webhook to settle.
 */
export async function makeRefund(deps: Deps, log: FastifyBaseLogger, cmd: RefundCommand): Promise<Made | Refusal> {
  const { account, idempotency_ref } = cmd;
  // docs/contract.md §21: the refund goes to the processor that took the payment.
  const processor = await paymentProcessor(deps, account, cmd.transaction_id);
  const made = await runItem<Made | Sending>(deps.store, log, async (tx) => {
    const now = deps.now();
    if (idempotency_ref) {
      const made = await refundMadeFor(tx, account.account_id, idempotency_ref);
      if (made) return { ok: true, refund: made };
    }
    const row = await accountPayment(tx, account.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found', `no transaction ${cmd.transaction_id} on this account`);
    const n = cmd.amount_minor;
    const decided = decideRefund(row, n, processor !== null);
    if (!decided.ok || !processor) return decided.ok ? refuse('no_processor') : decided;

    const after = await reserveRefund(tx, row.transaction_id, n, now);
    if (!after) {
      // Another refund, or a status change, got there first: say what stands now.
      const current = await requirePayment(tx, row.transaction_id);
      return notRefundable(current, n);
    }
    const seq = await nextRefundSeq(tx, row.transaction_id);
    const refund = newRefundRow(row, cmd.reason, { seq, n, status: 'pending', now, idempotency_ref, metadata: cmd.metadata });
    await recordRefund(tx, refund, n, after.status, now);
    const attempt = newAttempt(
      {
        account_id: row.account_id,
        connector: processor.name,
        processor_id: processor.processor_id,
        operation: 'refund',
        object_id: refund.refund_reference_id,
        amount_minor: n,
        currency: row.currency,
      },
      now,
      deps.settings.processor_timeout_ms,
    );
    await tx.insertInto('processor_attempts').values(attempt).execute();
    return { ok: 'sending', refund, attempt, reference: processorReference(row) };
  });
  if (made.ok !== 'sending' || !processor) return made as Made | Refusal;
  const { refund, attempt } = made;
  const input = {
    transaction_id: refund.transaction_id,
    refund_id: refund.refund_reference_id,
    reference: made.reference,
    amount_minor: Number(refund.refund_amount_minor),
    currency: refund.currency,
  };
  const outcome = await callWithDeadline(attempt, deps.now, (call) => processor.refund(input, call));
  await settleRefundAttempt(deps, attempt, outcome, deps.now());
  const now = await deps.store.db.selectFrom('refunds').selectAll().where('refund_reference_id', '=', refund.refund_reference_id).executeTakeFirstOrThrow();
  return { ok: true, refund: now };
}

/** A refund written and its attempt recorded, the call still to make. */
type Sending = { ok: 'sending'; refund: RefundRow; attempt: ProcessorAttemptRow; reference: string };

class SettledMeanwhile extends Error {}

/**
 * Settles a refund attempt with what the processor said (at once, to the sweeper, or by
 * webhook): approved completes the refund, declined or not found (it never reached the
 * processor) fails it and gives its amount back to the payment, each with the attempt in one
 * transaction; pending and unknown keep both open, the attempt asked about again later.
 * False when the attempt was settled meanwhile.
 */
export async function settleRefundAttempt(
  deps: Pick<Deps, 'store'>,
  a: ProcessorAttemptRow,
  outcome: OperationStatusAnswer,
  now_ms: number,
  checks?: number,
): Promise<boolean> {
  const lost = () => new SettledMeanwhile();
  const unit = new WriteUnit(deps.store.engine);
  try {
    if (outcome.kind === 'pending' || outcome.kind === 'unknown') {
      const error = outcome.kind === 'unknown' ? outcome.reason : '';
      settleAttemptInto(
        unit,
        a,
        'answer',
        { status: outcome.kind, reference: outcome.kind === 'pending' ? outcome.reference : undefined, error, checks },
        now_ms,
        lost,
      );
      await deps.store.write(unit);
      return true;
    }
    if (outcome.kind === 'approved') settleAttemptInto(unit, a, 'answer', { status: 'approved', reference: outcome.reference, checks }, now_ms, lost);
    else if (outcome.kind === 'declined')
      settleAttemptInto(unit, a, 'answer', { status: 'declined', result_code: outcome.code, error: outcome.reason, checks }, now_ms, lost);
    else settleAttemptInto(unit, a, 'lose', { status: 'declined', result_code: '1007', error: 'not found at the processor', checks }, now_ms, lost);
    const result =
      outcome.kind === 'approved'
        ? { kind: 'succeeded' as const, reference: outcome.reference }
        : { kind: 'failed' as const, code: outcome.kind === 'declined' ? outcome.code : ('1007' as const) };
    return await completeRefund(deps.store, a.object_id, result, now_ms, unit);
  } catch (e) {
    if (e instanceof SettledMeanwhile) return false;
    throw e;
  }
}

export type Made = { ok: true; refund: RefundRow };

/** The refund a request with this Idempotency-Key item already made on the account, if any. */
function refundMadeFor(tx: Tx, account_id: string, idempotency_ref: string): Promise<RefundRow | undefined> {
  return tx.selectFrom('refunds').selectAll().where('idempotency_ref', '=', idempotency_ref).where('account_id', '=', account_id).executeTakeFirst();
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
  if (seq > MAX_REFUNDS_PER_PAYMENT) throw new Refused(refuse('invalid_state', `a payment takes at most ${MAX_REFUNDS_PER_PAYMENT} refunds`));
  return seq;
}

/** The refund row of the payment's refund number `seq` of n minor units. */
function newRefundRow(
  row: PaymentRow,
  reason: string,
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
    refund_reason: reason,
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
  /** Written with it (the attempt that brought the outcome). */
  alongside?: WriteUnit,
): Promise<boolean> {
  return store.transaction(async (tx) => {
    const refund = await tx.selectFrom('refunds').selectAll().where('refund_reference_id', '=', refund_reference_id).executeTakeFirst();
    if (alongside) await applyUnit(tx, alongside);
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
