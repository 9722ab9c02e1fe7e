// Subscriptions (docs/contract.md §16): created in the transaction that approves their first
// payment (direct, hosted checkout, after a 3-D Secure challenge or a review), cancelled by
// the merchant (API, CLI), read into the answer and the order record. Creating one writes
// its first deduction's job; the deductions themselves are in deductions.ts.

import type { Kysely } from 'kysely';
import { Refused } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { paymentById } from '../payments/reader.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { formatDeductionTime, periodLabel } from '../payments/subscription-result.js';
import { amountField } from '../payments/validate.js';
import { invalid } from '../web/errors.js';
import { enqueueCharge } from './deductions.js';
import { moveSubscription } from './engine.js';
import { checkPlanFields, type Interval, nextDeduction, type Plan } from './schedule.js';
import type { SubscriptionRow } from './tables.js';

/** A payment's `subscription` request, as the acquiring interface states it. */
export type SubscriptionRequest = NonNullable<AuthoriseDirect['subscription']>;

/** The refusal of a contract_name another live subscription of the account holds (docs/contract.md §16). */
export function contractNameTaken(): Refused {
  return invalid('subscription.contract_name', 'is taken by a subscription of this account that is still active; cancel it or choose another name');
}

/** A subscription checked before its first payment is charged; written once the payment is approved. */
export interface Prepared {
  recurring_id: string;
  contract_name: string;
  contract: string;
  price_id: string;
  plan: Plan;
}

const whole = (v: string | number | undefined, fallback: number) => (v === undefined || v === '' ? fallback : Number(v));

/** A payment's subscription as the core takes it (docs/contract.md §16): the plan in numbers and an enum, its dates checked. */
export interface SubscriptionTerms {
  contract_name: string;
  contract: string;
  price_id: string;
  interval: Interval;
  interval_count: number;
  billing_cycle: number;
  promotion_cycle: number;
  /** `YYYY-MM-DD`, after the first payment's date. */
  contract_start?: string;
  contract_end?: string;
  /** What each deduction charges, in minor units; null: the payment's amount. */
  contract_amount_minor: number | null;
}

/**
 * A request's `subscription` object read as terms, its dates checked against the first
 * payment's time (400 naming the first bad field). The acquiring body, a checkout session's
 * request and a payment that waited (its details keep the object) are read the same way.
 */
export function subscriptionTermsOf(sub: SubscriptionRequest, currency: string, first_payment_ms: number): SubscriptionTerms {
  const contract_name = (sub.contract_name ?? '').trim();
  if (!contract_name) throw invalid('subscription.contract_name', 'is required: it names the subscription with recurring_id');
  if (!sub.interval) throw invalid('subscription.interval', 'is required: day, week, month or year');
  const contract_start = sub.contract_start || undefined;
  const contract_end = sub.contract_end || undefined;
  const { interval_count, billing_cycle, promotion_cycle } = sub;
  const problem = checkPlanFields({ interval: sub.interval, interval_count, billing_cycle, promotion_cycle, contract_start, contract_end }, first_payment_ms);
  if (problem) throw invalid(problem.field, problem.message);
  // The first payment is today's charge: a first deduction on its own date would charge twice at once.
  if (contract_start && contract_start <= new Date(first_payment_ms).toISOString().slice(0, 10)) {
    throw invalid('subscription.contract_start', 'must be after the date of the first payment (the first payment is this period’s charge)');
  }
  const contract_amount_minor = sub.contract_amount ? amountField('subscription.contract_amount', sub.contract_amount, currency) : null;
  if (contract_amount_minor !== null && contract_amount_minor <= 0) throw invalid('subscription.contract_amount', 'must be greater than zero');
  return {
    contract_name,
    contract: sub.contract ?? '',
    price_id: sub.price_id ?? '',
    interval: sub.interval as Interval,
    interval_count: whole(interval_count, 1),
    billing_cycle: whole(billing_cycle, 0),
    promotion_cycle: whole(promotion_cycle, 0),
    ...(contract_start ? { contract_start } : {}),
    ...(contract_end ? { contract_end } : {}),
    contract_amount_minor,
  };
}

