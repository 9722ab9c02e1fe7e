// Test bank accounts for issue 29's at-rest tests: the values as sent, every form of them that
// must never be stored, and payout requests that use them.
import { randomUUID } from 'node:crypto';
import type { CreatedMerchant } from '../merchants/service.js';

type Json = Record<string, any>;

/** The test bank accounts, as sent (a spaced IBAN too), and every form of them that must not be stored. */
export const BANK = {
  de_iban: 'DE89370400440532013000',
  fr_iban_spaced: 'FR14 2004 1010 0505 0001 3M02 606',
  ach_account: '918273645500',
  /** The sandbox's "account does not exist" number: proves the connector gets the full number at dispatch. */
  invalid_account: '000111111116',
} as const;
export const BANK_SECRETS = [
  BANK.de_iban,
  '370400440532013000', // the DE BBAN
  'FR1420041010050500013M02606',
  BANK.fr_iban_spaced,
  '20041010050500013M02606',
  BANK.ach_account,
  BANK.invalid_account,
];

export function beneficiary(bank: Json): Json {
  return {
    entity_type: 'PERSONAL',
    first_name: 'Lena',
    last_name: 'Schmidt',
    address: { country_code: bank.bank_country_code, city: 'Berlin', street_address: 'Unter den Linden 1', postcode: '10117' },
    bank_details: { account_name: 'Lena Schmidt', ...bank },
  };
}

export const SEPA_DE = beneficiary({ iban: BANK.de_iban, bank_country_code: 'DE', account_currency: 'EUR' });
export const SEPA_FR = beneficiary({ iban: BANK.fr_iban_spaced, bank_country_code: 'FR', account_currency: 'EUR' });
export const ACH = beneficiary({ account_number: BANK.ach_account, bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' });
export const ACH_INVALID = beneficiary({ account_number: BANK.invalid_account, bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' });

export function payoutBody(m: CreatedMerchant, b: Json, overrides: Json = {}): Json {
  const currency = b.bank_details.account_currency;
  return {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    request_id: randomUUID(),
    beneficiary: b,
    payment_currency: currency,
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: 'INV-29',
    source_currency: currency,
    payment_amount: '10.00',
    ...overrides,
  };
}
