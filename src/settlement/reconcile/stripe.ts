// Stripe's balance transactions as CSV, in the two shapes Stripe exports them:
//
// - the Dashboard's export of balance transactions (Balance → Export): `id, Type, Source,
//   Amount, Fee, Net, Currency, Created (UTC), Available On (UTC), Description, Customer Facing
//   Amount, Customer Facing Currency, …`, with the metadata asked for as `<key> (metadata)`
//   columns; amounts are decimals in the currency's unit, currencies lower-case, times UTC;
// - the Reports API's itemised balance reports (docs.stripe.com/reports/report-types, "Balance":
//   `balance_change_from_activity.itemized.N`): `balance_transaction_id, created_utc, currency,
//   gross, fee, net, reporting_category, source_id, payment_intent_id, …`, and, when asked for,
//   `payment_metadata[<key>]` and `refund_metadata[<key>]` columns (a Stripe documentation
//   example asks for `payment_metadata[…]` and `refund_metadata[…]` of its own keys). Amounts
//   are "in major units of the currency" there too.
//
// So both are read with one list of columns, each going by its name in either shape. What names
// our movement (src/processors/stripe/connector.ts): every PaymentIntent and refund we create
// carries metadata `transaction_id` (and a refund `refund_id`), so a metadata column names it
// directly; without one, the PaymentIntent (`payment_intent_id`) or the line's Source (a refund
// `re_…`, a dispute `du_…`) is looked up among our attempts' and disputes' processor
// references. A charge's Source (`ch_…`) is not one of them: an export without metadata or
// `payment_intent_id` cannot name its charges, and says so in each line's detail.
import type { MovementKind } from '../../db/tables/reconciliation.js';
import { amountCell, type ColumnIndex, type ColumnSpec, cell, currencyCell, ReportError, timeCell } from './columns.js';
import type { ReportFormat, ReportLine } from './format.js';

type Key =
  | 'id'
  | 'type'
  | 'source'
  | 'amount'
  | 'fee'
  | 'currency'
  | 'created'
  | 'payment_intent'
  | 'customer_amount'
  | 'customer_currency'
  | 'tx_meta'
  | 'refund_tx_meta'
  | 'refund_meta';

const COLUMNS: readonly ColumnSpec<Key>[] = [
  { key: 'id', names: ['id', 'balance_transaction_id'], required: true },
  { key: 'type', names: ['Type', 'reporting_category'], required: true },
  { key: 'source', names: ['Source', 'source_id'], required: true },
  { key: 'amount', names: ['Amount', 'gross'], required: true },
  { key: 'fee', names: ['Fee'], required: true },
  { key: 'currency', names: ['Currency'], required: true },
  { key: 'created', names: ['Created (UTC)', 'created_utc'], required: true },
  { key: 'payment_intent', names: ['payment_intent_id', 'PaymentIntent ID'], required: false },
  { key: 'customer_amount', names: ['Customer Facing Amount', 'customer_facing_amount'], required: false },
  { key: 'customer_currency', names: ['Customer Facing Currency', 'customer_facing_currency'], required: false },
  { key: 'tx_meta', names: ['payment_metadata[transaction_id]', 'transaction_id (metadata)'], required: false },
  { key: 'refund_tx_meta', names: ['refund_metadata[transaction_id]'], required: false },
  { key: 'refund_meta', names: ['refund_metadata[refund_id]', 'refund_id (metadata)'], required: false },
];

/**
 * Balance transaction types (the export's Type) and reporting categories (the itemised
 * reports') Tollgate has a movement for. `adjustment` is a dispute's when its Source is one
 * (`du_…`, `dp_…`): money out opens it, money back is won. Every other type (payout,
 * stripe_fee, application_fee, transfer, tax_fee, reserve_transaction, …) is not applicable.
 */
export const STRIPE_TYPES: Readonly<Record<string, MovementKind>> = {
  charge: 'capture',
  payment: 'capture',
  refund: 'refund',
  payment_refund: 'refund',
  refund_failure: 'refund_reversal',
  payment_failure_refund: 'refund_reversal',
  dispute: 'dispute',
  dispute_reversal: 'dispute_won',
};

const DISPUTE_SOURCE = /^(du|dp)_/;

function movementOf(type: string, source: string, amount_minor: number): MovementKind | null {
  if (type === 'adjustment') return DISPUTE_SOURCE.test(source) ? (amount_minor < 0 ? 'dispute' : 'dispute_won') : null;
  return STRIPE_TYPES[type] ?? null;
}

function readStripe(cells: readonly string[], at: ColumnIndex<Key>, line: number): ReportLine {
  const type = cell(cells, at.type).toLowerCase();
  if (type === '') throw new ReportError(line, 'the Type cell is empty');
  const settlement = currencyCell(cell(cells, at.currency), 'Currency', line);
  const gross = amountCell(cell(cells, at.amount), settlement, 'Amount', line);
  if (gross === null) throw new ReportError(line, 'the Amount cell is empty');
  const source = cell(cells, at.source);
  const movement = movementOf(type, source, gross);
  if (!movement) return { line, movement: null, type };
  const fee = amountCell(cell(cells, at.fee), settlement, 'Fee', line) ?? 0;
  // The shopper's currency when Stripe converted: Tollgate's movement is in that one.
  const customer = cell(cells, at.customer_currency);
  const currency = customer === '' ? settlement : currencyCell(customer, 'Customer Facing Currency', line);
  const amount = currency === settlement ? gross : amountCell(cell(cells, at.customer_amount), currency, 'Customer Facing Amount', line);
  if (amount === null) throw new ReportError(line, 'the Customer Facing Amount cell is empty');
  const { at_ms, end_ms } = timeCell(cell(cells, at.created), 'UTC', 'Created (UTC)', line);
  const refund = movement === 'refund' || movement === 'refund_reversal';
  const payment_intent = cell(cells, at.payment_intent);
  return {
    line,
    movement,
    type,
    transaction_id: cell(cells, at.tx_meta) || cell(cells, at.refund_tx_meta),
    refund_id: refund ? cell(cells, at.refund_meta) : '',
    refs: (refund ? [source, payment_intent] : [payment_intent, source]).filter((r) => r !== ''),
    reference: source || cell(cells, at.id),
    amount_minor: Math.abs(amount),
    currency,
    fee_minor: currency === settlement ? fee : null,
    at_ms,
    end_ms,
    ordinal: 1,
  };
}

export const stripeFormat: ReportFormat<Key> = {
  connector: 'stripe',
  title: "Stripe's balance transactions (the Dashboard's export or an itemised balance report)",
  columns: COLUMNS,
  read: readStripe,
};
