// Subscription deductions and dunning (docs/contract.md §16): every scheduled charge of a
// subscription is one job of the shared scheduler (src/scheduler), written in the
// transaction that makes it due (the first payment's approval, the previous deduction, the
// previous failed attempt). The charge is a processor attempt (docs/contract.md §20): its
// payment is recorded `processing` with the attempt, which holds the deduction's claim,
// before the call; the answer moves the payment, its postings, the subscription and its
// notification together (`settleDeduction`). The job runs at least once: a run after a
// crash asks the processor again with the attempt it recorded, so a crash mid-batch or a
// second process never charges a period twice.
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
import { applyUnit, WriteUnit } from '../db/unit.js';
import { postPaymentChange } from '../ledger/postings.js';
import { paymentById, paymentColumns } from '../payments/reader.js';
import { applyTransition } from '../payments/states.js';
import {
  type AttemptEvent,
  type AttemptStatus,
  callWithDeadline,
  newAttempt,
  OPEN_ATTEMPT,
  type ProcessorAttemptRow,
  settleAttemptInto,
} from '../processors/attempts.js';
import type { AuthoriseInput, AuthoriseOutcome, Processor } from '../processors/types.js';
import { enqueueJob, type Job } from '../scheduler/scheduler.js';
import type { Deps } from '../web/context.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { isLive, moveSubscription } from './engine.js';
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
  /** `pending`: at the processor, whose answer the sweeper settles. */
  outcome: 'stale' | 'charged' | 'failed' | 'ended' | 'pending';
  order_no?: string;
  result_code?: ResultCode;
}

/**
 * Runs attempt k of deduction n (docs/contract.md §16, §20). Stale jobs (the subscription
 * was cancelled, or has moved on) do nothing. A charge decided without the processor (an
 * invalid or expired card, no processor) is recorded in one transaction. Otherwise the
 * payment is written `processing` with its processor attempt (the attempt holds the
 * deduction's claim, `deduction:<recurring_id>:<n>:<k>`) and committed, the processor is
 * called outside any transaction, and its answer settled by `settleDeduction`, which the
 * sweeper also uses for an answer it hears later. The job is at least once: a run after a
 * crash finds the attempt it recorded and asks again with the same attempt id (the
 * processor's idempotency key), so a period is never charged twice. `now_ms` is the
 * business time of the run (a test clock's time when one moved).
 */
export async function runCharge(deps: ChargeDeps, payload: ChargePayload, now_ms: number): Promise<ChargeReport> {
  const { store } = deps;
  const prepared = await store.transaction((tx) => prepareCharge(tx, deps, payload, now_ms));
  if (prepared.kind !== 'send') return prepared.report;
  const { attempt, payment, input, processor } = prepared;
  const outcome = await callWithDeadline(
    attempt,
    () => now_ms + (deps.now() - prepared.wall_ms),
    (call) => processor.authorise(input, call),
  );
  if (outcome.kind === 'pending' || outcome.kind === 'unknown') {
    // The sweeper asks again (src/attempts/sweeper.ts); the subscription waits for that answer.
    const error = outcome.kind === 'unknown' ? outcome.reason : '';
    const unit = settleAttemptInto(
      new WriteUnit(store.engine),
      attempt,
      'answer',
      { status: outcome.kind, reference: outcome.kind === 'pending' ? outcome.reference : undefined, error },
      now_ms,
      () => new SettledMeanwhile(),
    );
    await store.write(unit).catch((e) => {
      if (!(e instanceof SettledMeanwhile)) throw e;
    });
    return { outcome: 'pending', order_no: payment.order_no, result_code: '0006' };
  }
  const final = finalOf(outcome);
  return (await settleDeduction(deps, payment, attempt, { event: 'answer', ...final }, now_ms)) ?? { outcome: 'stale' };
}

export type ChargeDeps = Pick<Deps, 'keyring' | 'processorFor' | 'store' | 'settings' | 'now'>;

type Prepared =
  | { kind: 'done'; report: ChargeReport }
  | { kind: 'send'; attempt: ProcessorAttemptRow; payment: PaymentRow; input: AuthoriseInput; processor: Processor; wall_ms: number };

