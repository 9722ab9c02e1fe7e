// Bank details of a payout's beneficiary (docs/contract.md §17): pure checks, no database. The
// schema (schema.ts) has already bounded every field; this decides which fields the
// destination needs and whether they are well formed, and derives the clearing system.
//
// Rules, in the order they are applied (each failure is HTTP 400 naming the field by its
// full path, `beneficiary.bank_details.iban`; a message never repeats an account number
// or IBAN beyond its last four characters):
//
//  1. `beneficiary.bank_details` is required.
//  2. `payment_currency` is an ISO 4217 currency; `account_currency`, when sent, is one too
//     and equals `payment_currency` (no conversion happens at the beneficiary's bank).
//  3. `iban`, when sent (spaces and dashes ignored, any case), is a valid IBAN: a country
//     that uses IBAN, its length and format, the check digits, the national check digits
//     where ibantools knows them. Swiss QR-IBANs are refused (they only take QR bills).
//  4. The bank's country is `bank_country_code`, else the IBAN's country, else
//     `beneficiary.address.country_code`; it is an ISO 3166-1 alpha-2 code, and an IBAN
//     must belong to it.
//  5. `swift_code`, when sent (any case, spaces ignored), is a well-formed BIC of 8 or 11
//     characters with a known country.
//  6. The clearing system: `SWIFT` for `SWIFT` payouts; for `LOCAL`, the table below by
//     (country, currency); a pair with no local rail is refused on `payment_method`.
//  7. The fields of that system (spaces and dashes in account numbers and bank codes are
//     ignored; the answer keeps them as sent, CheckedBank holds them normalised):
//       SEPA (a SEPA country, EUR)   iban of that country; swift_code optional (shape only)
//       SIC (CH, LI / CHF), ELIXIR (PL / PLN), BANKGIROT (SE / SEK): iban of that country
//       ACH (US / USD)               account_number 4–17 digits; bank_code ABA routing
//                                    number, 9 digits, a Federal Reserve prefix (00–12,
//                                    21–32, 61–72, 80) and the ABA check digit
//       FASTER_PAYMENTS (GB / GBP)   account_number 8 digits and bank_code sort code
//                                    6 digits, or a GB iban (they are taken from it, and
//                                    must match when sent as well)
//       BECS (AU / AUD)              account_number 5–9 digits; bank_code BSB 6 digits
//       BECS (NZ / NZD)              account_number 15–16 digits (bank, branch, account,
//                                    suffix); no bank_code (it is in the number)
//       EFT (CA / CAD)               account_number 7–12 digits; bank_code 8 digits:
//                                    institution number (3) then transit number (5)
//       ZENGIN (JP / JPY)            account_number 7 digits; bank_code 7 digits: bank
//                                    code (4) then branch code (3)
//       FAST (SG / SGD)              account_number 4–34 letters or digits; bank_code
//                                    7 digits (bank 4, branch 3) or a swift_code
//       FPS (HK / HKD)               account_number 4–34 letters or digits; bank_code the
//                                    3-digit clearing code, or a swift_code
//       NEFT (IN / INR)              account_number 9–18 digits; bank_code IFSC
//                                    (4 letters, 0, 6 letters or digits)
//       SPEI (MX / MXN)              account_number the 18-digit CLABE with its check digit
//       SWIFT (any country)          swift_code required, a BIC of the bank's country;
//                                    iban required where the country is in the IBAN
//                                    registry, else account_number 4–34 letters or digits
//                                    (or an iban where the country has an unofficial one)
//     A swift_code sent on a local rail must still be well formed (rule 5); for the rails
//     that accept it as the bank's identity (FAST, FPS) it must be of the bank's country.
import countries from 'i18n-iso-countries';
import { electronicFormatIBAN, extractBIC, extractIBAN, getCountrySpecifications, isSEPACountry, ValidationErrorsIBAN, validateIBAN } from 'ibantools';
import { currencyExponent } from '../money/currency.js';
import { invalid } from '../web/errors.js';
import type { BankDetailsInput } from './schema.js';

export type ClearingSystem =
  | 'ACH'
  | 'SEPA'
  | 'FASTER_PAYMENTS'
  | 'BECS'
  | 'EFT'
  | 'ZENGIN'
  | 'FAST'
  | 'FPS'
  | 'NEFT'
  | 'SPEI'
  | 'SIC'
  | 'ELIXIR'
  | 'BANKGIROT'
  | 'SWIFT';

export type PayoutMethod = 'LOCAL' | 'SWIFT';

