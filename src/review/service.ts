// Review of payments held by the risk engine (docs/contract.md §8, §10). A hold has its funds
// authorised (only authorised at the processor, whatever the capture mode); ACCEPT continues
// it (captured under automatic capture, at the processor first; otherwise authorised with the
// 7-day capture window), REJECT cancels it at the processor and releases the funds, and a
// hold nobody decides within 7 days expires the same way.

import { type Refusal, refuse } from '../core/outcomes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { postPaymentChange } from '../ledger/postings.js';
import type { EventType } from '../notifications/outbox.js';
import { type PaymentOperation, processorOfPayment, processorReference, sendForPayment, settlePaymentOperation } from '../payments/at-processor.js';
import { recordPaymentEvent } from '../payments/events.js';
import { accountPayment, requirePayment, reviewsDue } from '../payments/reader.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS, type PaymentEvent, type PaymentStatus } from '../payments/states.js';
import { type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import { createForApproved } from '../subscriptions/service.js';
import type { Deps } from '../web/context.js';

export const MAX_REVIEW_ORDERS = 50;

type Decision = 'ACCEPT' | 'REJECT' | 'EXPIRE';

/** Decide a payment of `account_id` held for risk review. */
export interface ReviewCommand {
  account_id: string;
  transaction_id: string;
  decision: 'ACCEPT' | 'REJECT';
  note: string;
}

/**
 * The review decision, pure: the transition, patch and event that end a hold
 * (docs/contract.md §8). ACCEPT continues it (captured under automatic capture, else
 * authorised with the capture window), REJECT cancels it, EXPIRE ends it.
 */
export function reviewMove(
  row: Pick<PaymentRow, 'capture_method' | 'amount_minor'>,
  decision: Decision,
  now: number,
): { event: PaymentEvent; to: PaymentStatus; patch: Partial<PaymentRow>; type: EventType } {
  if (decision === 'ACCEPT') {
    const automatic = row.capture_method === 'automatic';
    return {
      event: 'review_accept',
      to: automatic ? 'captured' : 'authorised',
      patch: automatic
        ? { result_code: '0000', risk_action: 'ACCEPT', authorised_minor: 0, captured_minor: row.amount_minor, expires_at: null }
        : { result_code: '0000', risk_action: 'ACCEPT', expires_at: now + MANUAL_CAPTURE_WINDOW_MS },
      type: 'payment.succeeded',
    };
  }
  if (decision === 'REJECT') {
    return {
      event: 'review_reject',
      to: 'cancelled',
      patch: { result_code: '1008', risk_action: 'REJECT', authorised_minor: 0, expires_at: null },
      type: 'payment.cancelled',
    };
  }
  return { event: 'review_expire', to: 'expired', patch: { authorised_minor: 0, expires_at: null }, type: 'payment.expired' };
}

/**
 * What a decision asks of the processor that holds the payment (docs/contract.md §10, §20): a
 * held payment is only authorised there, so ACCEPT under automatic capture captures it, REJECT
 * and expiry cancel it; ACCEPT under manual capture leaves it authorised (nothing to ask).
 */
function processorOperation(row: Pick<PaymentRow, 'capture_method'>, decision: Decision): PaymentOperation | null {
  if (decision === 'ACCEPT') return row.capture_method === 'automatic' ? 'capture' : null;
  return 'cancel';
}

/** A decision's result: the payment moved; still held while the processor has not confirmed; refused by the processor; or lost to another decision. */
export type Decided =
  | { kind: 'moved'; payment: PaymentRow }
  | { kind: 'pending'; payment: PaymentRow }
  | { kind: 'declined'; refusal: Refusal }
  | { kind: 'lost' };

class SettledMeanwhile extends Error {}

export class ReviewService {
  constructor(private readonly deps: Deps) {}

  /**
   * The one review of a held payment (the acquiring batch item, the portal). `ok: 'pending'`:
   * the processor has not confirmed the capture or cancel yet; the payment stays held and moves
   * when it does (the sweeper or its webhook), notified as usual.
   */
  async reviewPayment(cmd: ReviewCommand): Promise<{ ok: true | 'pending'; payment: PaymentRow } | Refusal> {
    const row = await accountPayment(this.deps.store.db, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found');
    if (row.status !== 'review') return refuse('invalid_state');
    const d = await this.decide(row, cmd.decision, cmd.note, 'api');
    if (d.kind === 'declined') return d.refusal;
    if (d.kind === 'pending') return { ok: 'pending', payment: d.payment };
    // Lost or still held: another decision (or the expiry) got there first.
    if (d.kind === 'lost' || d.payment.status === 'review') return refuse('invalid_state');
    return { ok: true, payment: d.payment };
  }

  /**
   * Ends one hold: the processor is asked first when the decision needs it (a recorded
   * attempt, docs/attempts.md), then the payment moves with the attempt's outcome in one
   * transaction. A processor that has not answered leaves the payment held with its attempt
   * open; the attempt's settlement moves it later (capture or cancel from `review`).
   */
  async decide(row: PaymentRow, decision: Decision, note: string, source: 'api' | 'expiry'): Promise<Decided> {
    const { deps } = this;
    const op = processorOperation(row, decision);
    const processor = op ? await processorOfPayment(deps, row) : null;
    if (!op || !processor) {
      const after = await this.record(row, decision, note, source, null);
      return after ? { kind: 'moved', payment: after } : { kind: 'lost' };
    }
    const reference = processorReference(row);
    const amount_minor = Number(row.amount_minor);
    const sent = await sendForPayment(deps, row, op, amount_minor, processor, (call) =>
      op === 'capture'
        ? processor.capture({ transaction_id: row.transaction_id, reference, amount_minor, currency: row.currency }, call)
        : processor.cancel({ transaction_id: row.transaction_id, reference }, call),
    );
    if (sent.kind !== 'called') return { kind: 'lost' };
    const { attempt, outcome } = sent;
    if (outcome.kind === 'approved') {
      const after = await this.record(row, decision, note, source, { attempt, reference: outcome.reference });
      return after ? { kind: 'moved', payment: after } : { kind: 'lost' };
    }
    const settled = await settlePaymentOperation(deps, row, attempt, outcome, deps.now());
    if (settled.kind === 'declined')
      return {
        kind: 'declined',
        refusal: refuse('processor_declined', `the processor refused it: ${settled.reason} (${settled.code})`, { code: settled.code }),
      };
    if (settled.kind === 'done') return { kind: 'moved', payment: settled.payment };
    return settled.kind === 'open' ? { kind: 'pending', payment: row } : { kind: 'lost' };
  }

  /** The decision's move in one transaction, with the processor's attempt settled in it; null when the payment was no longer held (a race lost). */
  private async record(
    row: PaymentRow,
    decision: Decision,
    note: string,
    source: 'api' | 'expiry',
    settled: { attempt: ProcessorAttemptRow; reference: string } | null,
  ): Promise<PaymentRow | null> {
    const now = this.deps.now();
    const { event, to, patch, type } = reviewMove(row, decision, now);
    return this.deps.store.transaction(async (tx) => {
      if (settled) {
        const unit = new WriteUnit(this.deps.store.engine);
        settleAttemptInto(unit, settled.attempt, 'answer', { status: 'approved', reference: settled.reference }, now, () => new SettledMeanwhile());
        // Settled meanwhile (its webhook, the sweeper): that settlement moved the payment.
        const applied = await applyUnit(tx, unit).then(
          () => true,
          (e) => {
            if (e instanceof SettledMeanwhile) return false;
            throw e;
          },
        );
        if (!applied) return null;
      }
      const moved = await applyTransition(tx, row.transaction_id, event, 'review', to, patch, now);
      if (!moved) return null;
      // The hold is released (REJECT, EXPIRE), captured (ACCEPT, automatic) or kept (ACCEPT, manual).
      const after = await requirePayment(tx, row.transaction_id);
      await postPaymentChange(tx, row, after, now);
      await tx
        .insertInto('risk_reviews')
        .values({ transaction_id: row.transaction_id, account_id: row.account_id, decision, note: note.slice(0, 1024), source, decided_at: now })
        .execute();
      // docs/contract.md §16: an accepted hold is the approval a subscription's first payment waited for.
      const subscription = await createForApproved(tx, after, now);
      await recordPaymentEvent(tx, after, type, now, subscription);
      return after;
    });
  }

  /** The scheduled job: holds older than 7 days expire, at most `limit` per run. */
  async expireDue(limit = 100, account_id?: string): Promise<number> {
    const due = await reviewsDue(this.deps.store.db, this.deps.now(), limit, account_id);
    let n = 0;
    for (const row of due) if ((await this.decide(row, 'EXPIRE', '', 'expiry')).kind === 'moved') n++;
    return n;
  }
}
