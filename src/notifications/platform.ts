// The platform family's events (docs/contract.md §24; issue 33 item 5): each outbox event is also
// told as zero or more of the family's event types, and each of those is owed to every webhook
// endpoint of the account and mode that subscribes to it. Both are written by `recordEventInto`
// in the outbox event's own write unit (insert-selects, so nothing is read while the unit is
// built): a committed change has its platform events and their deliveries, a rolled-back one
// none. The delivery worker (worker.ts) sends them beside the notify_url deliveries.
import { createHmac } from 'node:crypto';
import { type ExpressionBuilder, sql } from 'kysely';
import { newId } from '../crypto/ids.js';
import { param } from '../db/prepared.js';
import type { DB } from '../db/schema.js';
import type { PaymentStatus } from '../db/tables/payments.js';
import type { WriteUnit } from '../db/unit.js';
import type { EventType } from './outbox.js';

/**
 * One family event type a gateway event is told as. `intent`: only for a payment a PaymentIntent's
 * confirm made (src/generic/payment-intents.ts links them before the event is written), and
 * then only while the payment is in one of these statuses (the outbox event `payment.succeeded`
 * is both an authorisation and a capture).
 */
export interface PlatformType {
  type: string;
  intent?: readonly PaymentStatus[];
}

const always = (...types: string[]): PlatformType[] => types.map((type) => ({ type }));
const ofIntent = (type: string, ...statuses: PaymentStatus[]): PlatformType => ({ type, intent: statuses });
const CAPTURED: PaymentStatus[] = ['captured', 'partially_refunded', 'refunded'];

/**
 * The family's event types each gateway event is told as, in order. A cancelled or expired
 * authorisation is the family's `charge.expired` (an uncaptured charge released); a refund is
 * `refund.created` (the refund object) and `charge.refunded` (the charge object). A payment of a
 * PaymentIntent is also told as the intent's event; the intent's own creation and a cancel that
 * releases no payment are events of their own. Subscriptions have no platform event yet.
 */
export const PLATFORM_TYPES: Readonly<Record<EventType, readonly PlatformType[]>> = {
  'payment.succeeded': [
    ...always('charge.succeeded'),
    ofIntent('payment_intent.succeeded', ...CAPTURED),
    ofIntent('payment_intent.amount_capturable_updated', 'authorised'),
  ],
  'payment.failed': [...always('charge.failed'), ofIntent('payment_intent.payment_failed', 'declined')],
  'payment.pending': [...always('charge.pending'), ofIntent('payment_intent.requires_action', 'pending')],
  'payment.held': [ofIntent('payment_intent.processing', 'review')],
  'payment.expired': [...always('charge.expired'), ofIntent('payment_intent.canceled', 'expired')],
  'payment.captured': [...always('charge.captured'), ofIntent('payment_intent.succeeded', ...CAPTURED)],
  'payment.cancelled': [...always('charge.expired'), ofIntent('payment_intent.canceled', 'cancelled')],
  'refund.succeeded': always('refund.created', 'charge.refunded'),
  'refund.failed': always('refund.failed'),
  'subscription.charged': [],
  'subscription.failed': [],
  'subscription.cancelled': [],
  'payout.completed': always('payout.paid'),
  'payout.failed': always('payout.failed'),
  'payout.cancelled': always('payout.canceled'),
  'dispute.created': always('charge.dispute.created'),
  'dispute.updated': always('charge.dispute.updated'),
  'dispute.closed': always('charge.dispute.closed'),
  'transfer.created': always('transfer.created'),
  'transfer.reversed': always('transfer.reversed'),
  'account.updated': always('account.updated'),
  // A PaymentIntent's own changes (src/generic/payment-intents.ts): made, and cancelled with no payment to release.
  'payment_intent.created': always('payment_intent.created'),
  'payment_intent.cancelled': always('payment_intent.canceled'),
};

/** Every platform type the gateway emits (an endpoint may subscribe to any type the family publishes). */
export const EMITTED_PLATFORM_TYPES: readonly string[] = [...new Set(Object.values(PLATFORM_TYPES).flatMap((ts) => ts.map((t) => t.type)))].sort();

export interface PlatformEventSource {
  /** The outbox event reported. */
  event_id: string;
  merchant_id: string;
  account_id: string;
  event_type: EventType;
  object_id: string;
}

/**
 * Adds to `unit` the platform events of one outbox event and one delivery per subscribed
 * endpoint (enabled, not deleted, of the account and its mode); returns the platform events' ids.
 * The mode is the account's (`accounts.mode`), read by the insert itself.
 */