export interface CheckedBank {
  local_clearing_system: ClearingSystem;
  /** The bank's country (ISO 3166-1 alpha-2). */
  country: string;
  /** Electronic format: uppercase, no spaces. */
  iban?: string;
  /** Uppercased, no spaces. */
  swift_code?: string;
  /** Without spaces and dashes (for FASTER_PAYMENTS from an IBAN: taken from it). */
  account_number?: string;
  /** The bank code the rail uses, normalised (ABA, sort code, BSB, IFSC, …). */
  bank_code?: string;
}

export interface BankContext {
  payment_currency: string;
  payment_method: PayoutMethod;
  /** `beneficiary.address.country_code`: the bank's country when nothing else gives it. */
  fallback_country?: string;
}

const F = 'beneficiary.bank_details';
const field = (name: string) => `${F}.${name}`;

/** "ending 1116", only when at least four more characters stay hidden; else nothing. */
const ending = (s: string) => (s.length >= 8 ? ` (ending ${s.slice(-4)})` : '');

// ---- the local rails ------------------------------------------------------------------

interface Format {
  re: RegExp;
  /** What the value must be, as a predicate: "must be …". */
  says: string;
  /** A further check on the normalised value; returns the problem, or null. */
  check?: (value: string) => string | null;
}

interface LocalRule {
  system: ClearingSystem;
  /** `required`: the IBAN is the account; `alternative`: an IBAN may replace account_number and bank_code. */
  iban?: 'required' | 'alternative';
  account?: Format;
  bankCode?: Format & { name: string; orSwift?: boolean };
}

const ALNUM_4_34: Format = { re: /^[A-Z0-9]{4,34}$/i, says: 'must be 4 to 34 letters or digits' };

/** ABA routing number: Federal Reserve prefix and the 3-7-1 weighted check digit. */
export function abaProblem(n: string): string | null {
  const prefix = Number(n.slice(0, 2));
  const prefixOk = prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!prefixOk) return 'is not an ABA routing number: its first two digits are not a Federal Reserve routing symbol';
  const d = [...n].map(Number) as number[];
  const sum = d.reduce((acc, digit, i) => acc + digit * ([3, 7, 1][i % 3] as number), 0);
  return sum % 10 === 0 ? null : 'is not an ABA routing number: its check digit does not match';
}

/** CLABE (Mexico): 18 digits, the last a check digit over the first 17 with weights 3, 7, 1. */
export function clabeProblem(n: string): string | null {
  const d = [...n].map(Number) as number[];
  const sum = d.slice(0, 17).reduce((acc, digit, i) => acc + ((digit * ([3, 7, 1][i % 3] as number)) % 10), 0);
  return (10 - (sum % 10)) % 10 === d[17] ? null : 'is not a CLABE: its check digit does not match';
}

const LOCAL: Record<string, LocalRule> = {
  'US/USD': {
    system: 'ACH',
    account: { re: /^\d{4,17}$/, says: 'must be 4 to 17 digits for ACH' },
    bankCode: { name: 'ABA routing number', re: /^\d{9}$/, says: 'must be the 9-digit ABA routing number for ACH', check: abaProblem },
  },
  'GB/GBP': {
    system: 'FASTER_PAYMENTS',
    iban: 'alternative',
    account: { re: /^\d{8}$/, says: 'must be 8 digits for FASTER_PAYMENTS' },
    bankCode: { name: 'sort code', re: /^\d{6}$/, says: 'must be the 6-digit sort code for FASTER_PAYMENTS' },
  },
  'AU/AUD': {
    system: 'BECS',
    account: { re: /^\d{5,9}$/, says: 'must be 5 to 9 digits for BECS' },
    bankCode: { name: 'BSB', re: /^\d{6}$/, says: 'must be the 6-digit BSB number for BECS' },
  },
  'NZ/NZD': {
    system: 'BECS',
    account: { re: /^\d{15,16}$/, says: 'must be the 15 or 16 digits of bank, branch, account and suffix for BECS in NZ' },
  },
  'CA/CAD': {
    system: 'EFT',
    account: { re: /^\d{7,12}$/, says: 'must be 7 to 12 digits for EFT' },
    bankCode: {
      name: 'institution and transit number',
      re: /^\d{8}$/,
      says: 'must be 8 digits for EFT: the institution number (3) then the transit number (5)',
    },
  },
  'JP/JPY': {
    system: 'ZENGIN',
    account: { re: /^\d{7}$/, says: 'must be 7 digits for ZENGIN' },
    bankCode: { name: 'bank and branch code', re: /^\d{7}$/, says: 'must be 7 digits for ZENGIN: the bank code (4) then the branch code (3)' },
  },
  'SG/SGD': {
    system: 'FAST',
    account: ALNUM_4_34,
    bankCode: { name: 'bank and branch code', re: /^\d{7}$/, says: 'must be 7 digits for FAST: the bank code (4) then the branch code (3)', orSwift: true },
  },
  'HK/HKD': {
    system: 'FPS',
    account: ALNUM_4_34,
    bankCode: { name: 'clearing code', re: /^\d{3}$/, says: 'must be the 3-digit bank clearing code for FPS', orSwift: true },
  },
  'IN/INR': {
    system: 'NEFT',
    account: { re: /^\d{9,18}$/, says: 'must be 9 to 18 digits for NEFT' },
    bankCode: { name: 'IFSC', re: /^[A-Z]{4}0[A-Z0-9]{6}$/, says: 'must be the 11-character IFSC for NEFT (4 letters, 0, then 6 letters or digits)' },
  },
  'MX/MXN': {
    system: 'SPEI',
    account: { re: /^\d{18}$/, says: 'must be the 18-digit CLABE for SPEI', check: clabeProblem },
  },
  'CH/CHF': { system: 'SIC', iban: 'required' },
  'LI/CHF': { system: 'SIC', iban: 'required' },
  'PL/PLN': { system: 'ELIXIR', iban: 'required' },
  'SE/SEK': { system: 'BANKGIROT', iban: 'required' },
};

