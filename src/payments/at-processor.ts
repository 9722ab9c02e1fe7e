// A payment's capture or cancel at its processor (docs/contract.md §20, docs/attempts.md).
// The attempt is recorded and committed first, holding the payment's claim (one capture or
// cancel of a payment at the processor at a time) and only while the payment is still in the
// status the command read; the call is made outside any transaction; the processor's answer
// moves the payment by the one transition table, with the attempt settled in the same
// transaction. An answer that is not final leaves the payment as it was (money follows the
// processor's confirmation) and the sweeper (src/attempts/sweeper.ts) or a webhook settles
// it later by the same function.
import { type Refusal, refuse } from '../core/outcomes.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { callWithDeadline, newAttempt, OPEN_ATTEMPT, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { OperationOutcome, OperationStatusAnswer, Processor, ProcessorCall } from '../processors/types.js';
import type { Deps } from '../web/context.js';
import { movePayment, type PaymentMove } from './engine.js';
import { requirePayment } from './reader.js';
import type { PaymentRow } from './tables.js';

/** The claim a payment's capture or cancel attempt holds while it is open. */
export function paymentClaim(transaction_id: string): string {
  return `payment:${transaction_id}`;
}

/**
 * The processor that holds a payment (docs/contract.md §21): the configured processor its
 * authorisation (or APM start) went to, while it is still set; else its account's first
 * (null when the account has none, or is gone).
 */
export async function processorOfPayment(
  deps: Pick<Deps, 'merchants' | 'processorFor' | 'processors' | 'store'>,
  payment: Pick<PaymentRow, 'merchant_id' | 'account_id' | 'transaction_id'>,
): Promise<Processor | null> {
  const creds = await deps.merchants.credentials(payment.merchant_id, payment.account_id);
  return creds ? paymentProcessor(deps, creds.account, payment.transaction_id) : null;
}

/** The processor that holds payment `transaction_id` of `account`: where its authorisation went, else the account's first. */
export async function paymentProcessor(
  deps: Pick<Deps, 'processorFor' | 'processors' | 'store'>,
  account: AccountRow,
  transaction_id: string,
): Promise<Processor | null> {
  const went = await deps.store.db
    .selectFrom('processor_attempts')
    .select('processor_id')
    .where('object_id', '=', transaction_id)
    .where('operation', 'in', ['authorise', 'apm_start'])
    .where('processor_id', 'is not', null)
    // Not one the payment was routed away from (declined, never sent).
    .where('status', '!=', 'declined')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  const routed = went?.processor_id ? deps.processors.byProcessorId(went.processor_id) : undefined;
  return routed && routed.row.account_id === account.account_id ? routed.processor : deps.processorFor(account);
}

/** The processor's reference of a payment's authorisation ('' when it gave none). */
export function processorReference(payment: Pick<PaymentRow, 'details'>): string {
  const ref = (JSON.parse(payment.details || '{}') as { reference_no?: unknown }).reference_no;
  return typeof ref === 'string' ? ref : '';
}

export type PaymentOperation = 'capture' | 'cancel';

/** What sending a capture or cancel came to: the call made (with its outcome), or not made because the payment changed or another one holds it. */
export type Sent =
  | { kind: 'called'; attempt: ProcessorAttemptRow; outcome: OperationOutcome }
  | { kind: 'changed' }
  | { kind: 'busy'; open: Pick<ProcessorAttemptRow, 'operation' | 'amount_minor'> | undefined };

class Changed extends Error {}
class Busy extends Error {}

/**
 * Records the attempt of `operation` on `payment` (still in the status it was read in, and
 * no other capture or cancel of it open), commits it, then calls the processor.
 */
export async function sendForPayment(
  deps: Deps,
  payment: PaymentRow,
  operation: PaymentOperation,
  amount_minor: number,
  processor: Processor,
  call: (c: ProcessorCall) => Promise<OperationOutcome>,
): Promise<Sent> {
  const now = deps.now();
  const attempt = newAttempt(
    {
      account_id: payment.account_id,
      connector: processor.name,
      processor_id: processor.processor_id,
      operation,
      object_id: payment.transaction_id,
      amount_minor,
      currency: payment.currency,
      claim_key: paymentClaim(payment.transaction_id),
    },
    now,
    deps.settings.processor_timeout_ms,
  );
  const unit = new WriteUnit(deps.store.engine);
  // The claim first, then the payment's row: every transaction that holds both (this one, the
  // settlement) takes them in that order, so two never wait on each other (PostgreSQL).
  unit.insertRows('processor_attempts', [attempt], { ignoreConflictOn: ['claim_key'], expected: { rows: 1, error: () => new Busy() } });
  unit.compareAndSet(
    unit.q.updateTable('payments').set({ updated_at: now }).where('transaction_id', '=', payment.transaction_id).where('status', '=', payment.status),
    () => new Changed(),
  );
  try {
    await deps.store.write(unit);
  } catch (e) {
    if (e instanceof Changed) return { kind: 'changed' };
    if (e instanceof Busy) {
      const open = await deps.store.db
        .selectFrom('processor_attempts')
        .select(['operation', 'amount_minor'])
        .where('claim_key', '=', paymentClaim(payment.transaction_id))
        .executeTakeFirst();
      return { kind: 'busy', open };
    }
    throw e;
  }
  const outcome = await callWithDeadline(attempt, deps.now, call);
  return { kind: 'called', attempt, outcome };
}

/** What settling a capture or cancel did to its payment. */
export type Settled =
  | { kind: 'done'; payment: PaymentRow }
  | { kind: 'declined'; code: string; reason: string }
  | { kind: 'open' }
  /** Settled meanwhile by another (the sweeper, a webhook), or the payment was not where the attempt left it. */
  | { kind: 'stale' };

