// What a payout costs and what it delivers (docs/contract.md §17), pure and exact. Stated rules
// (tested in quote.test.ts):
//
// - `amount_payer_pays` (source currency) is the part converted for the beneficiary;
//   `fee_amount` (source currency) is the gateway's fee; the account's available balance
//   gives exactly `amount_payer_pays + fee_amount`, in both `fee_paid_by` modes.
// - The fee is charged on the gross source amount G: percent (half up) + fixed, plus the
//   SWIFT charge when `swift_charge_option` is PAYER.
// - `fee_paid_by` PAYER: G is the source amount (sent, or what `payment_amount` costs,
//   rounded up); the payer pays G and the fee on top; the beneficiary gets all of it.
// - `fee_paid_by` BENEFICIARY: the fee comes out of G, the rest (G − fee) is converted, so
//   the beneficiary receives less than a sent `payment_amount`; G is the whole debit, except
//   that a SWIFT charge under `swift_charge_option` PAYER is still the payer's (on top).
// - Conversion: convert.ts (a fixed payment costs the source rounded up, a fixed source buys
//   the payment rounded down). Money is never created: what the beneficiary receives is
//   never worth more, at the applied rate, than `amount_payer_pays`.
import { paymentFor, type ScaledRate, sourceFor } from '../fx/convert.js';
import { feeMinor } from '../money/fee.js';

export interface PayoutPrice {
  percent_bp: number;
  fixed_minor: number;
  /** Added when a SWIFT payout's swift_charge_option is PAYER. */
  swift_payer_minor: number;
}

export const NO_PRICE: PayoutPrice = { percent_bp: 0, fixed_minor: 0, swift_payer_minor: 0 };

export interface QuoteInput {
  source_currency: string;
  payment_currency: string;
  /** The applied rate (markup included): payment units per source unit. */
  rate: ScaledRate;
  /** Exactly one of the two, in minor units. */
  payment_minor?: number;
  source_minor?: number;
  fee_paid_by: 'PAYER' | 'BENEFICIARY';
  payment_method: 'LOCAL' | 'SWIFT';
  swift_charge_option: 'SHARED' | 'PAYER';
  price: PayoutPrice;
}

export interface Quote {
  amount_payer_pays: number;
  amount_beneficiary_receives: number;
  fee_amount: number;
}

export type QuoteResult = { ok: true; quote: Quote } | { ok: false; field: 'payment_amount' | 'source_amount'; problem: string };

/** The fee on a gross source amount (half up on the percentage). */
export function payoutFee(gross_minor: number, price: PayoutPrice, payment_method: 'LOCAL' | 'SWIFT', swift_charge_option: 'SHARED' | 'PAYER'): number {
  const swift = payment_method === 'SWIFT' && swift_charge_option === 'PAYER' ? price.swift_payer_minor : 0;
  return feeMinor(gross_minor, price.percent_bp, price.fixed_minor) + swift;
}

export function quotePayout(q: QuoteInput): QuoteResult {
  const field = q.payment_minor !== undefined ? 'payment_amount' : 'source_amount';
  const sent = q.payment_minor ?? q.source_minor;
  if (sent === undefined || (q.payment_minor !== undefined) === (q.source_minor !== undefined)) {
    throw new RangeError('exactly one of payment_minor and source_minor');
  }
  if (sent <= 0) return { ok: false, field, problem: 'must be greater than zero' };
  try {
    return quoteChecked(q, field);
  } catch (e) {
    // convert.ts refuses a converted amount past 2^53 minor units.
    if (e instanceof RangeError) return { ok: false, field, problem: 'is too large once converted' };
    throw e;
  }
}

function quoteChecked(q: QuoteInput, field: 'payment_amount' | 'source_amount'): QuoteResult {
  const gross =
    q.payment_minor !== undefined ? sourceFor(q.payment_minor, q.rate, q.source_currency, q.payment_currency).source_minor : (q.source_minor as number);
  const fee = payoutFee(gross, q.price, q.payment_method, q.swift_charge_option);
  // The SWIFT charge of swift_charge_option PAYER is the payer's in both modes: with
  // BENEFICIARY only the gateway's own fee comes out of the amount.
  const swift = payoutFee(0, { percent_bp: 0, fixed_minor: 0, swift_payer_minor: q.price.swift_payer_minor }, q.payment_method, q.swift_charge_option);
  let pays: number;
  let receives: number;
  if (q.fee_paid_by === 'PAYER') {
    pays = gross;
    receives = q.payment_minor ?? paymentFor(gross, q.rate, q.source_currency, q.payment_currency).payment_minor;
  } else {
    pays = gross - (fee - swift);
    if (pays <= 0) return { ok: false, field, problem: `is too small: the fee (${fee} minor units of ${q.source_currency}) takes all of it` };
    receives = paymentFor(pays, q.rate, q.source_currency, q.payment_currency).payment_minor;
  }
  if (receives <= 0) return { ok: false, field, problem: `is too small: the beneficiary would receive nothing in ${q.payment_currency}` };
  if (!Number.isSafeInteger(pays + fee)) return { ok: false, field, problem: 'is too large' };
  return { ok: true, quote: { amount_payer_pays: pays, amount_beneficiary_receives: receives, fee_amount: fee } };
}
