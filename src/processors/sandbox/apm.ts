// The sandbox's alternative payment methods (docs/contract.md §15), as data: one row per method.
// More methods are more rows. The iDEAL bank list is the sandbox's published list of
// `bank_code` values; the issuer page plays whichever bank is chosen.
import type { ApmMethod, RequiredField } from '../apm.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * The iDEAL issuing banks by BIC, as the iDEAL Hub lists them (the list published by
 * pronamic/ideal-issuers 1.1.0, also the BICs of the major card platforms' iDEAL method).
 */
export const IDEAL_TEST_BANKS: ReadonlyArray<{ bank_code: string; name: string }> = [
  { bank_code: 'ABNANL2A', name: 'ABN AMRO' },
  { bank_code: 'ASNBNL21', name: 'ASN Bank' },
  { bank_code: 'BUNQNL2A', name: 'bunq' },
  { bank_code: 'INGBNL2A', name: 'ING' },
  { bank_code: 'KNABNL2H', name: 'Knab' },
  { bank_code: 'NTSBDEB1', name: 'N26' },
  { bank_code: 'NNBANL2G', name: 'Nationale-Nederlanden' },
  { bank_code: 'RABONL2U', name: 'Rabobank' },
  { bank_code: 'RBRBNL21', name: 'RegioBank' },
  { bank_code: 'REVOLT21', name: 'Revolut' },
  { bank_code: 'SNSBNL2A', name: 'SNS Bank' },
  { bank_code: 'TRIONL2U', name: 'Triodos Bank' },
  { bank_code: 'FVLBNL22', name: 'Van Lanschot Kempen' },
  { bank_code: 'BITSNL2A', name: 'yoursafe' },
];

const document: RequiredField = { path: 'person.document_number', rule: { kind: 'br_document' } };

/** `person.address_*` of a Brazilian payer; `address_complement` (flat, suite) stays optional. */
const brazilianAddress: RequiredField[] = [
  { path: 'person.address_street', rule: { kind: 'text', max_length: 255 } },
  { path: 'person.address_number', rule: { kind: 'text', max_length: 16 } },
  { path: 'person.address_postal_code', rule: { kind: 'br_postal_code' } },
  { path: 'person.address_city', rule: { kind: 'text', max_length: 64 } },
  { path: 'person.address_state', rule: { kind: 'br_state' } },
  { path: 'person.address_country', rule: { kind: 'country', equals: 'BR' } },
];

export const SANDBOX_APM_METHODS: readonly ApmMethod[] = [
  {
    payment_method: 'pix',
    label: 'Pix',
    currencies: ['BRL'],
    countries: ['BR'],
    required: [document, { path: 'person.email', rule: { kind: 'email' } }],
    flow: 'approve_decline',
    expiry_ms: 30 * MINUTE_MS,
  },
  {
    payment_method: 'boleto',
    label: 'Boleto Bancário',
    currencies: ['BRL'],
    countries: ['BR'],
    required: [document, ...brazilianAddress],
    flow: 'slip',
    expiry_ms: 3 * DAY_MS,
  },
  {
    payment_method: 'ideal',
    label: 'iDEAL',
    currencies: ['EUR'],
    countries: ['NL'],
    required: [{ path: 'bank_code', rule: { kind: 'one_of', values: IDEAL_TEST_BANKS.map((b) => b.bank_code), list_name: 'the iDEAL bank list' } }],
    flow: 'approve_decline',
    expiry_ms: 15 * MINUTE_MS,
  },
];
