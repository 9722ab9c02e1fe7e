// `POST /v1/retrievalSettlement`'s request and answer (docs/contract.md §23; issue 35 item 2):
// one schema validates the request and documents both (docs/style.md §2).
import { Type } from 'typebox';
import { oneOf, ReturnMessage, ReturnStatus, Signature, SignedIdentity, text } from '../web/route-schema.js';
import { CSV_COLUMNS, REPORT_BATCHES_MAX } from './report.js';

const Day = (what: string) => Type.String({ pattern: '^\\d{8}$', description: `${what}: a UTC day, YYYYMMDD` });

export const RetrievalSettlementBody = Type.Object(
  {
    ...SignedIdentity,
    start_date: Day('the first batch day'),
    end_date: Day('the last batch day, inclusive (at most 100 days after start_date)'),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'only this currency’s batches (ISO 4217)' })),
    format: Type.Optional(oneOf(['json', 'csv'], '`json` (default): `batches` with their `items`; `csv`: the report as CSV text in `csv`')),
  },
  { additionalProperties: false },
);

export interface RetrievalSettlementInput {
  start_date: string;
  end_date: string;
  currency?: string;
  format?: 'json' | 'csv';
}

const money = (what: string) => text(`${what}, in the currency’s decimal form`);
const minor = (what: string) => Type.Integer({ description: `${what}, in minor units` });

export const SettlementLine = Type.Object({
  kind: text(
    '`capture` (with its fee), `refund`, `refund_failed`, `dispute` (with its fee), `dispute_won`, `payout_reserve`, `payout_release`, `transfer`, `transfer_reversal`, `top_up`, …',
  ),
  transaction_id: text('the payment it belongs to, empty for a movement of the account (a payout, a transfer, a top-up)'),
  order_no: text('the payment’s order number, or empty'),
  reference: text('the refund, payout, transfer or dispute it belongs to, or empty'),
  created_at: text('ISO 8601 (UTC): when the movement was written'),
  gross: money('what the movement was before fees (net + fee)'),
  fee: money('the fees charged with it'),
  net: money('what it moved in the balance'),
  gross_minor: minor('gross'),
  fee_minor: minor('fee'),
  net_minor: minor('net'),
});

export const SettlementBatch = Type.Object({
  batch_id: text('`stl_…`'),
  day: text('YYYY-MM-DD (UTC): the day it holds'),
  currency: text('ISO 4217'),
  status: oneOf(['pending', 'available'], '`pending` until its pending part is available, then `available`'),
  lines: Type.Integer({ description: 'how many items it holds' }),
  gross: money('the sum of the items’ gross'),
  fee: money('the sum of the items’ fees'),
  net: money('the sum of the items’ net'),
  gross_minor: minor('gross'),
  fee_minor: minor('fee'),
  net_minor: minor('net'),
  pending: money('the part that waits in pending (captures net of their fees) until `available_at`'),
  pending_minor: minor('pending'),
  delay_days: Type.Integer({ description: 'the account’s settlement delay when it closed' }),
  closed_at: text('ISO 8601 (UTC): the end of its day'),
  available_at: text('ISO 8601 (UTC): when its pending part becomes available'),
  settled_at: text('ISO 8601 (UTC) when it became available, or empty'),
  items: Type.Optional(Type.Array(SettlementLine, { description: 'its lines, oldest first (format `json`)' })),
});

export const RetrievalSettlementAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  format: oneOf(['json', 'csv'], 'as asked'),
  batches: Type.Array(SettlementBatch, {
    description: `the batches of those days, oldest first, at most ${REPORT_BATCHES_MAX}; with \`csv\`, without their items`,
  }),
  csv: Type.Optional(text(`format \`csv\`: every batch’s lines, one row each, columns ${CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} (docs/finance.md)`)),
  encryption_data: Signature,
});
