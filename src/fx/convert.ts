// Currency conversion for payouts (docs/contract.md §17; issue 12 item 2), pure and exact: rates
// are decimals held as integers scaled by 10^RATE_SCALE (BigInt arithmetic, never floats),
// amounts are integer minor units with each currency's ISO 4217 exponent.
//
// Rounding (stated here, tested in convert.test.ts):
// - the rate the merchant gets is the market rate less the account's markup, rounded DOWN
//   to the rate's precision;
// - a fixed amount the beneficiary receives costs the payer the source amount rounded UP;
// - a fixed amount the payer sends buys the payment amount rounded DOWN.
// So a conversion never creates money: what the beneficiary receives is never worth more,
// at the applied rate, than what the payer pays, and the difference is below one minor unit
// of the currency rounded (never in the gateway's disfavour).
import { currencyExponent } from '../money/currency.js';

/** Decimal places a rate may carry. */
export const RATE_SCALE = 10;
const SCALE = 10n ** BigInt(RATE_SCALE);
/** The markup an account may carry at most: 10% (1,000 basis points). */
export const MAX_MARKUP_BP = 1_000;

/** A rate: units of the payment (quote) currency for one unit of the source (base) currency, times 10^RATE_SCALE. */
export type ScaledRate = bigint;

/** `1.0842` → 10842000000n; null unless a positive decimal with at most RATE_SCALE places and at most 9 integer digits. */
export function parseRate(text: string): ScaledRate | null {
  const m = /^(\d{1,9})(?:\.(\d{1,10}))?$/.exec(text);
  if (!m) return null;
  const rate = BigInt(m[1] as string) * SCALE + BigInt((m[2] ?? '').padEnd(RATE_SCALE, '0'));
  return rate > 0n ? rate : null;
}

/** 10842000000n → `1.0842` (trailing zeros dropped, at least one decimal). */
export function formatRate(rate: ScaledRate): string {
  const whole = rate / SCALE;
  const frac = (rate % SCALE).toString().padStart(RATE_SCALE, '0').replace(/0+$/, '');
  return `${whole}.${frac || '0'}`;
}

/** The inverse rate (quote → base), rounded down. */
export function invertRate(rate: ScaledRate): ScaledRate {
  if (rate <= 0n) throw new RangeError('a rate must be positive');
  return (SCALE * SCALE) / rate;
}

/** The rate less `markup_bp` basis points, rounded down (the merchant's rate). */
export function applyMarkup(rate: ScaledRate, markup_bp: number): ScaledRate {
  if (!Number.isInteger(markup_bp) || markup_bp < 0 || markup_bp > MAX_MARKUP_BP) throw new RangeError(`markup must be 0 to ${MAX_MARKUP_BP} basis points`);
  return (rate * BigInt(10_000 - markup_bp)) / 10_000n;
}

export interface Conversion {
  source_currency: string;
  payment_currency: string;
  /** The applied rate (payment units per source unit). */
  rate: ScaledRate;
  source_minor: number;
  payment_minor: number;
}

function exponents(source_currency: string, payment_currency: string): { es: bigint; ep: bigint } {
  const es = currencyExponent(source_currency);
  const ep = currencyExponent(payment_currency);
  if (es === null) throw new RangeError(`unknown currency ${source_currency}`);
  if (ep === null) throw new RangeError(`unknown currency ${payment_currency}`);
  return { es: 10n ** BigInt(es), ep: 10n ** BigInt(ep) };
}

function toSafe(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('the converted amount is too large');
  return Number(n);
}

/** The beneficiary receives `payment_minor`: what the payer pays, rounded up. */
export function sourceFor(payment_minor: number, rate: ScaledRate, source_currency: string, payment_currency: string): Conversion {
  if (!Number.isSafeInteger(payment_minor) || payment_minor < 0) throw new RangeError('payment_minor must be a whole number >= 0');
  if (rate <= 0n) throw new RangeError('a rate must be positive');
  const { es, ep } = exponents(source_currency, payment_currency);
  // source = payment / 10^ep / rate * 10^es, rounded up.
  const num = BigInt(payment_minor) * SCALE * es;
  const den = rate * ep;
  const source = (num + den - 1n) / den;
  return { source_currency, payment_currency, rate, source_minor: toSafe(source), payment_minor };
}

/** The payer sends `source_minor`: what the beneficiary receives, rounded down. */
export function paymentFor(source_minor: number, rate: ScaledRate, source_currency: string, payment_currency: string): Conversion {
  if (!Number.isSafeInteger(source_minor) || source_minor < 0) throw new RangeError('source_minor must be a whole number >= 0');
  if (rate <= 0n) throw new RangeError('a rate must be positive');
  const { es, ep } = exponents(source_currency, payment_currency);
  const payment = (BigInt(source_minor) * rate * ep) / (SCALE * es);
  return { source_currency, payment_currency, rate, source_minor, payment_minor: toSafe(payment) };
}
