// Review of payments held by the risk engine (docs/contract.md §8, §10). A hold has its funds
// authorised; ACCEPT continues it (captured under automatic capture, otherwise authorised
// with the 7-day capture window), REJECT cancels it and releases the funds, and a hold
// nobody decides within 7 days expires the same way.

import { type Refusal, refuse } from '../core/outcomes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { postPaymentChange } from '../ledger/postings.js';
import type { EventType } from '../notifications/outbox.js';
import { recordPaymentEvent } from '../payments/events.js';
import { accountPayment, requirePayment, reviewsDue } from '../payments/reader.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS, type PaymentEvent, type PaymentStatus } from '../payments/states.js';
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

export class ReviewService {
  constructor(private readonly deps: Deps) {}

  /** The one review of a held payment (the acquiring batch item, the portal). */
  async reviewPayment(cmd: ReviewCommand): Promise<{ ok: true; payment: PaymentRow } | Refusal> {
    const row = await accountPayment(this.deps.store.db, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found');
    if (row.status !== 'review') return refuse('invalid_state');
    const after = await this.decide(row, cmd.decision, cmd.note, 'api');
    // Null or still held: another decision (or the expiry) got there first.
    if (!after || after.status === 'review') return refuse('invalid_state');
    return { ok: true, payment: after };
  }

  /** Ends one hold in one transaction; null when it was no longer held (a race lost). */
  async decide(row: PaymentRow, decision: Decision, note: string, source: 'api' | 'expiry'): Promise<PaymentRow | null> {
    const now = this.deps.now();
    const { event, to, patch, type } = reviewMove(row, decision, now);
    return this.deps.store.transaction(async (tx) => {
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
    for (const row of due) if (await this.decide(row, 'EXPIRE', '', 'expiry')) n++;
    return n;
  }
}
