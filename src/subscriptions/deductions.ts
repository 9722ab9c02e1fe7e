// Subscription deductions and dunning (docs/contract.md §16): every scheduled charge of a
// subscription is one job of the shared scheduler (src/scheduler), written in the
// transaction that makes it due (the first payment's approval, the previous deduction, the
// previous failed attempt) and run EXACTLY ONCE (`registerTx`): the charge, its payment row,
// ledger postings, event and the subscription's move commit with the job's done mark or
// not at all, so a crash mid-batch or a second process never charges a period twice.
//
// A deduction is a merchant-initiated charge of the vaulted card (no security code exists
// to send, none is needed), a new order `<first order_no>-R<n>` with n counting every
// attempt from 1 (so a retry is a new order too, and order numbers stay unique). A declined
// deduction is retried 1, 3 and 5 days after it was due (PastDue meanwhile); the third
// retry's failure ends the subscription (Inactived, `subscription.cancelled`).
// Reaching billing_cycle or contract_end ends it as Completed.
import { cardFacts, isExpired, maskPan } from '../cards/card.js';
import { newId } from '../crypto/ids.js';
import { insertRows } from '../db/prepared.js';
import type { Tx } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { postPaymentChange } from '../ledger/postings.js';
import { paymentColumns } from '../payments/reader.js';
import { enqueueJob, type Job } from '../scheduler/scheduler.js';
import type { Deps } from '../web/context.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { moveSubscription } from './engine.js';
import { deductionAmount, deductionTime, isScheduled, type Plan } from './schedule.js';
import type { SubscriptionEvent } from './states.js';
import type { SubscriptionRow } from './tables.js';

export const CHARGE_KIND = 'subscription.charge';
/** docs/contract.md §16: a failed deduction is retried this many days after it was due; then the subscription ends. */
export const RETRY_AFTER_DAYS: readonly number[] = [1, 3, 5];
const DAY_MS = 86_400_000;
/** Order numbers tried when a merchant has used `<order_no>-R<n>` for an order of its own (bounded, docs/style.md §9). */
const MAX_ORDER_NO_TRIES = 5;

export interface ChargePayload {
  recurring_id: string;
  /** The deduction (1 = the first after the first payment). */
  n: number;
  /** 0 for the deduction on its date, 1..3 for its retries. */
  k: number;
}

export function planOf(s: SubscriptionRow): Plan {
  return {
    interval: s.interval,
    interval_count: s.interval_count,
    first_payment_ms: Number(s.first_payment_at),
    contract_start: s.contract_start || undefined,
    contract_end: s.contract_end || undefined,
    billing_cycle: s.billing_cycle,
    promotion_cycle: s.promotion_cycle,
    amount_minor: Number(s.amount_minor),
    contract_amount_minor: Number(s.contract_amount_minor),
  };
}

/** When attempt k of deduction n is due: the deduction's date, or 1, 3, 5 days after it. */
export function attemptDue(plan: Plan, n: number, k: number): number {
  const at = deductionTime(plan, n);
  if (k === 0) return at;
  const days = RETRY_AFTER_DAYS[k - 1];
  if (days === undefined) throw new RangeError(`deduction retry ${k} does not exist (at most ${RETRY_AFTER_DAYS.length})`);
  return at + days * DAY_MS;
}

/** The job of attempt k of deduction n, written in the caller's transaction (deduplicated by its key). */
export function enqueueCharge(
  tx: Tx,
  s: Pick<SubscriptionRow, 'recurring_id' | 'account_id'>,
  n: number,
  k: number,
  due_at: number,
  now_ms: number,
): Promise<boolean> {
  const payload: ChargePayload = { recurring_id: s.recurring_id, n, k };
  return enqueueJob(tx, { kind: CHARGE_KIND, job_key: `sub:${s.recurring_id}:${n}:${k}`, account_id: s.account_id, due_at, payload }, now_ms);
}

export interface ChargeReport {
  outcome: 'stale' | 'charged' | 'failed' | 'ended';
  order_no?: string;
  result_code?: ResultCode;
}

/**
 * Runs attempt k of deduction n in `tx` (the scheduler's exactly-once transaction). Stale
 * jobs (the subscription was cancelled, or has moved on) do nothing. `now_ms` is the
 * business time of the run (a test clock's time when one moved).
 */