/** The first transaction of a run: the charge decided without the processor and recorded, or the payment and its attempt recorded for the call. */
async function prepareCharge(tx: Tx, deps: ChargeDeps, payload: ChargePayload, now_ms: number): Promise<Prepared> {
  const { recurring_id, n, k } = payload;
  const claim_key = `deduction:${recurring_id}:${n}:${k}`;
  // A run after a crash: the attempt it recorded is asked again with its id, even if the
  // subscription was cancelled meanwhile (what the processor did still settles into it);
  // one that the processor answered is the sweeper's.
  const earlier = await tx.selectFrom('processor_attempts').selectAll().where('claim_key', '=', claim_key).executeTakeFirst();
  if (earlier) return resend(tx, deps, earlier);
  const sub = await claimAttempt(tx, payload, now_ms);
  if (!sub) return { kind: 'done', report: { outcome: 'stale' } };
  const plan = planOf(sub);
  const amount_minor = deductionAmount(plan, n);

  const account = await tx.selectFrom('accounts').selectAll().where('account_id', '=', sub.account_id).executeTakeFirstOrThrow();
  const card = await tx.selectFrom('cards').selectAll().where('card_id', '=', sub.card_id).executeTakeFirstOrThrow();
  const pan = deps.keyring.decrypt(card.pan_enc);
  const processor = deps.processorFor(account as AccountRow);

  const first = await paymentColumns(tx, sub.first_transaction_id, ['details']);
  const transaction_id = newId('payment', now_ms);
  const decided = decideBefore(processor, pan, card, now_ms);
  const row = deductionPayment(sub, payload, {
    transaction_id,
    amount_minor,
    livemode: account.mode === 'live' ? 1 : 0,
    card_brand: card.brand,
    card_masked: maskPan(pan),
    first_details: first?.details ?? '',
    decision: decided ?? { result: '0006', reference: '', connector: processor?.name ?? '' },
    now_ms,
  });
  const seq = await insertUnderFreeOrderNo(tx, sub, row);
  if (decided || !processor) {
    await postPaymentChange(tx, null, row, now_ms);
    return { kind: 'done', report: await moveOn(tx, sub, row, seq, payload, decided?.result ?? '1016', now_ms) };
  }
  const attempt = newAttempt(
    {
      account_id: sub.account_id,
      connector: processor.name,
      processor_id: processor.processor_id,
      operation: 'authorise',
      object_id: transaction_id,
      amount_minor,
      currency: sub.currency,
      claim_key,
    },
    now_ms,
    deps.settings.processor_timeout_ms,
  );
  await tx.insertInto('processor_attempts').values(attempt).execute();
  return { kind: 'send', attempt, payment: row, input: chargeInput(row, card, pan), processor, wall_ms: deps.now() };
}

/** The processor's request for a deduction's payment (a merchant-initiated charge of the stored card: no security code). */
function chargeInput(payment: PaymentRow, card: { brand: string; exp_month: number; exp_year: number }, pan: string): AuthoriseInput {
  const { transaction_id, amount_minor, currency } = payment;
  return {
    transaction_id,
    amount_minor: Number(amount_minor),
    currency,
    card: { pan, brand: card.brand, exp_month: card.exp_month, exp_year: card.exp_year },
    merchant_initiated: true,
    capture_method: payment.capture_method,
  };
}

/** A run finds its attempt recorded (after a crash, or a repeat): still `sent`, it is sent again with the same id; open otherwise, it is the sweeper's; settled, there is nothing to do. */
async function resend(tx: Tx, deps: ChargeDeps, earlier: ProcessorAttemptRow): Promise<Prepared> {
  const payment = await paymentById(tx, earlier.object_id);
  const account = payment ? await tx.selectFrom('accounts').selectAll().where('account_id', '=', payment.account_id).executeTakeFirst() : undefined;
  const processor = account ? deps.processorFor(account as AccountRow) : null;
  const card = payment?.card_id ? await tx.selectFrom('cards').selectAll().where('card_id', '=', payment.card_id).executeTakeFirst() : undefined;
  // Settled already: this run is a repeat with nothing to do.
  if (!OPEN_ATTEMPT.includes(earlier.status) || payment?.status !== 'processing')
    return { kind: 'done', report: { outcome: 'stale', order_no: payment?.order_no } };
  if (!processor || !card || earlier.status !== 'sent') return { kind: 'done', report: { outcome: 'pending', order_no: payment.order_no } };
  const input = chargeInput(payment, card, deps.keyring.decrypt(card.pan_enc));
  return { kind: 'send', attempt: earlier, payment, input, processor, wall_ms: deps.now() };
}

/** The final outcome of a deduction's authorisation as a result code and the processor's reference. */
function finalOf(outcome: Exclude<AuthoriseOutcome, { kind: 'pending' | 'unknown' }>): { result: ResultCode; reference: string; status: AttemptStatus } {
  if (outcome.kind === 'approved') return { result: '0000', reference: outcome.reference, status: 'approved' };
  if (outcome.kind === 'declined') return { result: outcome.code, reference: outcome.reference, status: 'declined' };
  // A merchant-initiated charge has no shopper to authenticate: an issuer that still asks fails it.
  return { result: '1009', reference: outcome.reference, status: 'challenge' };
}

class SettledMeanwhile extends Error {}

/**
 * Settles a deduction's authorisation (at once, or for the sweeper, which also voids one
 * unknown past the void bound): the attempt, the payment from `processing` to captured or
 * declined with its postings, and the subscription's move with its notification and the
 * next job, in one transaction. Undefined when another settled it first.
 */
