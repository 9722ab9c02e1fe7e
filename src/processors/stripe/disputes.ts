// Stripe's `charge.dispute.*` events (spec3.json's `dispute` object; docs/processors.md "Stripe",
// Disputes) read as dispute notices. Every event carries the whole dispute, so any of them
// opens a dispute Tollgate has not seen yet (an inquiry while Stripe's status is `warning_…`,
// else a chargeback) and then moves it by the status it reports: a reordered delivery ends
// where Stripe's dispute is. The dispute's processor_ref is its id (`dp_…`); the payment is
// named by the PaymentIntent our connector created (its reference), else by the charge.
import type { DisputeAction, DisputeNotification } from '../dispute-notices.js';
import type { EventLike } from './outcomes.js';

interface DisputeLike {
  object?: unknown;
  id?: unknown;
  amount?: unknown;
  currency?: unknown;
  reason?: unknown;
  status?: unknown;
  payment_intent?: unknown;
  charge?: unknown;
  evidence_details?: { due_by?: unknown } | null;
}

/** Stripe's dispute status → the move it reports (docs/processors.md). */
export const STRIPE_DISPUTE_STATUS: Readonly<Record<string, DisputeAction>> = {
  warning_needs_response: 'open',
  warning_under_review: 'submit',
  // An inquiry Stripe closed without a chargeback: no money moved.
  warning_closed: 'win_inquiry',
  needs_response: 'escalate',
  under_review: 'submit',
  won: 'win',
  lost: 'lose',
  // The merchant refunded the disputed charge: the dispute closes lost to the cardholder.
  charge_refunded: 'lose',
};

/** The family's reason words, as Stripe sends them (`general` for anything else). */
const REASONS = new Set([
  'bank_cannot_process',
  'check_returned',
  'credit_not_processed',
  'customer_initiated',
  'debit_not_authorized',
  'duplicate',
  'fraudulent',
  'general',
  'incorrect_account_details',
  'insufficient_funds',
  'product_not_received',
  'product_unacceptable',
  'subscription_canceled',
  'unrecognized',
]);

const idOf = (v: unknown): string =>
  typeof v === 'string' ? v.slice(0, 100) : typeof (v as { id?: unknown })?.id === 'string' ? String((v as { id: string }).id).slice(0, 100) : '';

/** The dispute notice of one verified event, or undefined when it is not a `charge.dispute.*` event. */
export function disputeNoticeOfEvent(ev: EventLike): DisputeNotification | undefined {
  if (typeof ev.type !== 'string' || !ev.type.startsWith('charge.dispute.') || typeof ev.id !== 'string') return undefined;
  const d = ev.data?.object as DisputeLike | undefined;
  if (d?.object !== 'dispute' || typeof d.id !== 'string') return undefined;
  const status = typeof d.status === 'string' ? d.status : '';
  const action: DisputeAction =
    ev.type === 'charge.dispute.funds_withdrawn'
      ? 'escalate'
      : ev.type === 'charge.dispute.funds_reinstated'
        ? 'note'
        : (STRIPE_DISPUTE_STATUS[status] ?? 'note');
  const due = d.evidence_details?.due_by;
  const payment_ref = idOf(d.payment_intent) || idOf(d.charge);
  return {
    id: `dispute:${ev.id.slice(0, 100)}`,
    event: ev.type,
    action,
    opens: status.startsWith('warning_') ? 'inquiry' : 'chargeback',
    processor_ref: d.id.slice(0, 100),
    ...(payment_ref ? { payment_ref } : {}),
    ...(Number.isSafeInteger(d.amount) && (d.amount as number) > 0 ? { amount_minor: d.amount as number } : {}),
    ...(typeof d.currency === 'string' ? { currency: d.currency.toUpperCase() } : {}),
    reason: typeof d.reason === 'string' && REASONS.has(d.reason) ? d.reason : 'general',
    ...(typeof due === 'number' && Number.isFinite(due) ? { evidence_due_by: due * 1000 } : {}),
    occurred_at: typeof ev.created === 'number' ? ev.created * 1000 : 0,
    raw: JSON.stringify({ id: ev.id, type: ev.type, created: ev.created, data: { object: d } }).slice(0, 8_000),
  };
}