/**
 * Prepares a payment's subscription before anything is charged: no subscription of the
 * account that still charges may hold its contract_name. Null when the payment has none.
 */
export async function prepareSubscription(
  db: Kysely<DB>,
  account_id: string,
  payment: { subscription: SubscriptionTerms | null; amount_minor: number },
  now_ms: number,
  opts: { taken?: 'refuse' | 'skip' } = {},
): Promise<Prepared | null> {
  const { subscription: terms, amount_minor } = payment;
  if (!terms) return null;
  const live = await db
    .selectFrom('subscriptions')
    .select('recurring_id')
    .where('account_id', '=', account_id)
    .where('contract_name', '=', terms.contract_name)
    .where('status', 'in', ['Active', 'PastDue'])
    .executeTakeFirst();
  if (live) {
    // A hosted checkout's shopper pays anyway (the merchant gets no recurring_id), as a payment that waited does.
    if (opts.taken === 'skip') return null;
    throw contractNameTaken();
  }
  return {
    recurring_id: newId('subscription'),
    contract_name: terms.contract_name,
    contract: terms.contract,
    price_id: terms.price_id,
    plan: {
      interval: terms.interval,
      interval_count: terms.interval_count,
      first_payment_ms: now_ms,
      contract_start: terms.contract_start,
      contract_end: terms.contract_end,
      billing_cycle: terms.billing_cycle,
      promotion_cycle: terms.promotion_cycle,
      amount_minor,
      contract_amount_minor: terms.contract_amount_minor ?? amount_minor,
    },
  };
}

/**
 * A payment that waited (3-D Secure challenge, risk review) and is now approved: the
 * `subscription` it kept in its details becomes the subscription, in the caller's
 * transaction, and the payment's details gain its recurring_id (for the order record).
 * Undefined when it has none, or when its contract_name was taken while it waited (the
 * payment stands; the merchant sees no recurring_id).
 */
export async function createForApproved(tx: Tx, payment: PaymentRow, now_ms: number): Promise<SubscriptionRow | undefined> {
  if (payment.status !== 'authorised' && payment.status !== 'captured') return undefined;
  const details = JSON.parse(payment.details || '{}') as Record<string, unknown>;
  if (!details.subscription || typeof details.recurring_id === 'string') return undefined;
  let prepared: Prepared | null;
  try {
    const subscription = subscriptionTermsOf(details.subscription as SubscriptionRequest, payment.currency, now_ms);
    prepared = await prepareSubscription(tx as unknown as Kysely<DB>, payment.account_id, { subscription, amount_minor: payment.amount_minor }, now_ms);
  } catch (e) {
    if (e instanceof Refused) return undefined;
    throw e;
  }
  if (!prepared) return undefined;
  const created = await createSubscription(tx, prepared, payment, now_ms);
  if (!created) return undefined; // the name was taken meanwhile: the payment stands without it
  details.recurring_id = created.recurring_id;
  await tx
    .updateTable('payments')
    .set({ details: JSON.stringify(details) })
    .where('transaction_id', '=', payment.transaction_id)
    .execute();
  payment.details = JSON.stringify(details);
  return created;
}

/** The answer's subscription fields for a prepared subscription whose first payment was approved. */
export function answerFields(p: Prepared | null): Record<'contract_name' | 'recurring_id' | 'recurring_deduction_period' | 'recurring_deduction_time', string> {
  if (!p) return { contract_name: '', recurring_id: '', recurring_deduction_period: '', recurring_deduction_time: '' };
  const next = nextDeduction(p.plan, p.plan.first_payment_ms);
  return {
    contract_name: p.contract_name,
    recurring_id: p.recurring_id,
    recurring_deduction_period: periodLabel(p.plan.interval, p.plan.interval_count),
    recurring_deduction_time: next ? formatDeductionTime(next.at_ms) : '',
  };
}

/** The same fields for a subscription as written (a first payment settled after its call: the sweeper, a webhook). */
export function answerFieldsOf(row: SubscriptionRow): ReturnType<typeof answerFields> {
  return {
    contract_name: row.contract_name,
    recurring_id: row.recurring_id,
    recurring_deduction_period: periodLabel(row.interval, row.interval_count),
    recurring_deduction_time: row.next_at === null ? '' : formatDeductionTime(Number(row.next_at)),
  };
}

