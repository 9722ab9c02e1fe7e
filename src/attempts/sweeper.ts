// The attempt sweeper (docs/contract.md §20, docs/attempts.md): processor calls whose answer
// is not known (the call timed out or failed, the processor said it would report later, or
// the process died between the call and its record) are asked about again with the same
// attempt id, with backoff, and settled by the same function as an answer heard at once: a
// card authorisation into its payment (one still unknown after the void bound is cancelled
// at the processor and fails with 1007), a capture or cancel into its payment
// (src/payments/at-processor.ts), a refund into its refund (src/refunds/refund.ts).

import { cardAnswerRecord } from '../authorise/answer.js';
import { type PaymentSnapshot, writeSnapshotPayment } from '../authorise/snapshot.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import type { MinorUnits } from '../money/currency.js';
import { REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { processorOfPayment, processorReference, settlePaymentOperation } from '../payments/at-processor.js';
import { movePayment, type PaymentMove } from '../payments/engine.js';
import { paymentById } from '../payments/reader.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import { sealAnswer } from '../payments/stored-answer.js';
import { resolvePayoutAttempt, settlePayoutAttempt } from '../payouts/service.js';
import { type AttemptEvent, type AttemptStatus, callWithDeadline, OPEN_ATTEMPT, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type {
  AttemptStatusAnswer,
  MoneyOperation,
  OperationOutcome,
  OperationStatusAnswer,
  PayoutOutcome,
  Processor,
  ProcessorCall,
} from '../processors/types.js';
import { settleRefundAttempt } from '../refunds/refund.js';
import { settleDeduction } from '../subscriptions/deductions.js';
import { isLive, releaseContractName } from '../subscriptions/engine.js';
import { answerFieldsOf, createForApproved } from '../subscriptions/service.js';
import { applyChallengeTransition } from '../threeds/states.js';
import type { Deps } from '../web/context.js';
import type { ResultCode } from '../web/errors.js';

export interface SweepReport {
  asked: number;
  settled: number;
  voided: number;
}

/** The operations the sweeper settles (an APM start only when its process died: `closeAbandonedStart`). */
const SWEPT = ['authorise', 'capture', 'cancel', 'refund', 'payout', 'apm_start'] as const;

/**
 * A call's deadline, from when the call starts: one run asks about up to 100 attempts one
 * after another, so a deadline from the run's start (`now_ms`) was spent before the later
 * calls were made (the crash test's remote part: every status query and cancel after a slow
 * one answered "no answer within 0 ms", and the cancels still reached the processor).
 */
const callDeadline = (deps: Deps): number => deps.now() + deps.settings.processor_timeout_ms;

/** Open attempts due to be asked about, at most `limit`, each settled or rescheduled. */
export async function sweepAttempts(deps: Deps, now_ms: number, limit = 100): Promise<SweepReport> {
  const due = await deps.store.db
    .selectFrom('processor_attempts')
    .selectAll()
    .where('next_check_at', '<=', now_ms)
    .where('status', 'in', [...OPEN_ATTEMPT])
    .where('operation', 'in', [...SWEPT])
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
  const report: SweepReport = { asked: 0, settled: 0, voided: 0 };
  for (const a of due) {
    const r =
      a.operation === 'authorise'
        ? await resolveAttempt(deps, a, now_ms)
        : a.operation === 'payout'
          ? await resolvePayoutAttempt(deps, a, now_ms)
          : a.operation === 'apm_start'
            ? await closeAbandonedStart(deps, a, now_ms)
            : await resolveOperation(deps, a, now_ms);
    report.asked++;
    if (r === 'settled') report.settled++;
    if (r === 'voided') report.voided++;
  }
  return report;
}

/**
 * A capture, cancel or refund: the processor asked for the attempt, its answer settled as one
 * heard at once. There is nothing to void: one unknown for ever is asked about with the
 * longest backoff, and shows in `processor_attempts` for an operator. A processor without
 * status queries (Adyen) is sent the same operation again under the same attempt id, its
 * idempotency key: it answers the first one's answer if that one arrived, or acts now if it
 * never did (a 500 or reset before it acted), so a lost answer cannot leave it open for good.
 */
async function resolveOperation(deps: Deps, a: ProcessorAttemptRow, now_ms: number): Promise<'settled' | 'open'> {
  const payment_id = a.operation === 'refund' ? await refundPaymentId(deps, a.object_id) : a.object_id;
  const payment = payment_id ? await paymentById(deps.store.db, payment_id) : undefined;
  const processor = payment ? await processorOfPayment(deps, payment) : null;
  if (!payment || !processor) {
    await settleAlone(deps, a, 'answer', { status: 'unknown', error: payment ? 'no processor to ask' : 'payment not found' }, now_ms, a.checks + 1);
    return 'open';
  }
  const asked = { attempt_id: a.attempt_id, deadline_at: callDeadline(deps) };
  const answer: OperationStatusAnswer = await callWithDeadline(asked, deps.now, (call) =>
    processor.status_queries === false && a.status !== 'pending'
      ? sendAgain(processor, a, payment, call)
      : processor.operationStatus({ operation: a.operation as MoneyOperation, transaction_id: payment.transaction_id }, call),
  );
  const checks = a.checks + 1;
  if (a.operation === 'refund') await settleRefundAttempt(deps, a, answer, now_ms, checks);
  else await settlePaymentOperation(deps, payment, a, answer, now_ms, checks);
  return answer.kind === 'pending' || answer.kind === 'unknown' ? 'open' : 'settled';
}

/** The attempt's capture, cancel or refund as it was first sent (its amount, the payment's reference), under the same attempt id. */
function sendAgain(processor: Processor, a: ProcessorAttemptRow, payment: PaymentRow, call: ProcessorCall): Promise<OperationOutcome> {
  const base = { transaction_id: payment.transaction_id, reference: processorReference(payment) };
  const amount = { amount_minor: Number(a.amount_minor) as MinorUnits, currency: a.currency };
  if (a.operation === 'capture') return processor.capture({ ...base, ...amount }, call);
  if (a.operation === 'cancel') return processor.cancel(base, call);
  return processor.refund({ ...base, ...amount, refund_id: a.object_id }, call);
}

/**
 * An APM start still open a minute past its deadline (ABANDONED_START_MS): the process that
 * made it died at the processor (a live one settles it at its deadline, with its payment or
 * without). Its payment was never written, so the shopper never got the issuer address: the
 * attempt is closed and lets go of the order_no, which the merchant may start again. An
 * issuer session the processor opened lapses there unpaid.
 */
async function closeAbandonedStart(deps: Deps, a: ProcessorAttemptRow, now_ms: number): Promise<'settled'> {
  const error = 'abandoned: the process ended while the start was at the processor; no payment was written';
  await settleAlone(deps, a, 'lose', { status: 'declined', result_code: '1007', error }, now_ms);
  return 'settled';
}

async function refundPaymentId(deps: Deps, refund_reference_id: string): Promise<string | undefined> {
  const r = await deps.store.db.selectFrom('refunds').select('transaction_id').where('refund_reference_id', '=', refund_reference_id).executeTakeFirst();
  return r?.transaction_id;
}

/** What the processor says of one authorise attempt, and what that does to its payment. */
async function resolveAttempt(deps: Deps, a: ProcessorAttemptRow, now_ms: number): Promise<'settled' | 'voided' | 'open'> {
  let payment = await paymentById(deps.store.db, a.object_id);
  if (!payment && a.snapshot) {
    const snap = JSON.parse(a.snapshot) as PaymentSnapshot;
    payment = await writeSnapshotPayment(deps, snap);
    if (!payment) return voidUnwritten(deps, a, snap, now_ms);
  }
  const processor = payment ? await processorOfPayment(deps, payment) : null;
  if (payment?.status !== 'processing' || !processor) {
    // Nothing left to settle (or nobody to ask): the attempt is closed as it stands.
    await settleAlone(deps, a, 'lose', { status: 'declined', result_code: '1007', error: payment ? 'no processor to ask' : 'payment not found' }, now_ms);
    return 'settled';
  }
  // A void sent without an answer may have cancelled the authorisation: only the cancel settles it now.
  if (voidUnanswered(a)) return voidPayment(deps, a, payment, processor, a.reference, now_ms);
  const asked = { attempt_id: a.attempt_id, deadline_at: callDeadline(deps) };
  const answer: AttemptStatusAnswer = await callWithDeadline(asked, deps.now, (call) =>
    processor.authoriseStatus({ transaction_id: payment.transaction_id }, call),
  );
  if ((answer.kind === 'pending' || answer.kind === 'unknown') && now_ms - a.created_at >= deps.settings.processor_unknown_void_after_ms)
    return voidPayment(deps, a, payment, processor, answer.kind === 'pending' ? answer.reference : a.reference, now_ms);
  return applyAuthoriseAnswer(deps, a, payment, answer, now_ms, a.checks + 1);
}

/**
 * `last_error` of an authorise attempt whose void was sent and not answered: the processor
 * may have cancelled the authorisation, so a later approval (a status answer, a webhook)
 * must not approve the payment; the sweeper sends the same cancel again until it is answered.
 */
const VOID_UNANSWERED = 'cancel sent, no answer: ';
const voidUnanswered = (a: ProcessorAttemptRow): boolean => a.last_error.startsWith(VOID_UNANSWERED);

/**
 * docs/contract.md §20: an authorisation still unknown past the void bound is cancelled at the
 * processor by its reference, and its payment fails with 1007. The cancel's idempotency key is
 * derived from the attempt's, so a cancel repeated by a later run is the same cancel; accepted
 * for later confirmation is enough. A refused cancel leaves the authorisation standing (a
 * later answer settles it); an unanswered one is sent again (`VOID_UNANSWERED`).
 */
async function voidPayment(
  deps: Deps,
  a: ProcessorAttemptRow,
  payment: PaymentRow,
  processor: Processor,
  reference: string,
  now_ms: number,
): Promise<'voided' | 'open'> {
  const voiding = { attempt_id: `${a.attempt_id}.void`, deadline_at: callDeadline(deps) };
  const cancelled = await callWithDeadline(voiding, deps.now, (call) => processor.cancel({ transaction_id: payment.transaction_id, reference }, call));
  if (cancelled.kind === 'declined' || cancelled.kind === 'unknown') {
    const error = `${cancelled.kind === 'unknown' ? VOID_UNANSWERED : 'cancel refused: '}${cancelled.reason}`;
    await settleAlone(deps, a, 'answer', { status: 'unknown', error }, now_ms, a.checks + 1);
    return 'open';
  }
  await settlePayment(deps, payment, a, 'void', { status: 'voided', result_code: '1007' }, failed('1007', 'processor_void'), now_ms);
  return 'voided';
}

/** A new card payment that cannot be written (its order_no was taken): whatever the processor did is cancelled there. */
async function voidUnwritten(deps: Deps, a: ProcessorAttemptRow, snap: PaymentSnapshot, now_ms: number): Promise<'voided' | 'open'> {
  const processor = await processorOfPayment(deps, snap.payment);
  if (!processor) {
    await settleAlone(deps, a, 'lose', { status: 'declined', result_code: '1007', error: 'no processor to ask' }, now_ms);
    return 'voided';
  }
  const voiding = { attempt_id: `${a.attempt_id}.void`, deadline_at: callDeadline(deps) };
  const cancelled = await callWithDeadline(voiding, deps.now, (call) => processor.cancel({ transaction_id: a.object_id, reference: a.reference }, call));
  if (cancelled.kind === 'declined' || cancelled.kind === 'unknown') {
    await settleAlone(deps, a, 'answer', { status: 'unknown', error: `cancel: ${cancelled.reason}` }, now_ms, a.checks + 1);
    return 'open';
  }
  await settleAlone(deps, a, 'void', { status: 'voided', result_code: '1007', error: 'the order was taken by another payment' }, now_ms);
  return 'voided';
}

/**
 * Settles an open attempt with an answer the processor sent unasked (a webhook), exactly as
 * if the sweeper had heard it: 'stale' when the attempt is settled already or its object
 * moved on (a duplicate or late notification changes nothing).
 */
export async function settleNotified(
  deps: Deps,
  a: ProcessorAttemptRow,
  answer: AttemptStatusAnswer | OperationStatusAnswer | PayoutOutcome,
  now_ms: number,
): Promise<'settled' | 'open' | 'stale'> {
  if (!OPEN_ATTEMPT.includes(a.status)) {
    if (a.operation === 'authorise' && (a.status === 'declined' || a.status === 'voided') && answer.kind === 'approved')
      await voidLateApproval(deps, a, answer.reference);
    return 'stale';
  }
  if (a.operation === 'authorise') {
    let payment = await paymentById(deps.store.db, a.object_id);
    // A notification can come before the payment's first write (the call still in flight, its
    // answer lost): the payment is written from the attempt's snapshot first, so the outcome
    // is not dropped as stale (its repeat would then be a duplicate, and a processor without a
    // status query would have its approval voided at the bound).
    if (!payment && a.snapshot) payment = await writeSnapshotPayment(deps, JSON.parse(a.snapshot) as PaymentSnapshot);
    if (payment?.status !== 'processing') return 'stale';
    return applyAuthoriseAnswer(deps, a, payment, answer as AttemptStatusAnswer, now_ms, a.checks);
  }
  const open = answer.kind === 'pending' || answer.kind === 'unknown';
  if (a.operation === 'refund') return (await settleRefundAttempt(deps, a, answer as OperationStatusAnswer, now_ms)) ? (open ? 'open' : 'settled') : 'stale';
  if (a.operation === 'capture' || a.operation === 'cancel') {
    const payment = await paymentById(deps.store.db, a.object_id);
    if (!payment) return 'stale';
    const r = await settlePaymentOperation(deps, payment, a, answer as OperationStatusAnswer, now_ms);
    return r.kind === 'stale' ? 'stale' : open ? 'open' : 'settled';
  }
  if (a.operation === 'payout') {
    const row = await deps.store.db.selectFrom('payouts').selectAll().where('transaction_id', '=', a.object_id).executeTakeFirst();
    if (row?.status !== 'PROCESSING') return 'stale';
    const settled = await settlePayoutAttempt(deps, row, a, answer as PayoutOutcome, now_ms);
    return !settled ? 'stale' : (answer as PayoutOutcome).kind === 'unknown' ? 'open' : 'settled';
  }
  return 'stale';
}

/**
 * The processor approved an authorisation Tollgate settled as not made (not found, declined,
 * voided): no payment holds it, so the shopper's funds would stay held at the issuer. It is
 * cancelled at the processor by its reference, under `<attempt>.late` (a repeated
 * notification sends the same cancel again). Written on the attempt before the call and after it;
 * a payment that holds this very authorisation (the same reference) is left alone.
 */
async function voidLateApproval(deps: Deps, a: ProcessorAttemptRow, reference: string): Promise<void> {
  const payment = await paymentById(deps.store.db, a.object_id);
  const holding = payment && ['authorised', 'captured', 'review', 'refunded', 'partially_refunded'].includes(payment.status);
  if (holding && processorReference(payment) === reference) return;
  const processor = a.processor_id ? deps.processors.byProcessorId(a.processor_id)?.processor : undefined;
  const note = (error: string) =>
    deps.store.transaction((tx) =>
      tx
        .updateTable('processor_attempts')
        .set({ last_error: error.slice(0, 500) })
        .where('attempt_id', '=', a.attempt_id)
        .execute(),
    );
  if (!processor) return void (await note('approved by the processor after it was settled; no processor to cancel it at'));
  await note('approved by the processor after it was settled: its cancel is sent');
  const voiding = { attempt_id: `${a.attempt_id}.late`, deadline_at: callDeadline(deps) };
  const cancelled = await callWithDeadline(voiding, deps.now, (call) => processor.cancel({ transaction_id: a.object_id, reference }, call));
  const done = cancelled.kind === 'approved' || cancelled.kind === 'pending';
  await note(
    done
      ? 'approved by the processor after it was settled: cancelled at the processor'
      : `approved by the processor after it was settled: its cancel got no yes (${cancelled.reason}); cancel it at the processor`,
  );
}

/** An authorise attempt's answer (to a status query, or in a webhook) settled into its payment, which is `processing`. */
async function applyAuthoriseAnswer(
  deps: Deps,
  a: ProcessorAttemptRow,
  payment: PaymentRow,
  answer: AttemptStatusAnswer,
  now_ms: number,
  checks: number,
): Promise<'settled' | 'open'> {
  // A webhook's approval while an unanswered void may have cancelled it: the sweeper's cancel decides.
  if (voidUnanswered(a) && (answer.kind === 'approved' || answer.kind === 'pending' || answer.kind === 'unknown')) return 'open';
  if (answer.kind === 'pending' || answer.kind === 'unknown') {
    const error = answer.kind === 'unknown' ? answer.reason : '';
    await settleAlone(deps, a, 'answer', { status: answer.kind, error }, now_ms, checks);
    return 'open';
  }
  if (answer.kind === 'not_found') {
    // The processor never took it: nothing was authorised. A hosted checkout's session opens
    // again, so the shopper can pay (docs/contract.md §14); a direct payment fails with 1007.
    if (payment.kind === 'checkout') {
      await reopenCheckout(deps, payment, a, now_ms);
      return 'settled';
    }
    await settlePayment(deps, payment, a, 'lose', { status: 'declined', result_code: '1007' }, failed('1007', 'processor_answer'), now_ms);
    return 'settled';
  }
  if (answer.kind === 'declined') {
    await settlePayment(
      deps,
      payment,
      a,
      'answer',
      { status: 'declined', result_code: answer.code, reference: answer.reference },
      failed(answer.code, 'processor_answer'),
      now_ms,
    );
    return 'settled';
  }
  if (answer.kind === 'challenge_required') {
    // The shopper has had the pending answer and left: the authentication the issuer wants cannot be run now.
    const move = failed('1009', 'processor_answer');
    move.patch.threeds_result = 'U';
    await settlePayment(deps, payment, a, 'answer', { status: 'challenge', reference: answer.reference }, move, now_ms);
    return 'settled';
  }
  await settlePayment(deps, payment, a, 'answer', { status: 'approved', reference: answer.reference }, approvedMove(payment, answer.reference, now_ms), now_ms);
  return 'settled';
}

/** Another change settled the attempt first: its answer stands. */
class SettledMeanwhile extends Error {}

/** The attempt alone moves (still open, or nothing to settle). */
async function settleAlone(
  deps: Deps,
  a: ProcessorAttemptRow,
  event: AttemptEvent,
  outcome: { status: AttemptStatus; result_code?: string; error?: string },
  now_ms: number,
  checks?: number,
): Promise<void> {
  const unit = new WriteUnit(deps.store.engine);
  settleAttemptInto(unit, a, event, { ...outcome, checks }, now_ms, () => new SettledMeanwhile());
  await deps.store.write(unit).catch((e) => {
    if (!(e instanceof SettledMeanwhile)) throw e;
  });
}

/** The payment moves with its attempt, its postings and its event, in one transaction; nothing when another change got there first. */
async function settlePayment(
  deps: Deps,
  payment: PaymentRow,
  a: ProcessorAttemptRow,
  event: AttemptEvent,
  outcome: { status: AttemptStatus; result_code?: string; reference?: string },
  move: PaymentMove,
  now_ms: number,
): Promise<void> {
  if (payment.kind === 'recurring') {
    // A subscription's deduction: the subscription moves with it (src/subscriptions/deductions.ts).
    const result = (move.patch.result_code ?? '0000') as ResultCode;
    await settleDeduction(deps, payment, a, { event, status: outcome.status, result, reference: outcome.reference ?? '' }, now_ms);
    return;
  }
  const note = String((JSON.parse(payment.details || '{}') as { note?: unknown }).note ?? '');
  await deps.store.transaction(async (tx) => {
    const after = { ...payment, ...move.patch, status: move.to, updated_at: now_ms } as PaymentRow;
    move.patch.answer = sealAnswer(deps.keyring, cardAnswerRecord(after, note, { token_id: '' }));
    const moved = await movePayment(tx, payment, move, now_ms);
    if (!moved) return;
    // A 3-D Secure challenge whose authorisation this was ends with it (docs/contract.md §10).
    const challenge = await tx
      .selectFrom('threeds_challenges')
      .select('id_hash')
      .where('transaction_id', '=', payment.transaction_id)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    if (challenge) await applyChallengeTransition(tx, challenge.id_hash, 'complete', 'processing', { decided_at: now_ms }, now_ms);
    const unit = new WriteUnit(deps.store.engine);
    settleAttemptInto(unit, a, event, outcome, now_ms, () => new SettledMeanwhile());
    await applyUnit(tx, unit);
    // A first payment's hold on its contract_name ends with its outcome, unless it started a subscription that charges.
    const started = await tx.selectFrom('subscriptions').selectAll().where('first_transaction_id', '=', payment.transaction_id).executeTakeFirst();
    if (!(started && isLive(started.status))) await releaseContractName(tx, payment.transaction_id);
    // It did: the stored answer (replayed to the merchant's repeat) names it, as the direct answer would.
    else {
      const answer = sealAnswer(deps.keyring, cardAnswerRecord(after, note, { token_id: '', subscription: answerFieldsOf(started) }));
      await tx.updateTable('payments').set({ answer }).where('transaction_id', '=', payment.transaction_id).execute();
    }
  });
}

/**
 * A hosted-checkout payment the processor never took goes back to the open session it was
 * (no method chosen, nothing held, no event: the merchant was told nothing of it).
 */
async function reopenCheckout(deps: Deps, payment: PaymentRow, a: ProcessorAttemptRow, now_ms: number): Promise<void> {
  const open = {
    result_code: '0003',
    card_id: null,
    card_brand: '',
    card_masked: '',
    connector: '',
    is3ds: 0,
    threeds_result: '',
    risk_score: null,
    risk_action: '',
    risk_reasons: '[]',
    answer: '',
  };
  await deps.store.transaction(async (tx) => {
    if (!(await applyTransition(tx, payment.transaction_id, 'processor_answer', 'processing', 'pending', open, now_ms))) return;
    const unit = new WriteUnit(deps.store.engine);
    settleAttemptInto(unit, a, 'lose', { status: 'declined', result_code: '1007', error: 'not found at the processor' }, now_ms, () => new SettledMeanwhile());
    await applyUnit(tx, unit);
  });
}

/**
 * A payment the processor did not authorise: failed with `code`, holding nothing. A payment
 * sent after a passed 3-D Secure challenge carries the hold posted when the challenge began
 * (src/threeds/service.ts keeps it while the processor is asked): it is released here, as the
 * challenge page's own decline releases it.
 */
function failed(code: string, event: 'processor_answer' | 'processor_void'): PaymentMove & { patch: NonNullable<PaymentMove['patch']> } {
  return { event, to: 'declined', patch: { result_code: code, authorised_minor: 0, expires_at: null }, notify: 'payment.failed' };
}

/** An approval heard late: the hold or capture, the review the risk engine asked for, and the subscription it may start. */
function approvedMove(payment: PaymentRow, reference: string, now_ms: number): PaymentMove & { patch: NonNullable<PaymentMove['patch']> } {
  const next = statusAfterApproval(payment.risk_action, payment.capture_method);
  const details = { ...(JSON.parse(payment.details || '{}') as Record<string, unknown>), reference_no: reference };
  const amount = payment.amount_minor;
  return {
    event: 'processor_answer',
    to: next.status,
    patch: {
      result_code: next.result,
      authorised_minor: next.status === 'captured' ? 0 : amount,
      captured_minor: next.status === 'captured' ? amount : 0,
      details: JSON.stringify(details),
      expires_at: next.status === 'authorised' ? now_ms + MANUAL_CAPTURE_WINDOW_MS : next.status === 'review' ? now_ms + REVIEW_WINDOW_MS : null,
    },
    notify: next.status === 'review' ? 'payment.held' : 'payment.succeeded',
    approved: (tx, after) => createForApproved(tx, after, now_ms),
  };
}
