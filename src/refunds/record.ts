// Refund row → the spec's refund items (interface.md "Refund record"). The search item is
// also the `data` of refund notifications (docs/contract.md §11).

import { formatAmount } from '../money/currency.js';
import { compactTime } from '../payments/format.js';
import { PAYMENT_STATUS_CODE, type PaymentStatus } from '../payments/states.js';
import { REFUND_STATUS_CODE } from './states.js';
import type { RefundRow } from './tables.js';

/** Fields of both the refund answer item and the search item. */
function common(r: RefundRow): Record<string, string> {
  return {
    transaction_id: r.transaction_id,
    order_no: r.order_no,
    currency: r.currency,
    amount: formatAmount(r.amount_minor, r.currency),
    refund_amount: formatAmount(r.refund_amount_minor, r.currency),
    refund_reason: r.refund_reason,
    refund_reference: r.refund_reference,
    refund_reference_id: r.refund_reference_id,
    refund_status: REFUND_STATUS_CODE[r.status],
  };
}

export function toRefundSearchItem(r: RefundRow, payment_status: PaymentStatus): Record<string, string> {
  return {
    ...common(r),
    payment_status: PAYMENT_STATUS_CODE[payment_status],
    refund_date: compactTime(Number(r.created_at)),
    refund_processing_date: r.processed_at === null ? '' : compactTime(Number(r.processed_at)),
    query_result: '1',
  };
}

export function toRefundResultItem(r: RefundRow, refund_message: string): Record<string, string> {
  return { ...common(r), refund_message };
}
