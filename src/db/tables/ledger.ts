// Double-entry ledger rows (docs/style.md §6). Every money movement is one posting whose entries
// sum to zero; balances are derived from the entries (see README.md in this folder).

/** The chart of accounts kept per merchant account and currency (README.md). */
export type LedgerAccount =
  | 'processor_clearing' // the outside world: card networks, banks
  | 'customer_holds' // authorisation holds: reserved on the shopper's card, not yet ours
  | 'merchant_pending' // captured, awaiting settlement
  | 'merchant_available' // settled: the merchant's to pay out
  | 'refunds_in_flight' // refunds sent to a processor that has not answered yet
  | 'fees' // the gateway's fees charged to this merchant
  | 'payouts_reserved' // taken from available for payouts not paid yet (SCHEDULED, PROCESSING)
  | 'fx_conversion' // the conversion desk: one currency in, another out (payouts in another currency)
  | 'connect_transfers'; // transfers between a platform and its connected accounts, in transit within one posting pair (src/connect/ledger.ts)

export interface LedgerPostingRow {
  posting_id: string;
  account_id: string;
  currency: string;
  /** What moved the money: authorise_hold, capture, hold_release, fee, refund, settlement, … */
  reason: string;
  /** The payment the posting belongs to ('' for account-level postings like settlement). */
  transaction_id: string;
  /** refund_reference_id, payout id, transfer or reversal id, … when the posting belongs to a sub-object. */
  ref: string;
  /** The settlement batch holding it (docs/contract.md §23): null until its day's batch closes; a settlement posting carries the batch it settles. */
  batch_id?: string | null;
  created_at: number;
}

export interface LedgerEntryRow {
  entry_id: string;
  posting_id: string;
  account_id: string;
  currency: string;
  ledger_account: LedgerAccount;
  /** Signed minor units: positive = into this ledger account, negative = out of it. */
  amount_minor: number;
  transaction_id: string;
  /** 1 once a merchant_pending entry has been moved to merchant_available by settlement. */
  settled: number;
  created_at: number;
}

/**
 * Materialised sums of the entries, updated in the same transaction; `ledger verify`
 * re-derives them. A balance is the sum of its slots (postings.ts, BALANCE_SLOTS).
 */
export interface LedgerBalanceRow {
  account_id: string;
  currency: string;
  ledger_account: LedgerAccount;
  /** 0 … BALANCE_SLOTS-1: concurrent transactions update different rows; PAYOUT_SLOT for payouts' postings, TRANSFER_SLOT for transfers'. */
  slot: number;
  balance_minor: number;
  updated_at: number;
}

/** Per-account pricing: a percentage in basis points plus a fixed amount, per currency. */
export interface PricingRow {
  account_id: string;
  currency: string;
  percent_bp: number;
  fixed_minor: number;
  updated_at: number;
}

export interface LedgerTables {
  ledger_postings: LedgerPostingRow;
  ledger_entries: LedgerEntryRow;
  ledger_balances: LedgerBalanceRow;
  pricing: PricingRow;
}