/**
 * Writes the subscription in the transaction that approves its first payment. Undefined when
 * another first payment took its contract_name between the check and this write (the
 * partial unique index decides; nothing is written then).
 */
export async function createSubscription(tx: Tx, p: Prepared, payment: PaymentRow, now_ms: number): Promise<SubscriptionRow | undefined> {
  if (!payment.card_id) throw new Error('a subscription needs the vaulted card of its first payment');
  const next = nextDeduction(p.plan, p.plan.first_payment_ms);
  const row: SubscriptionRow = {
    recurring_id: p.recurring_id,
    merchant_id: payment.merchant_id,
    account_id: payment.account_id,
    contract_name: p.contract_name,
    contract: p.contract,
    price_id: p.price_id,
    first_transaction_id: payment.transaction_id,
    first_order_no: payment.order_no,
    first_payment_at: p.plan.first_payment_ms,
    card_id: payment.card_id,
    currency: payment.currency,
    amount_minor: p.plan.amount_minor,
    contract_amount_minor: p.plan.contract_amount_minor,
    interval: p.plan.interval,
    interval_count: p.plan.interval_count,
    billing_cycle: p.plan.billing_cycle,
    promotion_cycle: p.plan.promotion_cycle,
    contract_start: p.plan.contract_start ?? '',
    contract_end: p.plan.contract_end ?? '',
    status: next ? 'Active' : 'Completed',
    next_n: next ? next.n : 0,
    next_at: next ? next.at_ms : null,
    notify_url: payment.notify_url,
    charge_seq: 0,
    charged_count: 0,
    retry_count: 0,
    end_reason: next ? '' : 'no deduction left in the plan',
    created_at: now_ms,
    updated_at: now_ms,
  };
  const r = await tx
    .insertInto('subscriptions')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(r.numInsertedOrUpdatedRows ?? 0) !== 1) return undefined;
  // Its first deduction is due from the moment it exists: one job, committed with it.
  if (next) await enqueueCharge(tx, row, next.n, 0, next.at_ms, now_ms);
  return row;
}

export type CancelOutcome = { kind: 'cancelled' | 'already_ended'; row: SubscriptionRow } | { kind: 'not_found' };

/** Compare-and-set rounds a cancel takes at most while deductions move the subscription (bounded, docs/style.md §9). */
const CANCEL_TRIES = 5;

/**
 * `POST /v1/cancelsubscription` (docs/contract.md §16), the CLI and the portal: Inactived at once,
 * nothing prorated or refunded, `subscription.cancelled` to its notify_url in the same
 * transaction; an ended one answers success again (safe to retry). `contract_name` must
 * match when given (the API always gives it). Its pending deduction job finds it ended and
 * does nothing.
 */
export async function cancelSubscription(
  store: { transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> },
  account_id: string,
  recurring_id: string,
  contract_name: string | undefined,
  now_ms: number,
  reason = 'cancelled by the merchant',
): Promise<CancelOutcome> {
  return store.transaction(async (tx) => {
    for (let i = 0; i < CANCEL_TRIES; i++) {
      let q = tx.selectFrom('subscriptions').selectAll().where('recurring_id', '=', recurring_id).where('account_id', '=', account_id);
      if (contract_name !== undefined) q = q.where('contract_name', '=', contract_name);
      const row = await q.executeTakeFirst();
      if (!row) return { kind: 'not_found' } as const;
      if (row.status !== 'Active' && row.status !== 'PastDue') return { kind: 'already_ended', row } as const;
      const patch = { next_at: null, end_reason: reason };
      // A deduction that moved it meanwhile (Active ↔ PastDue) wins this round; read again.
      // The notification carries the first payment's order record, sent to the subscription's notify_url.
      const first = async () => {
        const p = await paymentById(tx, row.first_transaction_id);
        return p && { ...p, notify_url: row.notify_url };
      };
      const after = await moveSubscription(tx, row, 'cancel', patch, now_ms, first);
      if (!after) continue;
      return { kind: 'cancelled', row: after } as const;
    }
    throw new Error(`subscription ${recurring_id} kept changing under its cancel`);
  });
}