export async function runCharge(tx: Tx, deps: Pick<Deps, 'keyring' | 'processorFor'>, payload: ChargePayload, now_ms: number): Promise<ChargeReport> {
  const { recurring_id, n, k } = payload;
  const sub = await claimAttempt(tx, payload, now_ms);
  if (!sub) return { outcome: 'stale' };
  const plan = planOf(sub);
  const amount_minor = deductionAmount(plan, n);

  const account = await tx.selectFrom('accounts').selectAll().where('account_id', '=', sub.account_id).executeTakeFirstOrThrow();
  const card = await tx.selectFrom('cards').selectAll().where('card_id', '=', sub.card_id).executeTakeFirstOrThrow();
  const first = await paymentColumns(tx, sub.first_transaction_id, ['details']);
  const pan = deps.keyring.decrypt(card.pan_enc);
  const transaction_id = newId('payment', now_ms);

  const decision = await decide(deps, account as AccountRow, {
    transaction_id,
    amount_minor,
    currency: sub.currency,
    card: { pan, brand: card.brand, exp_month: card.exp_month, exp_year: card.exp_year },
    now_ms,
  });
  const paid = decision.result === '0000';
  const row = deductionPayment(sub, payload, {
    transaction_id,
    amount_minor,
    livemode: account.mode === 'live' ? 1 : 0,
    card_brand: card.brand,
    card_masked: maskPan(pan),
    first_details: first?.details ?? '',
    decision,
    now_ms,
  });
  const seq = await insertUnderFreeOrderNo(tx, sub, row);
  await postPaymentChange(tx, null, row, now_ms);

  const step = afterAttempt(plan, sub, { n, k, seq, paid, result: decision.result });
  // Each move sends its notifications with this deduction's order record (engine.ts). The
  // row is this transaction's since the claim: the compare-and-set cannot lose.
  const after = await moveSubscription(tx, sub, step.event, step.patch, now_ms, async () => row);
  if (!after) throw new Error(`subscription ${recurring_id} changed under its deduction`);
  if (step.next) await enqueueCharge(tx, sub, step.next.n, step.next.k, step.next.at, now_ms);
  return {
    outcome: after.status === 'Inactived' || after.status === 'Completed' ? 'ended' : paid ? 'charged' : 'failed',
    order_no: row.order_no,
    result_code: decision.result,
  };
}

/**
 * The compare-and-set that makes this attempt this run's: the subscription still charges
 * and still waits for exactly this attempt. On PostgreSQL the row stays locked until the
 * commit, so a cancel arriving meanwhile waits and then sees the outcome. Undefined when stale.
 */
function claimAttempt(tx: Tx, payload: ChargePayload, now_ms: number): Promise<SubscriptionRow | undefined> {
  return tx
    .updateTable('subscriptions')
    .set({ updated_at: now_ms })
    .where('recurring_id', '=', payload.recurring_id)
    .where('status', 'in', ['Active', 'PastDue'])
    .where('next_n', '=', payload.n)
    .where('retry_count', '=', payload.k)
    .returningAll()
    .executeTakeFirst();
}

/** The deduction's payment row (its order_no is given on insert): captured when paid, else declined. */
function deductionPayment(
  sub: SubscriptionRow,
  payload: ChargePayload,
  c: {
    transaction_id: string;
    amount_minor: number;
    livemode: number;
    card_brand: string;
    card_masked: string;
    first_details: string;
    decision: Decision;
    now_ms: number;
  },
): PaymentRow {
  const paid = c.decision.result === '0000';
  // The order record shows what the first payment kept (shopper, delivery), not its subscription request.
  const kept = JSON.parse(c.first_details || '{}') as Record<string, unknown>;
  delete kept.subscription;
  const details = {
    ...kept,
    recurring_id: payload.recurring_id,
    deduction: payload.n,
    retry: payload.k,
    merchant_initiated: true,
    reference_no: c.decision.reference,
  };
  return {
    transaction_id: c.transaction_id,
    merchant_id: sub.merchant_id,
    account_id: sub.account_id,
    order_no: '',
    kind: 'recurring',
    livemode: c.livemode,
    currency: sub.currency,
    amount_minor: c.amount_minor,
    authorised_minor: 0,
    captured_minor: paid ? c.amount_minor : 0,
    refunded_minor: 0,
    status: paid ? 'captured' : 'declined',
    capture_method: 'automatic',
    result_code: c.decision.result,
    card_id: sub.card_id,
    card_brand: c.card_brand,
    card_masked: c.card_masked,
    connector: c.decision.connector,
    is3ds: 0,
    threeds_result: '',
    risk_score: null,
    risk_action: '',
    risk_reasons: '[]',
    notify_url: sub.notify_url,
    return_url: '',
    // No merchant request made it: an authorise repeating this order_no is a duplicate (1011).
    request_hash: '',
    details: JSON.stringify(details),
    answer: '',
    created_at: c.now_ms,
    updated_at: c.now_ms,
    expires_at: null,
  };
}

/**
 * Inserts the deduction's payment under the next free order number `<first order_no>-R<seq>`
 * (a merchant may have used one for an order of its own); returns the seq it took.
 */
