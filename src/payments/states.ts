// The payment aggregate's one transition table (docs/style.md §4, docs/contract.md §6/§7). Every status
// write goes through the one mechanism (src/core/machine.ts): `applyTransition` below, or
// the refund reservation's guarded updates, each a compare-and-set on the current status,
// so two racing requests can never both win.
import { type Kysely, sql } from 'kysely';
import { allows, applyCounted, destination, type Machine, TransitionError, transitionUpdate } from '../core/machine.js';
import { param } from '../db/prepared.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { WriteUnit } from '../db/unit.js';
import type { PaymentRow, PaymentStatus } from './tables.js';

export type { PaymentStatus };

export const PAYMENT_STATUS_CODE: Readonly<Record<PaymentStatus, string>> = {
  pending: '1000',
  processing: '1100',
  authorised: '2000',
  review: '2100',
  captured: '3000',
  refunded: '4000',
  partially_refunded: '4100',
  cancelled: '5000',
  declined: '6000',
  expired: '7000',
};

/** `order_status` of the direct answer (docs/contract.md §6). */
export function orderStatusOf(status: PaymentStatus): '0' | '1' | '2' | '3' | '4' {
  switch (status) {
    case 'pending':
      return '2';
    case 'processing':
      return '4'; // docs/contract.md §20: pending at the processor
    case 'review':
      return '3';
    case 'declined':
    case 'expired':
    case 'cancelled':
      return '0';
    default:
      return '1';
  }
}

export type PaymentEvent =
  | 'authenticate_ok' // 3-D Secure challenge completed
  | 'authenticate_fail' // challenge failed or lapsed
  | 'review_accept'
  | 'review_reject'
  | 'review_expire'
  | 'capture'
  | 'cancel'
  | 'expire' // uncaptured authorisation lapsed after 7 days
  | 'refund_partial'
  | 'refund_full'
  | 'refund_reversed' // a pending refund failed: its amount is refundable again
  | 'checkout_pay' // the shopper chose how to pay on the hosted page (card outcome, or still waiting: 3-D Secure, issuer page)
  | 'issuer_approve' // the shopper paid on the issuer's page (APM)
  | 'issuer_decline' // the shopper or the issuer declined on the issuer's page (APM)
  | 'processor_send' // a hosted checkout's card payment is sent to the processor (its attempt recorded with it)
  | 'processor_answer' // the processor answered a payment sent to it (at once, or to the sweeper)
  | 'processor_void'; // still unknown past the void bound: cancelled at the processor, failed with 1007

/** From which statuses each event may fire, and where it leads. */
export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentEvent, { from: readonly PaymentStatus[]; to: readonly PaymentStatus[] }>> = {
  authenticate_ok: { from: ['pending'], to: ['authorised', 'captured', 'review', 'declined'] },
  authenticate_fail: { from: ['pending'], to: ['declined'] },
  review_accept: { from: ['review'], to: ['authorised', 'captured'] },
  review_reject: { from: ['review'], to: ['cancelled'] },
  review_expire: { from: ['review'], to: ['expired'] },
  // From `review`: a review's capture or cancel the processor confirmed later (src/review/service.ts).
  capture: { from: ['authorised', 'review'], to: ['captured'] },
  cancel: { from: ['authorised', 'pending', 'review'], to: ['cancelled'] },
  expire: { from: ['authorised', 'pending'], to: ['expired'] },
  refund_partial: { from: ['captured', 'partially_refunded'], to: ['partially_refunded'] },
  refund_full: { from: ['captured', 'partially_refunded'], to: ['refunded'] },
  refund_reversed: { from: ['partially_refunded', 'refunded'], to: ['captured', 'partially_refunded'] },
  checkout_pay: { from: ['pending'], to: ['pending', 'authorised', 'captured', 'review', 'declined'] },
  issuer_approve: { from: ['pending'], to: ['authorised', 'captured'] },
  issuer_decline: { from: ['pending'], to: ['declined'] },
  processor_send: { from: ['pending'], to: ['processing'] },
  processor_answer: { from: ['processing'], to: ['authorised', 'captured', 'review', 'declined', 'pending'] },
  processor_void: { from: ['processing'], to: ['declined'] },
};

/** The payment machine: the table above over `payments.status` (src/core/machine.ts applies it). */
export const PAYMENT_MACHINE: Machine<PaymentRow, PaymentStatus, PaymentEvent> = {
  noun: 'payment',
  table: 'payments' satisfies keyof DB,
  key: 'transaction_id',
  status: 'status',
  stamp: 'updated_at',
  events: PAYMENT_TRANSITIONS,
};

export { TransitionError };

export function canApply(event: PaymentEvent, from: PaymentStatus): boolean {
  return allows(PAYMENT_TRANSITIONS, event, from);
}

/**
 * A hosted-checkout session's state, derived from its payment in this one function
 * (src/checkout/states.ts has the session's table and says why it is not a column):
 * - `open`: pending and no method chosen (`card_brand` empty): the shopper may pay, pick a
 *   method or cancel, and the session's deadline may expire it;
 * - `claimed`: pending with a method chosen: the shopper is away at a 3-D Secure challenge
 *   or an issuer's page, whose end moves the payment on;
 * - `ended`: any other status: the payment's own answer stands.
 * Every write that needs the session open adds UNCLAIMED to its compare-and-set.
 */
export type CheckoutSessionState = 'open' | 'claimed' | 'ended';

export function checkoutSessionState(p: Pick<PaymentRow, 'status' | 'card_brand'>): CheckoutSessionState {
  if (p.status !== 'pending') return 'ended';
  return p.card_brand === '' ? 'open' : 'claimed';
}

