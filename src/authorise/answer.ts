// The acquiring interface's payment answer records: one builder per wire shape (issue 30,
// item 1). The shapes differ in their fields and in their order, and the XML answers are
// pinned byte for byte, so they are not merged into one builder with options:
//
// - `cardAnswerRecord` / `cardDuplicateAnswer`: `POST /v1/authorise` with a card or a token,
//   fields in the order of schema.ts `AuthoriseAnswer`;
// - `apmAnswerRecord` / `apmDuplicateAnswer`: `POST /v1/authorise` with `payment_method`,
//   `issuer_url` after the currency and no card fields (docs/contract.md §15);
// - the order record (src/payments/order-record.ts): the order query's item and the `data`
//   of a payment notification;
// - the shopper's return fields (src/payments/shopper-return.ts), signed into a URL.
//
// Other interfaces keep their own shape next to their routes: the generic interface's
// payment object (`paymentObject`, src/generic/payments.ts), the portal's detail page
// (src/portal/transaction.ts, HTML), and the hosted checkout's duplicate answer
// (src/checkout/routes.ts), which has neither card nor issuer fields.
import { maskPan } from '../cards/card.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { formatAmount } from '../money/currency.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { orderStatusOf } from '../payments/states.js';
import { answerFields } from '../subscriptions/service.js';
import { type ResultCode, resultText } from '../web/errors.js';

/** The card payment answer (XML root `respon`, schema.ts `AuthoriseAnswer`; docs/interface.md "Direct payment"). */
export function cardAnswerRecord(
  row: PaymentRow,
  note: string,
  extra: { token_id: string; threeds_url?: string; subscription?: ReturnType<typeof answerFields> },
): Record<string, unknown> {
  const reasons = JSON.parse(row.risk_reasons) as Array<{ name: string; status: string }>;
  const record: Record<string, unknown> = {
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    order_no: row.order_no,
    amount: formatAmount(row.amount_minor, row.currency),
    currency: row.currency,
    transaction_id: row.transaction_id,
    card: row.card_masked,
    order_status: orderStatusOf(row.status),
    result_info: resultText(row.result_code as ResultCode),
    ...(extra.subscription ?? answerFields(null)),
    note,
    token_id: extra.token_id,
    connector: row.connector,
    threeds_result: row.threeds_result,
    risk_action: row.risk_action,
    risk_score: row.risk_score === null ? '' : String(row.risk_score),
    risk_reasons: reasons.length === 0 ? '' : reasons.map((r) => ({ name: r.name, status: r.status })),
  };
  if (extra.threeds_url) record.threeds_url = extra.threeds_url;
  return record;
}

/** The card payment answer to a repeated order_no with another body (docs/contract.md §4: 1011). */
export function cardDuplicateAnswer(body: AuthoriseDirect): Record<string, unknown> {
  return {
    merchant_id: body.merchant_id,
    account_id: body.account_id,
    order_no: body.order_no,
    amount: body.amount,
    currency: body.currency,
    transaction_id: '',
    card: body.card ? maskPan(body.card) : '',
    order_status: '0',
    result_info: resultText('1011'),
    contract_name: '',
    recurring_id: '',
    recurring_deduction_period: '',
    recurring_deduction_time: '',
    note: body.note ?? '',
    token_id: '',
    connector: '',
    threeds_result: '',
    risk_action: '',
    risk_score: '',
    risk_reasons: '',
  };
}

/** The APM answer (docs/interface.md "Alternative payment methods", docs/contract.md §15). */
export function apmAnswerRecord(row: PaymentRow, issuer_url: string): Record<string, unknown> {
  return {
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    order_no: row.order_no,
    amount: formatAmount(row.amount_minor, row.currency),
    currency: row.currency,
    issuer_url,
    transaction_id: row.transaction_id,
    order_status: orderStatusOf(row.status),
    result_info: resultText('0003'),
  };
}

/** The APM answer to a repeated order_no with another body (docs/contract.md §4: 1011). */
export function apmDuplicateAnswer(body: AuthoriseDirect): Record<string, unknown> {
  return {
    merchant_id: body.merchant_id,
    account_id: body.account_id,
    order_no: body.order_no,
    amount: body.amount,
    currency: body.currency,
    issuer_url: '',
    transaction_id: '',
    order_status: '0',
    result_info: resultText('1011'),
  };
}