const SEPA_RULE: LocalRule = { system: 'SEPA', iban: 'required' };

function localRule(country: string, currency: string): LocalRule | null {
  const c = country.toUpperCase();
  const cur = currency.toUpperCase();
  if (cur === 'EUR' && isSEPACountry(c)) return SEPA_RULE;
  return LOCAL[`${c}/${cur}`] ?? null;
}

/** The clearing system of a payout: `SWIFT` for SWIFT; for LOCAL the table's, or null when there is no local rail. */
export function clearingSystemFor(country: string, currency: string, method: PayoutMethod): ClearingSystem | null {
  if (method === 'SWIFT') return 'SWIFT';
  return localRule(country, currency)?.system ?? null;
}

/** The (country, currency) pairs with a local rail besides SEPA's (every SEPA country in EUR). */
export const LOCAL_RAILS: ReadonlyArray<{ country: string; currency: string; system: ClearingSystem }> = Object.entries(LOCAL).map(([pair, rule]) => {
  const [country, currency] = pair.split('/') as [string, string];
  return { country, currency, system: rule.system };
});

/** Whether payouts to this country need an IBAN (it is in the IBAN registry). */
export function usesIban(country: string): boolean {
  const spec = getCountrySpecifications()[country];
  return Boolean(spec?.IBANRegistry && spec.chars);
}

/** Whether the country has an IBAN format at all (registry or not). */
function hasIbanFormat(country: string): boolean {
  return Boolean(getCountrySpecifications()[country]?.chars);
}

// ---- the checks -----------------------------------------------------------------------

const present = (v: string | undefined): v is string => typeof v === 'string' && v.trim() !== '';
const compact = (v: string) => v.replace(/[\s-]/g, '');

function checkCurrency(name: string, code: string): void {
  if (!/^[A-Z]{3}$/.test(code) || currencyExponent(code) === null) throw invalid(name, `"${code}" is not an ISO 4217 currency code`);
}

function checkCountryCode(name: string, code: string): void {
  if (!/^[A-Z]{2}$/.test(code) || !countries.isValid(code)) throw invalid(name, `"${code}" is not an ISO 3166-1 alpha-2 country code`);
}

/** Validates an IBAN and returns it in electronic format. */
function checkIban(raw: string): string {
  const iban = electronicFormatIBAN(raw) ?? '';
  const name = field('iban');
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$/.test(iban)) {
    throw invalid(name, 'is not an IBAN: it must be a country’s two letters, two check digits, then up to 30 letters or digits');
  }
  const country = iban.slice(0, 2);
  const result = validateIBAN(iban, { allowQRIBAN: false });
  if (result.valid) return iban;
  const errors = new Set(result.errorCodes);
  const spec = getCountrySpecifications()[country];
  if (errors.has(ValidationErrorsIBAN.NoIBANCountry)) throw invalid(name, `is not an IBAN: ${country} does not use IBANs`);
  if (errors.has(ValidationErrorsIBAN.WrongBBANLength)) {
    throw invalid(name, `has ${iban.length} characters${ending(iban)}, but a ${country} IBAN has ${spec?.chars ?? 'another number of'}`);
  }
  if (errors.has(ValidationErrorsIBAN.WrongBBANFormat)) throw invalid(name, `does not have the format of a ${country} IBAN${ending(iban)}`);
  if (errors.has(ValidationErrorsIBAN.ChecksumNotNumber) || errors.has(ValidationErrorsIBAN.WrongIBANChecksum)) {
    throw invalid(name, `has wrong check digits${ending(iban)}: a character is mistyped or missing`);
  }
  if (errors.has(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) {
    throw invalid(name, `has a wrong national check digit in its account or bank code${ending(iban)}`);
  }
  if (errors.has(ValidationErrorsIBAN.QRIBANNotAllowed)) {
    throw invalid(name, 'is a Swiss QR-IBAN, which only receives QR-bill payments: send the account’s ordinary IBAN');
  }
  throw invalid(name, `is not a valid IBAN${ending(iban)}`);
}