/** The extra condition of a compare-and-set that must find a checkout session still open. */
export const UNCLAIMED = { card_brand: '' } as const satisfies Partial<PaymentRow>;

type Patch = Partial<Omit<PaymentRow, 'transaction_id' | 'status' | 'account_id' | 'merchant_id'>>;

/**
 * Moves one payment from `from` to `to` if, and only if, it is still in `from` (and, with
 * `unclaimed`, its checkout session still open). Returns false when another request changed
 * it first. Kept as the payments' own name for `applyCounted` (no RETURNING: authorise's
 * write plan calls it).
 */
export async function applyTransition(
  tx: Tx,
  transaction_id: string,
  event: PaymentEvent,
  from: PaymentStatus,
  to: PaymentStatus,
  patch: Patch,
  now_ms: number,
  opts: { unclaimed?: boolean } = {},
): Promise<boolean> {
  return applyCounted(tx, PAYMENT_MACHINE, transaction_id, event, from, patch, now_ms, { to, where: opts.unclaimed ? UNCLAIMED : undefined });
}

/**
 * `applyTransition` as a compare-and-set added to a write unit: where another request
 * changed the payment first, the unit fails with `lost()` and writes nothing.
 */
export function applyTransitionInto(
  unit: WriteUnit,
  transaction_id: string,
  event: PaymentEvent,
  from: PaymentStatus,
  to: PaymentStatus,
  patch: Patch,
  now_ms: number,
  lost: () => Error,
  opts: { unclaimed?: boolean } = {},
): void {
  const where = opts.unclaimed ? UNCLAIMED : undefined;
  unit.compareAndSet(transitionUpdate(unit.q as Kysely<unknown>, PAYMENT_MACHINE, transaction_id, event, from, patch, now_ms, { to, where }), lost);
}

/** What a processor's answer changes on a payment it was asked about (its other columns were written when it was sent). */
const ANSWERED_COLUMNS = ['result_code', 'authorised_minor', 'captured_minor', 'threeds_result', 'details', 'answer', 'expires_at'] as const;

/**
 * The `processor_answer` move of a payment sent to the processor (docs/attempts.md) as a
 * compare-and-set in `unit`, compiled once (it runs for every card payment a processor is
 * asked about): `row` is the payment as decided; another change first fails the unit with `lost()`.
 */
export function applyProcessorAnswerInto(unit: WriteUnit, row: PaymentRow, now_ms: number, lost: () => Error): void {
  const to = destination(PAYMENT_MACHINE.noun, PAYMENT_TRANSITIONS, 'processor_answer', 'processing', row.status);
  const values: Record<string, unknown> = { id: row.transaction_id, to, now: now_ms };
  for (const c of ANSWERED_COLUMNS) values[c] = row[c];
  unit.prepared(
    'update',
    'payments.processor_answer',
    (q) =>
      q
        .updateTable('payments')
        .set({ status: param('to'), updated_at: param('now'), ...Object.fromEntries(ANSWERED_COLUMNS.map((c) => [c, param(c)])) })
        .where('transaction_id', '=', param('id'))
        .where('status', '=', 'processing'),
    values,
    { rows: 1, error: lost },
  );
}

/** Raw SQL helper for atomic counters in a CAS: `col + n`. */
export const plus = (column: 'captured_minor' | 'refunded_minor' | 'authorised_minor', n: number) => sql<number>`${sql.ref(column)} + ${n}`;

/**
 * Reserves `n` minor units of a refund in one compare-and-set (docs/contract.md §4): the refunded
 * total can never pass the captured amount, whatever runs concurrently. The status follows
 * refund_partial or refund_full in the same statement. Returns the updated row, or
 * undefined when the payment is not refundable now (the caller re-reads to say why).
 */
export async function reserveRefund(tx: Tx, transaction_id: string, n: number, now_ms: number): Promise<PaymentRow | undefined> {
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error('a refund reserves a positive amount');
  const from = PAYMENT_TRANSITIONS.refund_partial.from;
  const full: PaymentStatus = 'refunded';
  const partial: PaymentStatus = 'partially_refunded';
  return tx
    .updateTable('payments')
    .set({
      refunded_minor: plus('refunded_minor', n),
      status: sql<PaymentStatus>`case when ${sql.ref('refunded_minor')} + ${n} = ${sql.ref('captured_minor')} then ${full} else ${partial} end`,
      updated_at: now_ms,
    })
    .where('transaction_id', '=', transaction_id)
    .where('status', 'in', [...from])
    .where(sql<boolean>`${sql.ref('refunded_minor')} + ${n} <= ${sql.ref('captured_minor')}`)
    .returningAll()
    .executeTakeFirst();
}

/** Gives back a reservation of a refund that failed later (refund_reversed), as one compare-and-set. */
export async function releaseRefund(tx: Tx, transaction_id: string, n: number, now_ms: number): Promise<PaymentRow | undefined> {
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error('a refund releases a positive amount');
  const captured: PaymentStatus = 'captured';
  const partial: PaymentStatus = 'partially_refunded';
  return tx
    .updateTable('payments')
    .set({
      refunded_minor: plus('refunded_minor', -n),
      status: sql<PaymentStatus>`case when ${sql.ref('refunded_minor')} = ${n} then ${captured} else ${partial} end`,
      updated_at: now_ms,
    })
    .where('transaction_id', '=', transaction_id)
    .where('status', 'in', [...PAYMENT_TRANSITIONS.refund_reversed.from])
    .where('refunded_minor', '>=', n)
    .returningAll()
    .executeTakeFirst();
}

/** docs/contract.md §7: a manual authorisation not captured within 7 days expires and its hold is released. */
export const MANUAL_CAPTURE_WINDOW_MS = 7 * 24 * 3600 * 1000;
