// Checks the schema cannot express: amounts against the currency's exponent and the
// components rule (docs/contract.md §5), addresses, countries, the `items` packing. Each error
// names its field; none repeats a card number.
import countries from 'i18n-iso-countries';
import ipaddr from 'ipaddr.js';
import { currencyExponent, type MinorUnits, parseAmount } from '../money/currency.js';
import { invalid } from '../web/errors.js';

export const AMOUNT_COMPONENTS = ['item_total', 'shipping', 'handling', 'tax_total', 'insurance', 'shipping_discount', 'discount'] as const;

export function requireCurrency(field: string, currency: string): void {
  if (currencyExponent(currency) === null) throw invalid(field, `"${currency}" is not a supported ISO 4217 currency`);
}

export function amountField(field: string, text: string, currency: string): MinorUnits {
  const r = parseAmount(text, currency);
  if (!r.ok) throw invalid(field, r.problem);
  return r.minor;
}

/** docs/contract.md §5: item_total + shipping + handling + tax_total + insurance − shipping_discount − discount = amount. */
export function checkComponents(body: Record<string, unknown>, amount_minor: MinorUnits, currency: string): void {
  const present = AMOUNT_COMPONENTS.filter((k) => typeof body[k] === 'string' && body[k] !== '');
  if (present.length === 0) return;
  let sum = 0;
  for (const k of present) {
    const v = amountField(k, body[k] as string, currency);
    sum += k === 'shipping_discount' || k === 'discount' ? -v : v;
  }
  if (sum !== amount_minor) {
    const fmt = (n: number) => {
      const exp = currencyExponent(currency) ?? 2;
      return (n / 10 ** exp).toFixed(exp);
    };
    throw invalid(
      'amount',
      `is ${fmt(amount_minor)} but item_total + shipping + handling + tax_total + insurance - shipping_discount - discount is ${fmt(sum)}`,
    );
  }
}

export function checkIp(field: string, value: unknown): void {
  if (value === undefined || value === '') return;
  if (typeof value !== 'string' || !ipaddr.isValid(value)) throw invalid(field, 'must be an IPv4 or IPv6 address');
  // ipaddr.isValid accepts odd IPv4 spellings (decimal, octal); insist on the usual forms.
  if (!ipaddr.IPv4.isValidFourPartDecimal(value) && !ipaddr.IPv6.isValid(value)) {
    throw invalid(field, 'must be an IPv4 address in dotted decimal or an IPv6 address');
  }
}

export function checkCountry(field: string, value: unknown): void {
  if (value === undefined || value === '') return;
  if (typeof value !== 'string' || !countries.isValid(value)) throw invalid(field, `"${String(value)}" is not an ISO 3166-1 country code`);
}

/** Items are joined by `#;#`, and each has four segments joined by `#,#`. */
export function checkItems(value: unknown): void {
  if (value === undefined || value === '') return;
  const items = String(value).split('#;#');
  if (items.length > 100) throw invalid('items', 'holds more than 100 items');
  items.forEach((item, i) => {
    const segments = item.split('#,#');
    if (segments.length !== 4) throw invalid('items', `item ${i + 1} has ${segments.length} segments; each item needs 4 joined by "#,#"`);
  });
}

export function checkTimeZone(value: unknown): void {
  if (value === undefined || value === '') return;
  const n = Number(value);
  if (!Number.isInteger(n) || n < -1440 || n > 1440) throw invalid('time_zone', 'must be an integer offset between -1440 and 1440');
}

export function checkBirthDate(value: unknown): void {
  if (value === undefined || value === '') return;
  const [a, b, y] = String(value).split('-').map(Number) as [number, number, number];
  // The spec shows NN-NN-NNNN without saying day-first or month-first; both parts must be plausible.
  const plausible = a >= 1 && a <= 31 && b >= 1 && b <= 31 && (a <= 12 || b <= 12) && y >= 1900 && y <= 2100;
  if (!plausible) throw invalid('birth_date', 'is not a real date shaped NN-NN-NNNN');
}
