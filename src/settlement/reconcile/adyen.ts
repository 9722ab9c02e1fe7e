// Adyen's Settlement details report (CSV), as its documentation lays it out: "Settlement detail
// report structure" (docs.adyen.com/reporting/settlement-detail-report, its structure page): one
// header row, then one line per booking with Company Account, Merchant Account, Psp Reference,
// Merchant Reference, Payment Method, Creation Date ("YYYY-MM-DD HH:MM:SS"), TimeZone (the
// company account's zone: "BST, CET, CEST, etc."), Type, Modification Reference, Gross Currency,
// Gross Debit (GC), Gross Credit (GC), Exchange Rate, Net Currency, Net Debit (NC), Net Credit
// (NC), Commission (NC), Markup (NC), Scheme Fees (NC), Interchange (NC), Payment Method
// Variant, Modification Merchant Reference, Batch Number, then reserved columns. Amounts are
// decimals in the currency's unit.
//
// What names our movement (src/processors/adyen/wire.ts): a payment's `reference` is our
// transaction id, so `Merchant Reference` is it on every line of that payment; a refund's
// `reference` is our refund id, and Adyen reports a modification's reference as `Modification
// Merchant Reference` (the API: "Your reference for the payment modification … visible in
// Customer Area and in reports"). A capture's reference is the transaction id again.
//
// The fee of a line is the sum of its four fee columns (Commission, Markup, Scheme Fees,
// Interchange, all in the net currency): Adyen fills Commission alone on blended pricing and
// the other three on Interchange++. It is compared only when the net currency is the line's.
import type { MovementKind } from '../../db/tables/reconciliation.js';
import { amountCell, type ColumnIndex, type ColumnSpec, cell, currencyCell, ReportError, timeCell } from './columns.js';
import type { ReportFormat, ReportLine } from './format.js';

const KEYS = [
  'psp',
  'merchant_ref',
  'created',
  'zone',
  'type',
  'modification_ref',
  'gross_currency',
  'gross_debit',
  'gross_credit',
  'net_currency',
  'commission',
  'markup',
  'scheme_fees',
  'interchange',
  'modification_merchant_ref',
] as const;
type Key = (typeof KEYS)[number];

const NAMES: Record<Key, string> = {
  psp: 'Psp Reference',
  merchant_ref: 'Merchant Reference',
  created: 'Creation Date',
  zone: 'TimeZone',
  type: 'Type',
  modification_ref: 'Modification Reference',
  gross_currency: 'Gross Currency',
  gross_debit: 'Gross Debit (GC)',
  gross_credit: 'Gross Credit (GC)',
  net_currency: 'Net Currency',
  commission: 'Commission (NC)',
  markup: 'Markup (NC)',
  scheme_fees: 'Scheme Fees (NC)',
  interchange: 'Interchange (NC)',
  modification_merchant_ref: 'Modification Merchant Reference',
};

/** Every column above is in Adyen's standard layout: the file must have them all. */
const COLUMNS: readonly ColumnSpec<Key>[] = KEYS.map((key) => ({ key, names: [NAMES[key]], required: true }));

/**
 * The journal types Tollgate has a movement for (Adyen's Type values), and which of a payment's
 * dispute postings a dispute line is. Every other type (Fee, MiscCosts, MerchantPayout,
 * DepositCorrection, InvoiceDeduction, Balancetransfer, PaymentCost, …) is not applicable.
 */
export const ADYEN_TYPES: Readonly<Record<string, { movement: MovementKind; ordinal: number }>> = {
  Settled: { movement: 'capture', ordinal: 1 },
  Refunded: { movement: 'refund', ordinal: 1 },
  RefundedReversed: { movement: 'refund_reversal', ordinal: 1 },
  Chargeback: { movement: 'dispute', ordinal: 1 },
  ChargebackReversed: { movement: 'dispute_won', ordinal: 1 },
  SecondChargeback: { movement: 'dispute', ordinal: 2 },
};

const FEE_KEYS = ['commission', 'markup', 'scheme_fees', 'interchange'] as const;

function readAdyen(cells: readonly string[], at: ColumnIndex<Key>, line: number): ReportLine {
  const type = cell(cells, at.type);
  if (type === '') throw new ReportError(line, 'the Type cell is empty');
  const tracked = ADYEN_TYPES[type];
  if (!tracked) return { line, movement: null, type };
  const currency = currencyCell(cell(cells, at.gross_currency), NAMES.gross_currency, line);
  const credit = amountCell(cell(cells, at.gross_credit), currency, NAMES.gross_credit, line);
  const debit = amountCell(cell(cells, at.gross_debit), currency, NAMES.gross_debit, line);
  if (credit === null && debit === null) throw new ReportError(line, `a ${type} line has neither ${NAMES.gross_debit} nor ${NAMES.gross_credit}`);
  const net_currency = currencyCell(cell(cells, at.net_currency), NAMES.net_currency, line);
  let fee = 0;
  for (const k of FEE_KEYS) fee += amountCell(cell(cells, at[k]), net_currency, NAMES[k], line) ?? 0;
  const { at_ms, end_ms } = timeCell(cell(cells, at.created), cell(cells, at.zone), NAMES.created, line);
  const refund = tracked.movement === 'refund' || tracked.movement === 'refund_reversal';
  const psp = cell(cells, at.psp);
  const modification = cell(cells, at.modification_ref);
  return {
    line,
    movement: tracked.movement,
    type,
    transaction_id: cell(cells, at.merchant_ref),
    refund_id: refund ? cell(cells, at.modification_merchant_ref) : '',
    refs: [refund ? modification : psp].filter((r) => r !== ''),
    reference: modification || psp,
    amount_minor: Math.abs((credit ?? 0) - (debit ?? 0)),
    currency,
    fee_minor: net_currency === currency ? fee : null,
    at_ms,
    end_ms,
    ordinal: tracked.ordinal,
  };
}

export const adyenFormat: ReportFormat<Key> = {
  connector: 'adyen',
  title: 'an Adyen settlement details report',
  columns: COLUMNS,
  read: readAdyen,
};
