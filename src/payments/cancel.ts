// Cancel (interface.md "Cancel a transaction"; docs/contract.md §4, §5): an authorised or pending
// payment is cancelled and its hold released. A captured one must be refunded instead.

import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../web/context.js';
import { movePayment } from './engine.js';
import { checkItem, describeStatus, failure, type ItemFailure, type OrderItem, runItem } from './lifecycle.js';
import { accountPaymentColumns, requirePaymentColumns } from './reader.js';
import { canApply } from './states.js';
import type { PaymentRow } from './tables.js';

export interface CancelResult {
  amount: string;
  cancel_status: '0' | '1';
  currency: string;
  error_message: string;
  order_no: string;
  transaction_id: string;
}

function answer(item: OrderItem, outcome: { ok: true } | ItemFailure): CancelResult {
  return {
    amount: item.amount ?? '',
    cancel_status: outcome.ok ? '1' : '0',
    currency: item.currency ?? '',
    error_message: outcome.ok ? '' : outcome.message,
    order_no: item.order_no ?? '',
    transaction_id: item.transaction_id ?? '',
  };
}

function notCancellable(row: Pick<PaymentRow, 'status'>): ItemFailure {
  if (row.status === 'captured' || row.status === 'partially_refunded') {
    return failure('1012', `cannot cancel a payment that is ${describeStatus(row.status)}; refund it instead`);
  }
  if (row.status === 'expired') return failure('1015', 'the authorisation already expired and its hold was released');
  return failure('1012', `cannot cancel a payment that is ${describeStatus(row.status)}`);
}

export async function cancelItem(deps: Deps, log: FastifyBaseLogger, account_id: string, item: OrderItem, rerun = false): Promise<CancelResult> {
  const outcome = await cancelPayment(deps, log, account_id, item);
  // A re-run whose first attempt cancelled it and lost the answer (issue 17): it succeeded.
  if (rerun && !outcome.ok && outcome.code === '1012' && item.transaction_id) {
    const now = await accountPaymentColumns(deps.store.db, account_id, item.transaction_id, ['status']);
    if (now?.status === 'cancelled') return answer(item, { ok: true });
  }
  return answer(item, outcome);
}

/** The one cancel of a payment (the acquiring batch item and `/v1/payments/:id/cancel`). */
export async function cancelPayment(
  deps: Deps,
  log: FastifyBaseLogger,
  account_id: string,
  item: OrderItem,
): Promise<{ ok: true; payment: PaymentRow } | ItemFailure> {
  return runItem<{ ok: true; payment: PaymentRow } | ItemFailure>(
    deps.store,
    log,
    async (tx) => {
      const now = deps.now();
      const checked = await checkItem(tx, account_id, item, 'original');
      if (!checked.ok) return checked;
      const { row } = checked;
      if (!canApply('cancel', row.status)) return notCancellable(row);
      const patch = { authorised_minor: 0, expires_at: null };
      const after = await movePayment(tx, row, { event: 'cancel', to: 'cancelled', patch, notify: 'payment.cancelled' }, now);
      if (!after) {
        const current = await requirePaymentColumns(tx, row.transaction_id, ['status']);
        return current.status === 'cancelled' ? failure('1012', 'the payment is already cancelled') : notCancellable(current);
      }
      return { ok: true, payment: after };
    },
    (f) => f,
  );
}
