// Writing an event: always inside the transaction (or write unit) of the change it reports
// (docs/contract.md §11), so a committed change always has its event and a rolled-back one never does.
import { newId } from '../crypto/ids.js';
import type { Store, Tx } from '../db/store.js';
import { applyUnit, engineOf, WriteUnit } from '../db/unit.js';
import { recordPlatformEventsInto } from './platform.js';

/** Every event type the gateway emits; a capability adds its own here. */
export const EVENT_TYPES = [
  'payment.succeeded',
  'payment.failed',
  'payment.pending',
  'payment.held',
  'payment.expired',
  'payment.captured',
  'payment.cancelled',
  'refund.succeeded',
  'refund.failed',
  'subscription.charged',
  'subscription.failed',
  'subscription.cancelled',
  'payout.completed',
  'payout.failed',
  'payout.cancelled',
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  'transfer.created',
  'transfer.reversed',
  'account.updated',
  'payment_intent.created',
  'payment_intent.cancelled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  merchant_id: string;
  account_id: string;
  event_type: EventType;
  object_id: string;
  notify_url: string;
  /** The record the matching query answer carries (docs/contract.md §11). */
  data: Record<string, unknown>;
}

export async function recordEvent(tx: Tx, event: NewEvent, now_ms: number): Promise<string> {
  const unit = new WriteUnit(engineOf(tx));
  const event_id = recordEventInto(unit, event, now_ms);
  await applyUnit(tx, unit);
  return event_id;
}

/** `recordEvent` as a statement added to `unit`; returns the event's id. */
export function recordEventInto(unit: WriteUnit, event: NewEvent, now_ms: number): string {
  const event_id = newId('event', now_ms);
  const payload = JSON.stringify({
    event_id,
    event_type: event.event_type,
    created_at: new Date(now_ms).toISOString(),
    data: event.data,
  });
  unit.insertRows('events', [
    {
      event_id,
      merchant_id: event.merchant_id,
      account_id: event.account_id,
      event_type: event.event_type,
      object_id: event.object_id,
      notify_url: event.notify_url,
      payload,
      status: event.notify_url ? 'pending' : 'no_target',
      attempts: 0,
      next_attempt_at: now_ms,
      lease_until: 0,
      lease_token: null,
      delivered_at: null,
      last_error: '',
      created_at: now_ms,
      updated_at: now_ms,
    },
  ]);
  // The same change told in the platform family's event types, with their webhook endpoint deliveries (platform.ts).
  recordPlatformEventsInto(
    unit,
    { event_id, merchant_id: event.merchant_id, account_id: event.account_id, event_type: event.event_type, object_id: event.object_id },
    now_ms,
  );
  return event_id;
}

/** The outbox's backlog for the metrics: events still to be delivered, and when the oldest was made. */
export async function notificationBacklog(store: Store): Promise<{ pending: number; oldest_created_ms: number | null }> {
  const row = await store.db
    .selectFrom('events')
    .select((eb) => [eb.fn.countAll<string | number>().as('pending'), eb.fn.min<string | number | null>('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return { pending: Number(row?.pending ?? 0), oldest_created_ms: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest) };
}
