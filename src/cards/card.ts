// Card checks: brand and Luhn from card-validator (braintree), expiry, security-code length.
// Nothing here returns or logs a full card number.
import cardValidator from 'card-validator';

export interface CardFacts {
  brand: string;
  /** Luhn (or the brand's own check) passed and the length fits the brand. */
  valid: boolean;
  security_code_length: number;
}

export function cardFacts(pan: string): CardFacts {
  const r = cardValidator.number(pan);
  return {
    brand: r.card?.type ?? 'unknown',
    valid: r.isValid,
    security_code_length: r.card?.code.size ?? 3,
  };
}

/** PCI DSS 3.4.1: at most the BIN (first six) and the last four digits. */
export function maskPan(pan: string): string {
  if (pan.length < 10) return '*'.repeat(pan.length);
  return `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`;
}

export function fourDigitYear(year: string): number {
  const n = Number(year);
  return year.length === 2 ? 2000 + n : n;
}

/** A card is usable through the last day of its expiry month (UTC). */
export function isExpired(month: number, year: number, now_ms: number): boolean {
  const firstOfNextMonth = Date.UTC(year, month, 1); // month is 1-based, so this is next month
  return now_ms >= firstOfNextMonth;
}