/** Validates a BIC's shape and returns it uppercased with its country. */
function checkBic(raw: string): { bic: string; country: string } {
  const bic = raw.replace(/\s/g, '').toUpperCase();
  const name = field('swift_code');
  if (!/^[A-Z0-9]{8}([A-Z0-9]{3})?$/.test(bic)) throw invalid(name, `"${bic}" is not a BIC: it must be 8 or 11 letters or digits`);
  const extracted = extractBIC(bic);
  if (!extracted.valid || !extracted.countryCode) {
    const letters = bic.slice(4, 6);
    if (/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}/.test(bic)) throw invalid(name, `"${bic}" is not a BIC: ${letters} (characters 5 and 6) is not a country`);
    throw invalid(
      name,
      `"${bic}" is not a BIC: it must be 4 letters (the bank), 2 letters (the country), 2 letters or digits (the place) and an optional branch of 3`,
    );
  }
  return { bic, country: extracted.countryCode };
}

function checkFormat(name: string, value: string, format: Format): void {
  if (!format.re.test(value)) throw invalid(name, format.says);
  const problem = format.check?.(value);
  if (problem) throw invalid(name, problem);
}

/**
 * Checks a beneficiary's bank details for a payout and derives the clearing system
 * (rules in the header). Throws `invalid(<full field path>, …)`; returns the normalised
 * identifiers.
 */
export function checkBankDetails(bank: BankDetailsInput | undefined, ctx: BankContext): CheckedBank {
  if (!bank) throw invalid(F, 'is required');
  const currency = ctx.payment_currency;
  checkAccountCurrency(bank, currency);
  const iban = present(bank.iban) ? checkIban(bank.iban) : undefined;
  const country = bankCountry(bank, iban, ctx);
  const bic = present(bank.swift_code) ? checkBic(bank.swift_code) : undefined;
  const sent: SentBank = {
    country,
    iban,
    bic,
    accountNumber: present(bank.account_number) ? compact(bank.account_number) : undefined,
    bankCode: present(bank.bank_code) ? compact(bank.bank_code).toUpperCase() : undefined,
  };
  return ctx.payment_method === 'SWIFT' ? checkSwiftBank(sent) : checkLocalBank(sent, currency);
}

/** The bank details' own identifiers, each checked on its own. */
interface SentBank {
  country: string;
  iban: string | undefined;
  bic: { bic: string; country: string } | undefined;
  accountNumber: string | undefined;
  bankCode: string | undefined;
}

/** The checked details a clearing system takes: the country, the IBAN and BIC when sent, and `more`. */
function checkedBank(sent: SentBank, system: ClearingSystem, more: Partial<CheckedBank>): CheckedBank {
  return {
    local_clearing_system: system,
    country: sent.country,
    ...(sent.iban ? { iban: sent.iban } : {}),
    ...(sent.bic ? { swift_code: sent.bic.bic } : {}),
    ...more,
  };
}

/** An account_currency, when sent, is a currency and the payment currency. */
function checkAccountCurrency(bank: BankDetailsInput, currency: string): void {
  checkCurrency('payment_currency', currency);
  if (!present(bank.account_currency)) return;
  checkCurrency(field('account_currency'), bank.account_currency);
  if (bank.account_currency !== currency) {
    throw invalid(field('account_currency'), `is ${bank.account_currency} but payment_currency is ${currency}: the account must receive the payment currency`);
  }
}