export function recordPlatformEventsInto(unit: WriteUnit, source: PlatformEventSource, now_ms: number): string[] {
  const ids: string[] = [];
  for (const { type, intent } of PLATFORM_TYPES[source.event_type]) {
    const id = newId('event', now_ms);
    // An intent's event: only when the payment (written before the event, in this unit) is a PaymentIntent's, in those statuses.
    const ofIntentPayment = <Q extends { where: (...a: any[]) => any }>(query: Q): Q =>
      intent === undefined
        ? query
        : query.where((eb: ExpressionBuilder<DB, any>) =>
            eb.exists(
              eb
                .selectFrom('payment_intent_charges as pic')
                .innerJoin('payments as pay', 'pay.transaction_id', 'pic.transaction_id')
                .select('pic.transaction_id')
                .where('pic.transaction_id', '=', param('object_id'))
                .where('pay.status', 'in', intent),
            ),
          );
    ids.push(id);
    recordPlatformEventInto(unit, source, id, type, intent, ofIntentPayment, now_ms);
    fanOutInto(unit, source, id, type, intent, ofIntentPayment, now_ms);
  }
  return ids;
}

type IntentFilter = <Q extends { where: (...a: any[]) => any }>(query: Q) => Q;

/** The platform event's row, its mode the account's (read by the insert itself). */
function recordPlatformEventInto(
  unit: WriteUnit,
  source: PlatformEventSource,
  id: string,
  type: string,
  intent: readonly PaymentStatus[] | undefined,
  ofIntentPayment: IntentFilter,
  now_ms: number,
): void {
  unit.prepared(
    'insert',
    `platform_events.record${intent ? `.${type}` : ''}`,
    (q) =>
      q
        .insertInto('platform_events')
        .columns(['id', 'event_id', 'account_id', 'livemode', 'type', 'object_id', 'data_object', 'created_at'])
        .expression(
          ofIntentPayment(q.selectFrom('accounts'))
            .select([
              sql<string>`cast(${param('id')} as text)`.as('id'),
              sql<string>`cast(${param('event_id')} as text)`.as('event_id'),
              'accounts.account_id',
              sql<number>`case when accounts.mode = 'live' then 1 else 0 end`.as('livemode'),
              sql<string>`cast(${param('type')} as text)`.as('type'),
              sql<string>`cast(${param('object_id')} as text)`.as('object_id'),
              sql<null>`cast(null as text)`.as('data_object'),
              sql<number>`cast(${param('now')} as bigint)`.as('created_at'),
            ])
            .where('accounts.account_id', '=', param('account_id')),
        ),
    { id, event_id: source.event_id, type, object_id: source.object_id, now: now_ms, account_id: source.account_id },
  );
}

/** One delivery of the platform event per endpoint of the account and its mode that is enabled and subscribes to `type`. */
function fanOutInto(
  unit: WriteUnit,
  source: PlatformEventSource,
  id: string,
  type: string,
  intent: readonly PaymentStatus[] | undefined,
  ofIntentPayment: IntentFilter,
  now_ms: number,
): void {
  unit.prepared(
    'insert',
    `webhook_deliveries.fan_out${intent ? `.${type}` : ''}`,
    (q) =>
      q
        .insertInto('webhook_deliveries')
        .columns([
          'platform_event_id',
          'endpoint_id',
          'merchant_id',
          'account_id',
          'status',
          'attempts',
          'next_attempt_at',
          'lease_until',
          'lease_token',
          'delivered_at',
          'last_error',
          'created_at',
          'updated_at',
        ])
        .expression(
          ofIntentPayment(q.selectFrom('webhook_endpoints as e'))
            .innerJoin('accounts as a', 'a.account_id', 'e.account_id')
            .select([
              sql<string>`cast(${param('id')} as text)`.as('platform_event_id'),
              'e.id as endpoint_id',
              sql<string>`cast(${param('merchant_id')} as text)`.as('merchant_id'),
              'e.account_id',
              sql<string>`cast('pending' as text)`.as('status'),
              sql<number>`cast(0 as integer)`.as('attempts'),
              sql<number>`cast(${param('now')} as bigint)`.as('next_attempt_at'),
              sql<number>`cast(0 as bigint)`.as('lease_until'),
              sql<null>`cast(null as text)`.as('lease_token'),
              sql<null>`cast(null as bigint)`.as('delivered_at'),
              sql<string>`cast('' as text)`.as('last_error'),
              sql<number>`cast(${param('now')} as bigint)`.as('created_at'),
              sql<number>`cast(${param('now')} as bigint)`.as('updated_at'),
            ])
            .where('e.account_id', '=', param('account_id'))
            .where('e.deleted', '=', 0)
            .where('e.disabled', '=', 0)
            .where(sql<boolean>`e.livemode = case when a.mode = 'live' then 1 else 0 end`)
            .where((eb) =>
              eb.exists(
                eb
                  .selectFrom('webhook_endpoint_events as s')
                  .select('s.endpoint_id')
                  .whereRef('s.endpoint_id', '=', 'e.id')
                  .where('s.event_type', 'in', ['*', param('type')]),
              ),
            ),
        ),
    { id, merchant_id: source.merchant_id, now: now_ms, account_id: source.account_id, type, object_id: source.object_id },
  );
}

/**
 * The family's `Stripe-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`,
 * keyed with the whole `whsec_` secret as text, so the family's `webhooks.constructEvent` verifies it.
 */
export function stripeSignature(secret: string, timestamp_s: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp_s}.${body}`, 'utf8').digest('hex');
  return `t=${timestamp_s},v1=${mac}`;
}
