// Cancel (interface.md "Cancel a transaction"; docs/contract.md §4, §5): an authorised or pending
// payment is cancelled and its hold released. A captured one must be refunded instead.

import type { FastifyBaseLogger } from 'fastify';
import { type Refusal, refuse } from '../core/outcomes.js';
import type { Deps } from '../web/context.js';
import { movePayment } from './engine.js';
import { describeStatus, runItem } from './lifecycle.js';
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
  if (!canApply('cancel', row.status)) return notCancellable(row);
  return { ok: true, patch: { authorised_minor: 0, expires_at: null } };
}

/** The one cancel of a payment (the acquiring batch item, `/v1/payments/:id/cancel`, the portal). */
export function cancelPayment(deps: Deps, log: FastifyBaseLogger, cmd: CancelCommand): Promise<{ ok: true; payment: PaymentRow } | Refusal> {
  return runItem(deps.store, log, async (tx) => {
    const now = deps.now();
    const row = await accountPayment(tx, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found', `no transaction ${cmd.transaction_id} on this account`);
    const decided = decideCancel(row);
    if (!decided.ok) return decided;
    const after = await movePayment(tx, row, { event: 'cancel', to: 'cancelled', patch: decided.patch, notify: 'payment.cancelled' }, now);
    if (!after) {
      const current = await requirePaymentColumns(tx, row.transaction_id, ['status']);
      return current.status === 'cancelled' ? refuse('invalid_state', 'the payment is already cancelled') : notCancellable(current);
    }
    return { ok: true as const, payment: after };
  });
}