async function insertUnderFreeOrderNo(tx: Tx, sub: SubscriptionRow, row: PaymentRow): Promise<number> {
  let seq = sub.charge_seq;
  for (let tries = 0; ; tries++) {
    if (tries >= MAX_ORDER_NO_TRIES) throw new Error(`deduction of ${sub.recurring_id}: ${MAX_ORDER_NO_TRIES} order numbers in a row are taken`);
    seq++;
    row.order_no = `${sub.first_order_no}-R${seq}`;
    const r = await insertRows(tx, 'payments', [row], { ignoreConflictOn: ['account_id', 'order_no'] });
    if (Number(r.numAffectedRows ?? 0) === 1) return seq;
  }
}

/**
 * Where an attempt leaves the subscription (docs/contract.md §16): paid, on to the next
 * deduction or Completed at billing_cycle or contract_end; declined, retried after
 * RETRY_AFTER_DAYS, or ended once the retries are spent. `next` is the attempt to schedule.
 */
function afterAttempt(
  plan: Plan,
  sub: Pick<SubscriptionRow, 'charged_count'>,
  a: { n: number; k: number; seq: number; paid: boolean; result: ResultCode },
): { event: SubscriptionEvent; patch: Partial<SubscriptionRow>; next?: { n: number; k: number; at: number } } {
  const { n, k, seq } = a;
  if (a.paid) {
    const common = { charge_seq: seq, charged_count: sub.charged_count + 1, retry_count: 0 };
    if (isScheduled(plan, n + 1)) {
      const next_at = deductionTime(plan, n + 1);
      return { event: 'charge_succeeded', patch: { ...common, next_n: n + 1, next_at }, next: { n: n + 1, k: 0, at: next_at } };
    }
    const end_reason = plan.billing_cycle > 0 && n + 1 >= plan.billing_cycle ? 'billing_cycle reached' : 'contract_end reached';
    return { event: 'complete', patch: { ...common, next_at: null, end_reason } };
  }
  if (k < RETRY_AFTER_DAYS.length) {
    const next_at = attemptDue(plan, n, k + 1);
    return { event: 'charge_failed', patch: { charge_seq: seq, retry_count: k + 1, next_at }, next: { n, k: k + 1, at: next_at } };
  }
  const end_reason = `payment failed: ${resultText(a.result)} (retried ${RETRY_AFTER_DAYS.length} times)`;
  return { event: 'give_up', patch: { charge_seq: seq, retry_count: k + 1, next_at: null, end_reason } };
}

interface Decision {
  result: ResultCode;
  reference: string;
  connector: string;
}

/** The processor's answer to a merchant-initiated charge; an expired stored card or a live account without a processor never reaches one. */
async function decide(
  deps: Pick<Deps, 'processorFor'>,
  account: AccountRow,
  input: {
    transaction_id: string;
    amount_minor: number;
    currency: string;
    card: { pan: string; brand: string; exp_month: number; exp_year: number };
    now_ms: number;
  },
): Promise<Decision> {
  const processor = deps.processorFor(account);
  if (!processor) return { result: '1016', reference: '', connector: '' };
  // The charge runs inside the job's transaction, which an in-process processor allows; a
  // processor with outside effects needs the two-phase form (record the attempt, call,
  // record the result) that ARCHITECTURE.md describes for authorise.
  if (!processor.inline) throw new Error(`processor ${processor.name} is not inline: deductions through it need the two-phase form`);
  if (!cardFacts(input.card.pan).valid) return { result: '1010', reference: '', connector: processor.name };
  if (isExpired(input.card.exp_month, input.card.exp_year, input.now_ms)) return { result: '1005', reference: '', connector: processor.name };
  const outcome = await processor.authorise({
    transaction_id: input.transaction_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
    card: input.card,
    merchant_initiated: true,
  });
  if (outcome.kind === 'approved') return { result: '0000', reference: outcome.reference, connector: processor.name };
  if (outcome.kind === 'declined') return { result: outcome.code, reference: outcome.reference, connector: processor.name };
  // Not yet through a recorded attempt (docs/attempts.md lists what is): an open outcome is a processing error.
  if (outcome.kind === 'pending' || outcome.kind === 'unknown') return { result: '1007', reference: '', connector: processor.name };
  // A merchant-initiated charge has no shopper to authenticate: an issuer that still asks fails it.
  return { result: '1009', reference: outcome.reference, connector: processor.name };
}

/** The job handler's shape for the scheduler. */
export function chargeHandler(deps: Pick<Deps, 'keyring' | 'processorFor'>) {
  return async (tx: Tx, job: Job, ctx: { now_ms: number }) => {
    await runCharge(tx, deps, job.payload as ChargePayload, ctx.now_ms);
    return undefined;
  };
}