class SettledMeanwhile extends Error {}

/** How an approved capture or cancel moves its payment. */
export function operationMove(operation: PaymentOperation, amount_minor: number): PaymentMove {
  return operation === 'capture'
    ? { event: 'capture', to: 'captured', patch: { authorised_minor: 0, captured_minor: amount_minor, expires_at: null }, notify: 'payment.captured' }
    : { event: 'cancel', to: 'cancelled', patch: { authorised_minor: 0, expires_at: null }, notify: 'payment.cancelled' };
}

/**
 * Settles a capture or cancel attempt with what the processor said: approved moves the
 * payment (and its money, and its event) with the attempt, in one transaction; declined and
 * not found (it never reached the processor) let go of the claim and leave the payment as
 * it was; pending and unknown keep the attempt open for the sweeper, with `checks` counted.
 */
export async function settlePaymentOperation(
  deps: Deps,
  payment: PaymentRow,
  a: ProcessorAttemptRow,
  outcome: OperationStatusAnswer,
  now_ms: number,
  checks?: number,
): Promise<Settled> {
  const lost = () => new SettledMeanwhile();
  try {
    if (outcome.kind === 'approved') {
      const move = operationMove(a.operation as PaymentOperation, Number(a.amount_minor));
      let after: PaymentRow | undefined;
      await deps.store.transaction(async (tx) => {
        const unit = new WriteUnit(deps.store.engine);
        settleAttemptInto(unit, a, 'answer', { status: 'approved', reference: outcome.reference, checks }, now_ms, lost);
        await applyUnit(tx, unit);
        after = await movePayment(tx, payment, move, now_ms);
      });
      return after ? { kind: 'done', payment: after } : { kind: 'stale' };
    }
    const unit = new WriteUnit(deps.store.engine);
    if (outcome.kind === 'declined') {
      settleAttemptInto(
        unit,
        a,
        'answer',
        { status: 'declined', result_code: outcome.code, reference: outcome.reference, error: outcome.reason, checks },
        now_ms,
        lost,
      );
    } else if (outcome.kind === 'not_found') {
      settleAttemptInto(unit, a, 'lose', { status: 'declined', result_code: '1007', error: 'not found at the processor', checks }, now_ms, lost);
    } else {
      const error = outcome.kind === 'unknown' ? outcome.reason : '';
      settleAttemptInto(
        unit,
        a,
        'answer',
        { status: outcome.kind, reference: outcome.kind === 'pending' ? outcome.reference : undefined, error, checks },
        now_ms,
        lost,
      );
    }
    await deps.store.write(unit);
    if (outcome.kind === 'declined') return { kind: 'declined', code: outcome.code, reason: outcome.reason };
    if (outcome.kind === 'not_found') return { kind: 'declined', code: '1007', reason: 'the processor never received it' };
    return { kind: 'open' };
  } catch (e) {
    if (e instanceof SettledMeanwhile) return { kind: 'stale' };
    throw e;
  }
}

type Answer = { ok: true; payment: PaymentRow } | { ok: 'pending'; payment: PaymentRow } | Refusal;

/**
 * A capture's or cancel's answer once its outcome is settled: the moved payment; `pending`
 * while the processor has not confirmed; the processor's refusal. When its own settle found
 * the attempt settled meanwhile, what that settle decided is the answer (`settledMeanwhile`).
 */
export async function afterSettle(
  deps: Deps,
  row: PaymentRow,
  attempt: Pick<ProcessorAttemptRow, 'attempt_id' | 'operation'>,
  settled: Settled,
  why: (row: Pick<PaymentRow, 'status'>) => Refusal,
): Promise<Answer> {
  switch (settled.kind) {
    case 'done':
      return { ok: true, payment: settled.payment };
    case 'open':
      return { ok: 'pending', payment: row };
    case 'declined':
      return declinedAnswer(settled.code, settled.reason);
    case 'stale':
      return settledMeanwhile(deps, row, attempt, why);
  }
}

const declinedAnswer = (code: string, reason: string): Refusal => refuse('processor_declined', `the processor refused it: ${reason} (${code})`, { code });

/** Where an approved capture or cancel leaves its payment (a captured one may be refunded since). */
const MOVED_BY: Record<PaymentOperation, readonly PaymentRow['status'][]> = {
  capture: ['captured', 'partially_refunded', 'refunded'],
  cancel: ['cancelled'],
};

/**
 * The answer of a capture or cancel whose own settle lost to another settle of the same
 * attempt: the processor's webhook (the remote sandbox notifies as it acts, so on a loaded
 * machine its notification can be settled before the call's answer is read) or the sweeper
 * heard the outcome first. That outcome is this command's: approved, with the payment where
 * it leads, is done (not "already captured"); declined is the refusal; still open is
 * pending. Only a payment the attempt did not move says why it cannot take the command now.
 */
async function settledMeanwhile(
  deps: Deps,
  row: PaymentRow,
  attempt: Pick<ProcessorAttemptRow, 'attempt_id' | 'operation'>,
  why: (row: Pick<PaymentRow, 'status'>) => Refusal,
): Promise<Answer> {
  const a = await deps.store.db
    .selectFrom('processor_attempts')
    .select(['status', 'result_code', 'last_error'])
    .where('attempt_id', '=', attempt.attempt_id)
    .executeTakeFirstOrThrow();
  const now = await requirePayment(deps.store.db, row.transaction_id);
  if (a.status === 'approved' && MOVED_BY[attempt.operation as PaymentOperation]?.includes(now.status)) return { ok: true, payment: now };
  if (a.status === 'declined') return declinedAnswer(a.result_code, a.last_error);
  if (OPEN_ATTEMPT.includes(a.status)) return { ok: 'pending', payment: row };
  return why(now);
}
