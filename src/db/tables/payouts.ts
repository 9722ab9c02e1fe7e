// Payout rows (docs/contract.md §17). A payout is one row moved through the transition table in
// states.ts; its money is in the ledger (reserve, complete, release), its answer is built
// from the row (record.ts).

export const PAYOUT_STATUSES = ['SCHEDULED', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
export type FeePaidBy = 'PAYER' | 'BENEFICIARY';

export interface PayoutRow {
  /** The payout's id (`transaction_id` in the answer), time-ordered. */
  transaction_id: string;
  /** `P<yymmdd>-<8 characters>`, unique: what a bank statement shows. */
  short_reference_id: string;
  merchant_id: string;
  account_id: string;
  livemode: number;
  /** The merchant's UUID: the idempotency key (docs/contract.md §4, §17), unique per account. */
  request_id: string;
  /** Keyed hash of the signed request (same request_id, other body → 409). */
  request_hash: string;
  status: PayoutStatus;
  /** '' | INSUFFICIENT_FUNDS | INVALID_ACCOUNT | RETURNED | PROCESSOR_ERROR | CANCELLED */
  failure_type: string;
  failure_reason: string;
  /** LOCAL | SWIFT */
  payment_method: string;
  local_clearing_system: string;
  source_currency: string;
  payment_currency: string;
  /** Converted to the beneficiary: minor units of source_currency. */
  amount_payer_pays: number;
  /** Minor units of payment_currency. */
  amount_beneficiary_receives: number;
  /** Minor units of source_currency (the fee currency). */
  fee_amount: number;
  fee_paid_by: FeePaidBy;
  swift_charge_option: string;
  /** The applied rate (payment units per source unit) as decimal text; '1.0' for one currency. */
  fx_rate: string;
  /** Where the market rate came from: operator, operator (inverse), snapshot <date>. */
  fx_source: string;
  /** `YYYY-MM-DD` (UTC). */
  payment_date: string;
  /** When it is dispatched (payment_date 00:00 UTC, or creation). */
  dispatch_at: number;
  beneficiary_id: string;
  /** The answer's echo of the request (beneficiary, payer, amounts as sent, …) as JSON. */
  details: string;
  notify_url: string;
  processor_reference: string;
  /** The batches it paid, as its record names them: JSON `[{batch_id, day, amount}]` (src/settlement/allocate.ts). */
  settlement_batches: string;
  created_at: number;
  updated_at: number;
}

/** A beneficiary saved by its first payout, reused with `beneficiary_id`. */
export interface BeneficiaryRow {
  beneficiary_id: string;
  account_id: string;
  /** Keyed hash of the beneficiary object as sent: the same beneficiary is saved once. */
  fingerprint: string;
  /** The beneficiary object (with local_clearing_system), encrypted under the master keyring. */
  data_enc: string;
  /** What the CLI may show: name, country, clearing system, last four of the account. */
  label: string;
  created_at: number;
}

/** Payout fees per account, source currency and method (npx tollgate pricing payout). */
export interface PayoutPricingRow {
  account_id: string;
  currency: string;
  payment_method: string;
  percent_bp: number;
  fixed_minor: number;
  /** Added for SWIFT with swift_charge_option PAYER (the payer covers the other banks' charges). */
  swift_payer_minor: number;
  updated_at: number;
}

/** Per-account FX markup in basis points (npx tollgate fx markup). */
export interface FxMarkupRow {
  account_id: string;
  markup_bp: number;
  updated_at: number;
}

/**
 * One row per (account, source currency): every payout's funding transaction updates it
 * first, so funding checks of one balance run one after another on PostgreSQL (the row
 * lock) as they do on SQLite (the single writer), and never overdraw under concurrency.
 */
export interface PayoutFundingRow {
  account_id: string;
  currency: string;
  payouts: number;
  updated_at: number;
}

export interface PayoutTables {
  payouts: PayoutRow;
  beneficiaries: BeneficiaryRow;
  payout_pricing: PayoutPricingRow;
  fx_markups: FxMarkupRow;
  payout_funding: PayoutFundingRow;
}

/** An account number or IBAN for a message or a label: the last four characters only. */
export function maskAccount(s: string): string {
  const compact = s.replace(/[\s-]/g, '');
  return compact.length > 4 ? `••••${compact.slice(-4)}` : '••••';
}

/**
 * The bank details as every answer, event and view shows them (issue 29): `iban` and
 * `account_number` cut to their last four, as cards are. The full details live only in the
 * saved beneficiary, encrypted under the master keyring, and go to the connector from there.
 * Masking twice changes nothing.
 */
export function maskedBankDetails<T extends { iban?: string; account_number?: string }>(bank: T): T {
  const out = { ...bank };
  if (bank.iban) out.iban = maskAccount(bank.iban);
  if (bank.account_number) out.account_number = maskAccount(bank.account_number);
  return out;
}
