// Amounts are integer minor units everywhere inside Tollgate; the ISO 4217 exponent is
// applied only here, at the wire edge (docs/contract.md §5, docs/style.md §3).
import cc from 'currency-codes';

/** Integer count of a currency's minor units (cents for USD, yen for JPY). */
export type MinorUnits = number;

const exponentCache = new Map<string, number | null>();

/** ISO 4217 minor-unit digits, or null when the code is not an active ISO currency. */
export function currencyExponent(code: string): number | null {
  const cached = exponentCache.get(code);
  if (cached !== undefined) return cached;
  let exp: number | null = null;
  if (/^[A-Z]{3}$/.test(code)) {
    const entry = cc.code(code);
    // Funds codes and metals (XAU, XDR…) have no minor units defined for payments.
    if (entry && typeof entry.digits === 'number' && !code.startsWith('X')) exp = entry.digits;
  }
  exponentCache.set(code, exp);
  return exp;
}

export type ParsedAmount = { ok: true; minor: MinorUnits } | { ok: false; problem: string };

/** Largest amount we accept in minor units: far below 2^53 so sums stay exact. */
export const MAX_AMOUNT_MINOR = 10 ** 15;

/**
 * Parses a decimal string that must carry exactly the currency's minor-unit digits
 * ("10.00" USD, "1200" JPY, "1.500" KWD).
 */
export function parseAmount(text: string, currency: string): ParsedAmount {
  const exp = currencyExponent(currency);
  if (exp === null) return { ok: false, problem: `currency "${currency}" is not a supported ISO 4217 code` };
  const re = exp === 0 ? /^(0|[1-9]\d{0,15})$/ : new RegExp(`^(0|[1-9]\\d{0,15})\\.(\\d{${exp}})$`);
  const m = re.exec(text);
  if (!m) {
    const example = exp === 0 ? '1200' : `10.${'0'.repeat(exp)}`;
    return { ok: false, problem: `must be a decimal with exactly ${exp} decimal places for ${currency} (e.g. "${example}")` };
  }
  const whole = Number(m[1]);
  const frac = exp === 0 ? 0 : Number(m[2]);
  const minor = whole * 10 ** exp + frac;
  if (!Number.isSafeInteger(minor) || minor > MAX_AMOUNT_MINOR) return { ok: false, problem: 'is too large' };
  return { ok: true, minor };
}

export function formatAmount(minor: MinorUnits, currency: string): string {
  const exp = currencyExponent(currency);
  if (exp === null) throw new Error(`unknown currency ${currency}`);
  if (exp === 0) return String(minor);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const unit = 10 ** exp;
  return `${sign}${Math.floor(abs / unit)}.${String(abs % unit).padStart(exp, '0')}`;
}