export async function settleDeduction(
  deps: Pick<Deps, 'store'>,
  payment: PaymentRow,
  a: ProcessorAttemptRow,
  o: { event: AttemptEvent; status: AttemptStatus; result: ResultCode; reference: string; checks?: number },
  now_ms: number,
): Promise<ChargeReport | undefined> {
  const paid = o.result === '0000';
  const details: Record<string, unknown> = { ...(JSON.parse(payment.details || '{}') as Record<string, unknown>), reference_no: o.reference };
  const after: PaymentRow = {
    ...payment,
    status: paid ? 'captured' : 'declined',
    result_code: o.result,
    captured_minor: paid ? payment.amount_minor : 0,
    details: JSON.stringify(details),
    updated_at: now_ms,
  };
  return deps.store
    .transaction(async (tx) => {
      // The subscription first, locked on PostgreSQL (in the order a charge's claim takes it):
      // a cancel committing between this read and the move would otherwise leave the paid
      // deduction uncounted. SQLite runs one write transaction at a time.
      let read = tx.selectFrom('subscriptions').selectAll().where('recurring_id', '=', String(details.recurring_id));
      if (deps.store.engine === 'postgres') read = read.forUpdate();
      const sub = await read.executeTakeFirstOrThrow();
      const unit = new WriteUnit(deps.store.engine);
      settleAttemptInto(
        unit,
        a,
        o.event,
        { status: o.status, result_code: paid ? '' : o.result, reference: o.reference || undefined, checks: o.checks },
        now_ms,
        () => new SettledMeanwhile(),
      );
      await applyUnit(tx, unit);
      const { transaction_id: _t, status: _s, account_id: _a, merchant_id: _m, ...patch } = after;
      const event = o.event === 'void' ? 'processor_void' : 'processor_answer';
      if (!(await applyTransition(tx, payment.transaction_id, event, 'processing', after.status, patch, now_ms))) throw new SettledMeanwhile();
      await postPaymentChange(tx, payment, after, now_ms);
      const seq = Number(payment.order_no.slice(payment.order_no.lastIndexOf('-R') + 2));
      return moveOn(tx, sub, after, seq, { recurring_id: sub.recurring_id, n: Number(details.deduction), k: Number(details.retry) }, o.result, now_ms);
    })
    .catch((e) => {
      if (e instanceof SettledMeanwhile) return undefined;
      throw e;
    });
}

/** Where the deduction's outcome leaves the subscription, with its notification and the next job; a subscription cancelled meanwhile keeps its end. */
async function moveOn(
  tx: Tx,
  sub: SubscriptionRow,
  row: PaymentRow,
  seq: number,
  payload: ChargePayload,
  result: ResultCode,
  now_ms: number,
): Promise<ChargeReport> {
  const paid = result === '0000';
  const report = { order_no: row.order_no, result_code: result };
  // Each move sends its notifications with this deduction's order record (engine.ts).
  if (Number(sub.next_n) !== payload.n || Number(sub.retry_count) !== payload.k) return { outcome: 'stale', ...report };
  if (sub.status === 'Inactived') {
    // Cancelled while this deduction was at the processor: what the processor did is the
    // subscription's all the same (counted, notified), the end stands and nothing is retried.
    const patch = { charge_seq: seq, charged_count: sub.charged_count + (paid ? 1 : 0) };
    const late = await moveSubscription(tx, sub, paid ? 'paid_after_cancel' : 'failed_after_cancel', patch, now_ms, async () => row);
    return { outcome: late ? 'ended' : 'stale', ...report };
  }
  const step = afterAttempt(planOf(sub), sub, { n: payload.n, k: payload.k, seq, paid, result });
  const after = isLive(sub.status) ? await moveSubscription(tx, sub, step.event, step.patch, now_ms, async () => row) : undefined;
  if (!after) return { outcome: 'stale', ...report };
  if (step.next) await enqueueCharge(tx, sub, step.next.n, step.next.k, step.next.at, now_ms);
  return {
    outcome: after.status === 'Inactived' || after.status === 'Completed' ? 'ended' : paid ? 'charged' : 'failed',
    ...report,
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
    // 0006: recorded before the processor's call, its answer settles it (settleDeduction).
    status: paid ? 'captured' : c.decision.result === '0006' ? 'processing' : 'declined',
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

/** A charge decided before any processor: an invalid or expired stored card, or a live account without a processor. Null when the processor is to be asked. */
function decideBefore(processor: Processor | null, pan: string, card: { exp_month: number; exp_year: number }, now_ms: number): Decision | null {
  if (!processor) return { result: '1016', reference: '', connector: '' };
  if (!cardFacts(pan).valid) return { result: '1010', reference: '', connector: processor.name };
  if (isExpired(card.exp_month, card.exp_year, now_ms)) return { result: '1005', reference: '', connector: processor.name };
  return null;
}

/** The job handler's shape for the scheduler. */
export function chargeHandler(deps: ChargeDeps) {
  return async (job: Job, ctx: { now_ms: number }) => {
    await runCharge(deps, job.payload as ChargePayload, ctx.now_ms);
    return undefined;
  };
}
