// The payment engine (issue 30 item 2) for the moves made after authorisation: capture,
// cancel, expiry, a hosted-checkout cancel, an issuer's answer, a 3-D Secure challenge's
// end. Each is one event of the transition table (states.ts) applied by compare-and-set,
// then the ledger postings derived from the row before and after (src/ledger/postings.ts)
// and the event sent, all in the caller's transaction. The authorisation itself
// (authorise.ts) writes its own unit.
import type { Tx } from '../db/store.js';
import type { SubscriptionRow } from '../db/tables/subscriptions.js';
import { postPaymentChange } from '../ledger/postings.js';
import type { EventType } from '../notifications/outbox.js';
import { recordPaymentEvent } from './events.js';
import { applyTransition, type PaymentEvent, type PaymentStatus } from './states.js';
import type { PaymentRow } from './tables.js';

export interface PaymentMove {
  event: PaymentEvent;
  to: PaymentStatus;
  patch: Parameters<typeof applyTransition>[5];
  /** The event sent once it moved. */
  notify: EventType;
  /** A hosted-checkout session must still be open (states.ts, checkoutSessionState). */
  unclaimed?: boolean;
  /**
   * Runs after the postings, before the event: a payment that waited (challenge, review)
   * and is now approved creates the subscription its event then carries.
   */
  approved?: (tx: Tx, after: PaymentRow) => Promise<SubscriptionRow | undefined>;
}

/**
 * Moves `before` (as read in this transaction) by `m`: the updated payment, or undefined,
 * with nothing posted or sent, when another change got there first.
 */
export async function movePayment(tx: Tx, before: PaymentRow, m: PaymentMove, now_ms: number): Promise<PaymentRow | undefined> {
  if (!(await applyTransition(tx, before.transaction_id, m.event, before.status, m.to, m.patch, now_ms, { unclaimed: m.unclaimed }))) return undefined;
  const after: PaymentRow = { ...before, ...m.patch, status: m.to, updated_at: now_ms };
  await postPaymentChange(tx, before, after, now_ms);
  const subscription = m.approved ? await m.approved(tx, after) : undefined;
  await recordPaymentEvent(tx, after, m.notify, now_ms, subscription);
  return after;
}
