// What Stripe's answers mean to the gateway (docs/processors.md, "Stripe"): a PaymentIntent's
// status, a Refund's status and a card error's decline code read into the outcomes of
// types.ts, and Stripe's events read into ProcessorNotifications. Pure: the connector and the
// contract tests (on the vendor's own example objects) share them.
import type { AuthoriseOutcome, DeclineCode, OperationOutcome, ProcessorNotification } from '../types.js';

/**
 * Stripe's decline reasons onto our result codes (docs/processors.md publishes this table):
 * the card error's `decline_code` when it has one, else its `code`. Anything not listed is
 * `1002` (card declined): Stripe adds decline codes over time, and a decline is a decline.
 */
export const STRIPE_DECLINES: Readonly<Record<string, DeclineCode>> = {
  insufficient_funds: '1001',
  withdrawal_count_limit_exceeded: '1001',
  card_velocity_exceeded: '1001',
  generic_decline: '1002',
  card_declined: '1002',
  do_not_honor: '1002',
  fraudulent: '1002',
  card_not_supported: '1002',
  incorrect_number: '1002',
  invalid_number: '1002',
  lost_card: '1003',
  stolen_card: '1004',
  pickup_card: '1004',
  expired_card: '1005',
  invalid_expiry_month: '1005',
  invalid_expiry_year: '1005',
  incorrect_cvc: '1006',
  invalid_cvc: '1006',
  processing_error: '1007',
  issuer_not_available: '1007',
  try_again_later: '1007',
  reenter_transaction: '1007',
};

export function declineCode(error: { decline_code?: unknown; code?: unknown } | null | undefined): DeclineCode {
  const dc = typeof error?.decline_code === 'string' ? STRIPE_DECLINES[error.decline_code] : undefined;
  const c = typeof error?.code === 'string' ? STRIPE_DECLINES[error.code] : undefined;
  return dc ?? c ?? '1002';
}

/** The fields of a PaymentIntent this connector reads (the rest is ignored). */
export interface IntentLike {
  id?: unknown;
  object?: unknown;
  status?: unknown;
  capture_method?: unknown;
  metadata?: unknown;
  last_payment_error?: { decline_code?: unknown; code?: unknown; message?: unknown } | null;
  next_action?: { type?: unknown; redirect_to_url?: { url?: unknown } | null } | null;
}

/** The fields of a Refund this connector reads. */
export interface RefundLike {
  id?: unknown;
  object?: unknown;
  status?: unknown;
  failure_reason?: unknown;
  metadata?: unknown;
  payment_intent?: unknown;
}

type Unknown = { kind: 'unknown'; reason: string };

const isIntent = (x: unknown): x is IntentLike & { id: string; status: string } =>
  !!x &&
  typeof x === 'object' &&
  (x as IntentLike).object === 'payment_intent' &&
  typeof (x as IntentLike).id === 'string' &&
  typeof (x as IntentLike).status === 'string';
const isRefund = (x: unknown): x is RefundLike & { id: string; status: string } =>
  !!x &&
  typeof x === 'object' &&
  (x as RefundLike).object === 'refund' &&
  typeof (x as RefundLike).id === 'string' &&
  typeof (x as RefundLike).status === 'string';

