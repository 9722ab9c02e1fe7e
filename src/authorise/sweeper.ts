// The attempt sweeper (docs/contract.md §20, docs/attempts.md): card authorisations whose
// processor answer is not known (the call timed out or failed, the processor said it would
// report later, or the process died between the call and its record) are asked about again
// with the same attempt id, with backoff, and settled into the payment by the same
// compare-and-set as an answer heard at once. One still unknown after the void bound is
// cancelled at the processor by its reference and fails with 1007.
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { movePayment, type PaymentMove } from '../payments/engine.js';
import { paymentById } from '../payments/reader.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import { sealAnswer } from '../payments/stored-answer.js';
import { type AttemptEvent, type AttemptStatus, callWithDeadline, OPEN_ATTEMPT, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { AttemptStatusAnswer, Processor } from '../processors/types.js';
import { isLive, releaseContractName } from '../subscriptions/engine.js';
import { createForApproved } from '../subscriptions/service.js';
import type { Deps } from '../web/context.js';
import { cardAnswerRecord } from './answer.js';

export interface SweepReport {
  asked: number;
  settled: number;
  voided: number;
}

/** Open authorise attempts due to be asked about, at most `limit`, each settled or rescheduled. */
export async function sweepAttempts(deps: Deps, now_ms: number, limit = 100): Promise<SweepReport> {
  const due = await deps.store.db
    .selectFrom('processor_attempts')
    .selectAll()
    .where('next_check_at', '<=', now_ms)
    .where('status', 'in', [...OPEN_ATTEMPT])
    .where('operation', '=', 'authorise')
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
  const report: SweepReport = { asked: 0, settled: 0, voided: 0 };
  for (const a of due) {
    const r = await resolveAttempt(deps, a, now_ms);
    report.asked++;
    if (r === 'settled') report.settled++;
    if (r === 'voided') report.voided++;
  }
  return report;
}

/** What the processor says of one attempt, and what that does to its payment. */
async function resolveAttempt(deps: Deps, a: ProcessorAttemptRow, now_ms: number): Promise<'settled' | 'voided' | 'open'> {
  const payment = await paymentById(deps.store.db, a.object_id);
  const processor = payment ? await processorOf(deps, payment) : null;
  if (payment?.status !== 'processing' || !processor) {
    // Nothing left to settle (or nobody to ask): the attempt is closed as it stands.
    await settleAlone(deps, a, 'lose', { status: 'declined', result_code: '1007', error: payment ? 'no processor to ask' : 'payment not found' }, now_ms);
    return 'settled';
  }
  const asked = { attempt_id: a.attempt_id, deadline_at: now_ms + deps.settings.processor_timeout_ms };
  const answer: AttemptStatusAnswer = await callWithDeadline(asked, deps.now, (call) =>
    processor.authoriseStatus({ transaction_id: payment.transaction_id }, call),
  );
  if (answer.kind === 'pending' || answer.kind === 'unknown') {
    if (now_ms - a.created_at < deps.settings.processor_unknown_void_after_ms) {
      const error = answer.kind === 'unknown' ? answer.reason : '';
      await settleAlone(deps, a, 'answer', { status: answer.kind, error }, now_ms, a.checks + 1);
      return 'open';
    }
    // docs/contract.md §20: still unknown past the void bound: cancelled at the processor by its reference.
    const cancelled = await callWithDeadline(asked, deps.now, (call) =>
      processor.cancelAuthorisation({ transaction_id: payment.transaction_id, reference: answer.kind === 'pending' ? answer.reference : a.reference }, call),
    );
    if (cancelled.kind !== 'approved') {
      await settleAlone(deps, a, 'answer', { status: 'unknown', error: `cancel: ${cancelled.reason}` }, now_ms, a.checks + 1);
      return 'open';
    }
    await settlePayment(deps, payment, a, 'void', { status: 'voided', result_code: '1007' }, failed('1007', 'processor_void'), now_ms);
    return 'voided';
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

async function processorOf(deps: Deps, payment: PaymentRow): Promise<Processor | null> {
  const creds = await deps.merchants.credentials(payment.merchant_id, payment.account_id);
  return creds ? deps.processorFor(creds.account) : null;
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
  const note = String((JSON.parse(payment.details || '{}') as { note?: unknown }).note ?? '');
  await deps.store.transaction(async (tx) => {
    const after = { ...payment, ...move.patch, status: move.to, updated_at: now_ms } as PaymentRow;
    move.patch.answer = sealAnswer(deps.keyring, cardAnswerRecord(after, note, { token_id: '' }));
    const moved = await movePayment(tx, payment, move, now_ms);
    if (!moved) return;
    const unit = new WriteUnit(deps.store.engine);
    settleAttemptInto(unit, a, event, outcome, now_ms, () => new SettledMeanwhile());
    await applyUnit(tx, unit);
    // A first payment's hold on its contract_name ends with its outcome, unless it started a subscription that charges.
    const started = await tx.selectFrom('subscriptions').select('status').where('first_transaction_id', '=', payment.transaction_id).executeTakeFirst();
    if (!(started && isLive(started.status))) await releaseContractName(tx, payment.transaction_id);
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

/** A payment the processor did not authorise: failed with `code`, no money moved. */
function failed(code: string, event: 'processor_answer' | 'processor_void'): PaymentMove & { patch: NonNullable<PaymentMove['patch']> } {
  return { event, to: 'declined', patch: { result_code: code }, notify: 'payment.failed' };
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