/** The bank's country: bank_country_code, else the IBAN's, else the beneficiary's address; an IBAN must be of it. */
function bankCountry(bank: BankDetailsInput, iban: string | undefined, ctx: BankContext): string {
  const ibanCountry = iban?.slice(0, 2);
  let country: string;
  if (present(bank.bank_country_code)) {
    country = bank.bank_country_code;
    checkCountryCode(field('bank_country_code'), country);
  } else if (ibanCountry) {
    country = ibanCountry;
  } else if (present(ctx.fallback_country)) {
    country = ctx.fallback_country;
    checkCountryCode('beneficiary.address.country_code', country);
  } else {
    throw invalid(field('bank_country_code'), 'is required (or an iban, or beneficiary.address.country_code, to give the bank’s country)');
  }
  if (ibanCountry && ibanCountry !== country) {
    throw invalid(field('iban'), `is a ${ibanCountry} IBAN${ending(iban!)}, but the bank’s country is ${country}`);
  }
  return country;
}

/** SWIFT: a BIC of the bank's country, and the IBAN where the country uses them, else an account number. */
function checkSwiftBank(sent: SentBank): CheckedBank {
  const { country, iban, bic, accountNumber } = sent;
  if (!bic) throw invalid(field('swift_code'), 'is required for SWIFT payouts');
  if (bic.country !== country) {
    throw invalid(field('swift_code'), `is the BIC of a bank in ${bic.country} (characters 5 and 6), but the bank’s country is ${country}`);
  }
  if (iban) return checkedBank(sent, 'SWIFT', accountNumber ? { account_number: accountNumber } : {});
  if (usesIban(country)) throw invalid(field('iban'), `is required for SWIFT payouts to ${country}, which uses IBANs`);
  if (!accountNumber) {
    throw invalid(field('account_number'), `is required for SWIFT payouts to ${country}${hasIbanFormat(country) ? ' (or an iban)' : ''}`);
  }
  checkFormat(field('account_number'), accountNumber, ALNUM_4_34);
  return checkedBank(sent, 'SWIFT', { account_number: accountNumber });
}

/** LOCAL: the country's and currency's clearing system (localRule) and the identifiers it needs. */
function checkLocalBank(sent: SentBank, currency: string): CheckedBank {
  const { country, iban, accountNumber, bankCode } = sent;
  const rule = localRule(country, currency);
  if (!rule) throw invalid('payment_method', `LOCAL payouts to ${country} in ${currency} are not available; use SWIFT`);
  if (rule.iban === 'required') {
    if (!iban) throw invalid(field('iban'), `is required for ${rule.system} payouts`);
    return checkedBank(sent, rule.system, accountNumber ? { account_number: accountNumber } : {});
  }
  if (rule.iban === 'alternative' && iban) {
    // A GB IBAN holds the sort code (after the 4-letter bank code) and the 8-digit account;
    // account_number and bank_code, when sent as well, must be the same.
    const bban = extractIBAN(iban).bban ?? '';
    const derived = { bank_code: bban.slice(4, 10), account_number: bban.slice(10) };
    if (accountNumber && accountNumber !== derived.account_number) throw invalid(field('account_number'), 'is not the account number in the iban');
    if (bankCode && bankCode !== derived.bank_code) throw invalid(field('bank_code'), `is not the ${rule.bankCode?.name ?? 'bank code'} in the iban`);
    return checkedBank(sent, rule.system, derived);
  }
  const viaIban = rule.iban === 'alternative' ? ' (or an iban instead of account_number and bank_code)' : '';
  if (rule.account) {
    if (!accountNumber) throw invalid(field('account_number'), `is required for ${rule.system} payouts${viaIban}`);
    checkFormat(field('account_number'), accountNumber, rule.account);
  }
  const code = rule.bankCode ? localBankCode(sent, rule, rule.bankCode, viaIban) : undefined;
  return checkedBank(sent, rule.system, { ...(accountNumber ? { account_number: accountNumber } : {}), ...(code ? { bank_code: code } : {}) });
}

/** The bank code a LOCAL rule asks for, in its format; where a BIC may identify the bank instead, undefined when one is sent. */
function localBankCode(sent: SentBank, rule: LocalRule, spec: NonNullable<LocalRule['bankCode']>, viaIban: string): string | undefined {
  const { country, bic, bankCode } = sent;
  // Where a BIC may identify the bank, one that is sent must be of the bank's country.
  if (spec.orSwift && bic && bic.country !== country) {
    throw invalid(field('swift_code'), `is the BIC of a bank in ${bic.country} (characters 5 and 6), but the bank’s country is ${country}`);
  }
  if (bankCode) {
    checkFormat(field('bank_code'), bankCode, spec);
    return bankCode;
  }
  if (!(spec.orSwift && bic)) {
    throw invalid(field('bank_code'), `(the ${spec.name}) is required for ${rule.system} payouts${spec.orSwift ? ' (or a swift_code)' : viaIban}`);
  }
  return undefined;
}