export function metadataOf(x: { metadata?: unknown }): Record<string, string> {
  const m = x.metadata;
  if (!m || typeof m !== 'object') return {};
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * A PaymentIntent's status as the answer to an authorisation. `requires_action` is Stripe
 * running 3-D Secure with the shopper: `challenge_required` with the redirect
 * (`next_action.redirect_to_url`, present when the gateway gave a `return_url`); any other
 * action cannot be followed here and is declined `1007` (never a bare `challenge_required`,
 * which would make the gateway run its own challenge). A decline after authentication
 * failed (`payment_intent_authentication_failure`) is the shopper failing it (`1009`).
 * `canceled`: it holds nothing (our void, or Stripe's expiry): declined 1007.
 */
export function authoriseOfIntent(pi: unknown): AuthoriseOutcome | Unknown {
  if (!isIntent(pi)) return { kind: 'unknown', reason: 'Stripe answered without a readable PaymentIntent' };
  switch (pi.status) {
    case 'succeeded':
    case 'requires_capture':
      return { kind: 'approved', reference: pi.id };
    case 'processing':
      return { kind: 'pending', reference: pi.id };
    case 'requires_action': {
      const url = pi.next_action?.type === 'redirect_to_url' ? pi.next_action.redirect_to_url?.url : undefined;
      return typeof url === 'string' && /^https?:\/\//.test(url)
        ? { kind: 'challenge_required', reference: pi.id, action: { url, method: 'GET', data: {} } }
        : { kind: 'declined', code: '1007', reference: pi.id };
    }
    case 'requires_payment_method': {
      const code = declineCode(pi.last_payment_error);
      return pi.last_payment_error?.code === 'payment_intent_authentication_failure'
        ? { kind: 'declined', code, reference: pi.id, authentication_failed: true }
        : { kind: 'declined', code, reference: pi.id };
    }
    case 'canceled':
      return { kind: 'declined', code: '1007', reference: pi.id };
    default:
      return { kind: 'unknown', reason: `the PaymentIntent is ${String(pi.status).slice(0, 40)}` };
  }
}

/** A PaymentIntent as the answer to a capture: captured (`succeeded`), or not (what it is instead). */
export function captureOfIntent(pi: unknown): OperationOutcome {
  if (!isIntent(pi)) return { kind: 'unknown', reason: 'Stripe answered without a readable PaymentIntent' };
  if (pi.status === 'succeeded') return { kind: 'approved', reference: pi.id };
  if (pi.status === 'processing') return { kind: 'pending', reference: pi.id };
  if (pi.status === 'canceled') return { kind: 'declined', code: '1007', reason: 'the PaymentIntent is canceled', reference: pi.id };
  return { kind: 'unknown', reason: `the PaymentIntent is ${String(pi.status).slice(0, 40)} after the capture` };
}

/** A PaymentIntent as the answer to a cancel. */
export function cancelOfIntent(pi: unknown): OperationOutcome {
  if (!isIntent(pi)) return { kind: 'unknown', reason: 'Stripe answered without a readable PaymentIntent' };
  if (pi.status === 'canceled') return { kind: 'approved', reference: pi.id };
  if (pi.status === 'succeeded') return { kind: 'declined', code: '1007', reason: 'the PaymentIntent is captured already', reference: pi.id };
  return { kind: 'unknown', reason: `the PaymentIntent is ${String(pi.status).slice(0, 40)} after the cancel` };
}

/** A Refund's status: `succeeded` approved, `pending` / `requires_action` pending (its webhook decides), `failed` / `canceled` declined 1007. */
export function refundOutcome(r: unknown): OperationOutcome {
  if (!isRefund(r)) return { kind: 'unknown', reason: 'Stripe answered without a readable Refund' };
  switch (r.status) {
    case 'succeeded':
      return { kind: 'approved', reference: r.id };
    case 'pending':
    case 'requires_action':
      return { kind: 'pending', reference: r.id };
    case 'failed':
    case 'canceled':
      return {
        kind: 'declined',
        code: '1007',
        reason: `refund ${r.status}${typeof r.failure_reason === 'string' ? `: ${r.failure_reason.slice(0, 60)}` : ''}`,
        reference: r.id,
      };
    default:
      return { kind: 'unknown', reason: `the refund is ${String(r.status).slice(0, 40)}` };
  }
}

/** The fields of an Event this connector reads. */
export interface EventLike {
  id?: unknown;
  type?: unknown;
  created?: unknown;
  data?: { object?: unknown } | null;
}

/**
 * An event's notifications (docs/contract.md §20). The id is the event id (with `:n` when one
 * event reports several refunds), so a repeat is the same notification. An event Tollgate
 * does not act on gives none: it is acknowledged and changes nothing (charge.dispute.* events are
 * read by src/processors/stripe/disputes.ts into dispute notices).
 */
export function notificationsOfEvent(ev: EventLike): ProcessorNotification[] {
  if (typeof ev.id !== 'string' || typeof ev.type !== 'string') return [];
  const occurred_at = typeof ev.created === 'number' ? ev.created * 1000 : 0;
  const obj = ev.data?.object;
  const base = { id: ev.id, occurred_at };
  switch (ev.type) {
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.payment_failed':
    case 'payment_intent.succeeded':
    case 'payment_intent.canceled':
      return isIntent(obj) ? intentNotifications(base, ev.type, obj) : [];
    case 'charge.captured': {
      const c = obj as { object?: unknown; payment_intent?: unknown; metadata?: unknown } | undefined;
      if (c?.object !== 'charge' || typeof c.payment_intent !== 'string') return [];
      const tx = metadataOf(c).transaction_id;
      return tx
        ? [{ ...base, operation: 'capture', object_id: tx, reference: c.payment_intent, outcome: { kind: 'approved', reference: c.payment_intent } }]
        : [];
    }
    case 'charge.refunded': {
      // Older API versions embed the charge's refunds; newer ones send refund.updated for each.
      const list = (obj as { refunds?: { data?: unknown } } | undefined)?.refunds?.data;
      const refunds = Array.isArray(list) ? list.filter(isRefund).slice(0, 100) : [];
      return refunds.flatMap((r, i) => refundNotification({ id: refunds.length > 1 ? `${ev.id}:${i}` : (ev.id as string), occurred_at }, r));
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated':
      return isRefund(obj) ? refundNotification(base, obj) : [];
    default:
      return [];
  }
}

function intentNotifications(
  base: { id: string; occurred_at: number },
  type: string,
  pi: IntentLike & { id: string; status: string },
): ProcessorNotification[] {
  const meta = metadataOf(pi);
  const tx = meta.transaction_id;
  if (!tx) return [];
  const authorise = (outcome: ProcessorNotification['outcome']): ProcessorNotification[] => [
    { ...base, operation: 'authorise', ...(meta.attempt_id ? { attempt_id: meta.attempt_id } : {}), object_id: tx, reference: pi.id, outcome },
  ];
  const operation = (op: 'capture' | 'cancel'): ProcessorNotification[] => [
    { ...base, operation: op, object_id: tx, reference: pi.id, outcome: { kind: 'approved', reference: pi.id } },
  ];
  if (type === 'payment_intent.canceled') return operation('cancel');
  // A manual payment succeeds when it is captured; an automatic one when it is authorised and captured at once.
  if (type === 'payment_intent.succeeded') return pi.capture_method === 'manual' ? operation('capture') : authorise(authoriseOfIntent(pi) as AuthoriseOutcome);
  const outcome = authoriseOfIntent(pi);
  return outcome.kind === 'unknown' ? [] : authorise(outcome);
}

function refundNotification(base: { id: string; occurred_at: number }, r: RefundLike & { id: string; status: string }): ProcessorNotification[] {
  const meta = metadataOf(r);
  if (!meta.refund_id) return [];
  const outcome = refundOutcome(r);
  if (outcome.kind === 'unknown') return [];
  return [{ ...base, operation: 'refund', ...(meta.attempt_id ? { attempt_id: meta.attempt_id } : {}), object_id: meta.refund_id, reference: r.id, outcome }];
}
