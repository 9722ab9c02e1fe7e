// Payment row → the spec's order record (interface.md "Order record"). The same record is
// the query answer item and the `data` of payment notifications (docs/contract.md §11): one
// builder of this shape; the other answer shapes are listed in src/authorise/answer.ts.

import { formatAmount } from '../money/currency.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { compactTime } from './format.js';
import { PAYMENT_STATUS_CODE } from './states.js';
import { EMPTY_SUBSCRIPTION_RESULT } from './subscription-result.js';
import type { PaymentRow } from './tables.js';

/** Request fields a payment keeps for its order record (never card data). */
export interface PaymentDetails {
  website?: string;
  shopper_email?: string;
  shopper_phone?: string;
  delivery_address?: string;
  delivery_city?: string;
  delivery_country?: string;
  delivery_firstname?: string;
  delivery_lastname?: string;
  delivery_postal_code?: string;
  delivery_state?: string;
  [key: string]: unknown;
}

export function parseDetails(row: Pick<PaymentRow, 'details'>): PaymentDetails {
  try {
    return JSON.parse(row.details) as PaymentDetails;
  } catch {
    return {};
  }
}

/** The columns an order record is made of: queries read only these (issue 6: a query of
 * 100 ids read every row's stored answer too, twice the bytes). */
export const ORDER_RECORD_COLUMNS = [
  'transaction_id',
  'order_no',
  'amount_minor',
  'currency',
  'captured_minor',
  'refunded_minor',
  'status',
  'is3ds',
  'risk_action',
  'risk_reasons',
  'details',
  'created_at',
  'card_masked',
  'result_code',
] as const satisfies ReadonlyArray<keyof PaymentRow>;

export type OrderRecordRow = Pick<PaymentRow, (typeof ORDER_RECORD_COLUMNS)[number]>;

/** `subscriptions`: `subscription_result` by recurring_id, for rows that created or charged one (details.recurring_id). */
export function toOrderRecord(row: OrderRecordRow, subscriptions?: ReadonlyMap<string, Readonly<Record<string, string>>>): Record<string, unknown> {
  const d = parseDetails(row);
  const sub = typeof d.recurring_id === 'string' ? subscriptions?.get(d.recurring_id) : undefined;
  const reasons = JSON.parse(row.risk_reasons || '[]') as Array<{ name: string; status: string }>;
  return {
    amount: formatAmount(row.amount_minor, row.currency),
    currency: row.currency,
    delivery_information: {
      delivery_address: d.delivery_address ?? '',
      delivery_city: d.delivery_city ?? '',
      delivery_country: d.delivery_country ?? '',
      delivery_firstname: d.delivery_firstname ?? '',
      delivery_lastname: d.delivery_lastname ?? '',
      delivery_postal_code: d.delivery_postal_code ?? '',
      delivery_state: d.delivery_state ?? '',
    },
    antifraud_provider: row.risk_action ? 'tollgate-risk' : '',
    fraud_check_result: reasons.map((r) => ({ check_items: r.name, status: r.status })),
    is3ds: String(row.is3ds),
    order_no: row.order_no,
    payment_status: PAYMENT_STATUS_CODE[row.status],
    query_result: '1',
    reference_no: typeof d.reference_no === 'string' ? d.reference_no : '',
    shopper_email: d.shopper_email ?? '',
    shopper_phone: d.shopper_phone ?? '',
    subscription_result: sub ?? EMPTY_SUBSCRIPTION_RESULT,
    transaction_date: compactTime(row.created_at),
    transaction_id: row.transaction_id,
    website: d.website ?? '',
    // Amount breakdown, so merchants can reconcile partial captures and refunds.
    captured_amount: formatAmount(row.captured_minor, row.currency),
    refunded_amount: formatAmount(row.refunded_minor, row.currency),
    card: row.card_masked,
    result_info: resultText(row.result_code as ResultCode),
  };
}

/** The answer item for an id the account does not have (docs/contract.md §6: query_result 0). */
export function notFoundRecord(id: { transaction_id?: string; order_no?: string }): Record<string, unknown> {
  return {
    amount: '',
    currency: '',
    delivery_information: {
      delivery_address: '',
      delivery_city: '',
      delivery_country: '',
      delivery_firstname: '',
      delivery_lastname: '',
      delivery_postal_code: '',
      delivery_state: '',
    },
    antifraud_provider: '',
    fraud_check_result: [],
    is3ds: '',
    order_no: id.order_no ?? '',
    payment_status: '',
    query_result: '0',
    reference_no: '',
    shopper_email: '',
    shopper_phone: '',
    subscription_result: EMPTY_SUBSCRIPTION_RESULT,
    transaction_date: '',
    transaction_id: id.transaction_id ?? '',
    website: '',
    captured_amount: '',
    refunded_amount: '',
    card: '',
    result_info: '',
  };
}
