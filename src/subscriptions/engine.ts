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

/** The statuses in which a subscription holds its contract_name (docs/contract.md §16). */
export function isLive(status: SubscriptionRow['status']): boolean {
  return status === 'Active' || status === 'PastDue';
}

/** Ends the hold on a contract_name that `first_transaction_id` took when it went to the processor (none: nothing happens). */
export async function releaseContractName(tx: Tx, first_transaction_id: string): Promise<void> {
  await tx.deleteFrom('subscription_name_claims').where('transaction_id', '=', first_transaction_id).execute();
}

/** The notifications each event sends, in order (docs/contract.md §16). */
export const SUBSCRIPTION_NOTIFY: Readonly<Record<SubscriptionEvent, readonly EventType[]>> = {
  charge_succeeded: ['subscription.charged'],
  complete: ['subscription.charged'], // the last deduction was paid
  charge_failed: ['subscription.failed'],
  give_up: ['subscription.failed', 'subscription.cancelled'],
  cancel: ['subscription.cancelled'],
  paid_after_cancel: ['subscription.charged'],
  failed_after_cancel: ['subscription.failed'],
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
  // A subscription that no longer charges frees its contract_name, held since its first payment went to the processor (docs/attempts.md).
  if (!isLive(after.status)) await releaseContractName(tx, sub.first_transaction_id);
  const record = await payment();
  if (record) for (const type of SUBSCRIPTION_NOTIFY[event]) await recordPaymentEvent(tx, record, type, now_ms, after);
  return after;
}
