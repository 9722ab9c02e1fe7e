// The subscription engine (issue 30 item 2): every move of a subscription is one event of
// its transition table (states.ts), applied by compare-and-set, with the notifications that
// belong to it, in the caller's transaction. A subscription's notification carries a
// payment's order record (the deduction's, or the first payment's for a cancel), so the
// caller names that payment; this file alone pairs an event with what is sent.
import type { Tx } from '../db/store.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { EventType } from '../notifications/outbox.js';
import { recordPaymentEvent } from '../payments/events.js';
import { applySubscriptionTransition, type SubscriptionEvent } from './states.js';
import type { SubscriptionRow } from './tables.js';

/** The notifications each event sends, in order (docs/contract.md §16). */
export const SUBSCRIPTION_NOTIFY: Readonly<Record<SubscriptionEvent, readonly EventType[]>> = {
  charge_succeeded: ['subscription.charged'],
  complete: ['subscription.charged'], // the last deduction was paid
  charge_failed: ['subscription.failed'],
  give_up: ['subscription.failed', 'subscription.cancelled'],
  cancel: ['subscription.cancelled'],
};

/**
 * Applies `event` to `sub` if it is still in the status it was read in, then sends the
 * event's notifications with `payment`'s order record (none when `payment` is null: a
 * cancelled subscription whose first payment is gone). Undefined, nothing sent, when
 * another change got there first.
 */
export async function moveSubscription(
  tx: Tx,
  sub: SubscriptionRow,
  event: SubscriptionEvent,
  patch: Parameters<typeof applySubscriptionTransition>[4],
  now_ms: number,
  payment: () => Promise<PaymentRow | undefined>,
): Promise<SubscriptionRow | undefined> {
  const after = await applySubscriptionTransition(tx, sub.recurring_id, event, sub.status, patch, now_ms);
  if (!after) return undefined;
  const record = await payment();
  if (record) for (const type of SUBSCRIPTION_NOTIFY[event]) await recordPaymentEvent(tx, record, type, now_ms, after);
  return after;
}
