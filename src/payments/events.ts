// A payment's notification (docs/contract.md §11): written in the transaction of the change, with
// the order record the query answer carries as its data.
import type { Tx } from '../db/store.js';
import type { SubscriptionRow } from '../db/tables/subscriptions.js';
import { applyUnit, engineOf, WriteUnit } from '../db/unit.js';
import { type EventType, type NewEvent, recordEventInto } from '../notifications/outbox.js';
import { sandboxDisputeDueInto } from '../processors/sandbox/disputes.js';
import { toOrderRecord } from './order-record.js';
import { subscriptionResult } from './subscription-result.js';
import type { PaymentRow } from './tables.js';

/** `row` is the payment as it stands after the change; `subscription`, the one it created or charged, if any. */
export async function recordPaymentEvent(tx: Tx, row: PaymentRow, event_type: EventType, now_ms: number, subscription?: SubscriptionRow): Promise<string> {
  const unit = new WriteUnit(engineOf(tx));
  const event_id = recordPaymentEventInto(unit, row, event_type, now_ms, subscription);
  await applyUnit(tx, unit);
  return event_id;
}

/** `recordPaymentEvent` as a statement added to a write unit. */
export function recordPaymentEventInto(unit: WriteUnit, row: PaymentRow, event_type: EventType, now_ms: number, subscription?: SubscriptionRow): string {
  // A captured sandbox payment of a dispute card is disputed a few seconds later (docs/contract.md §22).
  if (event_type === 'payment.succeeded' || event_type === 'payment.captured') sandboxDisputeDueInto(unit, row, now_ms);
  return recordEventInto(unit, paymentEvent(row, event_type, subscription), now_ms);
}

function paymentEvent(row: PaymentRow, event_type: EventType, subscription?: SubscriptionRow): NewEvent {
  return {
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    event_type,
    object_id: row.transaction_id,
    notify_url: row.notify_url,
    data: toOrderRecord(row, subscription ? new Map([[subscription.recurring_id, subscriptionResult(subscription)]]) : undefined),
  };
}
