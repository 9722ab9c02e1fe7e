// Capture (interface.md "Capture a transaction"; docs/contract.md §5, §7): at most the
// authorised amount, once; a partial capture releases the rest of the hold.

import type { FastifyBaseLogger } from 'fastify';
import { formatAmount, parseAmount } from '../money/currency.js';
import type { Deps } from '../web/context.js';
import { movePayment } from './engine.js';
import { checkItem, describeStatus, failure, type ItemFailure, type OrderItem, runItem } from './lifecycle.js';
import { accountPaymentColumns, requirePaymentColumns } from './reader.js';
import type { PaymentRow } from './tables.js';

export interface CaptureResult {
  amount: string;
  capture_status: '0' | '1';
  currency: string;
  error_message: string;
  order_no: string;
  transaction_id: string;
}

function answer(item: OrderItem, outcome: { ok: true } | ItemFailure): CaptureResult {
  return {
    amount: item.amount ?? '',
    capture_status: outcome.ok ? '1' : '0',
    currency: item.currency ?? '',
    error_message: outcome.ok ? '' : outcome.message,
    order_no: item.order_no ?? '',
    transaction_id: item.transaction_id ?? '',
  };
}

/** Why a payment that is no longer `authorised` cannot be captured. */
function notCapturable(row: Pick<PaymentRow, 'status'>): ItemFailure {
  if (row.status === 'expired') return failure('1015', 'the authorisation expired before it was captured');
  if (row.status === 'captured' || row.status === 'partially_refunded' || row.status === 'refunded') {
    return failure('1012', `the payment is already ${describeStatus(row.status)}; a payment is captured once`);
  }
  return failure('1012', `cannot capture a payment that is ${describeStatus(row.status)}`);
}

export async function captureItem(deps: Deps, log: FastifyBaseLogger, account_id: string, item: OrderItem, rerun = false): Promise<CaptureResult> {
  const outcome = await capturePayment(deps, log, account_id, item);
  // A re-run under an Idempotency-Key whose first attempt lost its answer (a storage fault at
  // COMMIT): if that attempt captured this amount, this item succeeded (issue 17).
  if (rerun && !outcome.ok && outcome.code === '1012' && item.transaction_id && item.currency && item.amount) {
    const now = await accountPaymentColumns(deps.store.db, account_id, item.transaction_id, ['status', 'captured_minor', 'currency']);
    const asked = now ? parseAmount(item.amount, now.currency) : null;
    if (now && asked?.ok && now.status !== 'authorised' && Number(now.captured_minor) === asked.minor) return answer(item, { ok: true });
  }
  return answer(item, outcome);
}

/**
 * The one capture of a payment (the acquiring batch item and the generic interface's
 * `/v1/payments/:id/capture`): checks, compare-and-set, postings and event in one transaction.
 */
export async function capturePayment(
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
      const checked = await checkItem(tx, account_id, item, 'to_capture');
      if (!checked.ok) return checked;
      const { row, amount_minor } = checked;
      if (row.status !== 'authorised') return notCapturable(row);
      // The expiry job may not have run yet: an authorisation past its window is expired.
      if (row.expires_at !== null && Number(row.expires_at) <= now) return failure('1015', 'the authorisation expired before it was captured');
      if (amount_minor <= 0) return failure('0400', 'amount must be greater than zero');
      if (amount_minor > Number(row.authorised_minor)) {
        return failure('1013', `amount ${item.amount} is more than the authorised ${formatAmount(row.authorised_minor, row.currency)}`);
      }
      const patch = { authorised_minor: 0, captured_minor: amount_minor, expires_at: null };
      const after = await movePayment(tx, row, { event: 'capture', to: 'captured', patch, notify: 'payment.captured' }, now);
      if (!after) {
        // Lost a race (a concurrent cancel, capture or expiry): say what won.
        const current = await requirePaymentColumns(tx, row.transaction_id, ['status']);
        return notCapturable(current);
      }
      return { ok: true, payment: after };
    },
    (f) => f,
  );
}
