// Cancel (interface.md "Cancel a transaction"; docs/contract.md §4, §5): an authorised or pending
// payment is cancelled and its hold released. A captured one must be refunded instead.

import type { FastifyBaseLogger } from 'fastify';
import { type Refusal, refuse } from '../core/outcomes.js';
import type { Deps } from '../web/context.js';
import { afterSettle, processorOfPayment, processorReference, sendForPayment, settlePaymentOperation } from './at-processor.js';
import { movePayment } from './engine.js';
import { describeStatus, guardItem } from './lifecycle.js';
import { accountPayment, requirePaymentColumns } from './reader.js';
import { canApply } from './states.js';
import type { PaymentRow } from './tables.js';

function notCancellable(row: Pick<PaymentRow, 'status'>): Refusal {
  if (row.status === 'captured' || row.status === 'partially_refunded') {
    return refuse('invalid_state', `cannot cancel a payment that is ${describeStatus(row.status)}; refund it instead`);
  }
  if (row.status === 'expired') return refuse('authorisation_expired', 'the authorisation already expired and its hold was released');
  return refuse('invalid_state', `cannot cancel a payment that is ${describeStatus(row.status)}`);
}

/** Cancel a payment of `account_id` (authorised or waiting for the shopper) and release its hold. */
export interface CancelCommand {
  account_id: string;
  transaction_id: string;
}

/** The cancel decision, pure: a payment the table lets cancel loses its hold. */
export function decideCancel(row: Pick<PaymentRow, 'status'>): { ok: true; patch: Partial<PaymentRow> } | Refusal {
  // A payment held for review is ended by the review (REJECT), not a merchant's cancel.
  if (row.status === 'review' || !canApply('cancel', row.status)) return notCancellable(row);
  return { ok: true, patch: { authorised_minor: 0, expires_at: null } };
}

/** A cancel's answer: done, or sent and not yet confirmed (`cancel_status` 2: the payment keeps its hold until the processor confirms). */
export type CancelResult = { ok: true; payment: PaymentRow } | { ok: 'pending'; payment: PaymentRow } | Refusal;

/**
 * The one cancel of a payment (the acquiring batch item, `/v1/payments/:id/cancel`, the
 * portal). An authorisation is voided at the processor as a recorded attempt
 * (src/payments/at-processor.ts); a payment still waiting for its shopper (3-D Secure, an
 * issuer's page, a checkout session) has nothing at the processor to void and is cancelled here.
 */
export function cancelPayment(deps: Deps, log: FastifyBaseLogger, cmd: CancelCommand): Promise<CancelResult> {
  return guardItem(log, async () => {
    const row = await accountPayment(deps.store.db, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found', `no transaction ${cmd.transaction_id} on this account`);
    const decided = decideCancel(row);
    if (!decided.ok) return decided;
    if (row.status === 'pending') return cancelWaiting(deps, row, decided.patch);
    const processor = await processorOfPayment(deps, row);
    if (!processor) return refuse('no_processor', 'this account is in live mode and no processor is configured for it');
    const input = { transaction_id: row.transaction_id, reference: processorReference(row) };
    const sent = await sendForPayment(deps, row, 'cancel', 0, processor, (call) => processor.cancel(input, call));
    if (sent.kind === 'changed') return stateNow(deps, row);
    if (sent.kind === 'busy') {
      if (sent.open?.operation === 'cancel') return { ok: 'pending', payment: row };
      return refuse('invalid_state', `a ${sent.open?.operation ?? 'capture'} of this payment is pending at the processor`);
    }
    const settled = await settlePaymentOperation(deps, row, sent.attempt, sent.outcome, deps.now());
    return afterSettle(deps, row, sent.attempt, settled, notCancellable);
  });
}

/** A payment waiting for its shopper: cancelled by compare-and-set, its postings and event in one transaction. */
async function cancelWaiting(deps: Deps, row: PaymentRow, patch: Partial<PaymentRow>): Promise<CancelResult> {
  const after = await deps.store.transaction((tx) =>
    movePayment(tx, row, { event: 'cancel', to: 'cancelled', patch, notify: 'payment.cancelled' }, deps.now()),
  );
  return after ? { ok: true, payment: after } : stateNow(deps, row);
}

/** Why the payment cannot be cancelled now that another change got there first. */
async function stateNow(deps: Deps, row: PaymentRow): Promise<Refusal> {
  const current = await requirePaymentColumns(deps.store.db, row.transaction_id, ['status']);
  return current.status === 'cancelled' ? refuse('invalid_state', 'the payment is already cancelled') : notCancellable(current);
}
