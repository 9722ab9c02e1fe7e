// Settlement batches (docs/contract.md §23; issue 35 item 1): per account and currency, one batch
// per UTC day holding every balance movement (a ledger posting into or out of merchant_pending or
// merchant_available) not in an earlier batch, closed at the day's end; its pending part moves to
// available after the account's delay in days.

export type SettlementBatchStatus = 'pending' | 'available';

export interface SettlementBatchRow {
  /** `stl_` + a time-ordered id. */
  batch_id: string;
  account_id: string;
  currency: string;
  /** The UTC day it closes, YYYY-MM-DD. */
  day: string;
  /** The end of that day (ms): every movement before it that no earlier batch holds is in this one. */
  closes_at: number;
  /** Report lines (movements grouped by payment and kind). */
  lines: number;
  /** Sums over the lines, minor units: gross = net + fee. */
  gross_minor: number;
  fee_minor: number;
  net_minor: number;
  /** The part of net that waits in merchant_pending (captures net of their fees) until available_at. */
  pending_minor: number;
  /** The account's delay when it closed. */
  delay_days: number;
  /** Its net without payout movements: what payouts draw on once it is available. */
  payable_minor: number;
  /** The part of `payable_minor` payouts have taken (payout_batches), oldest batch first. */
  paid_minor: number;
  /** When the pending part becomes available: the day's start plus the delay, at the earliest its closing. */
  available_at: number;
  status: SettlementBatchStatus;
  settled_at: number | null;
  created_at: number;
}

/** An account's settlement delay in days (`settlement delay`); absent: the default. */
export interface SettlementDelayRow {
  account_id: string;
  days: number;
  updated_at: number;
}

/** What a payout took of a batch (negative for a batch whose movements net to a debit). */
export interface PayoutBatchRow {
  transaction_id: string;
  batch_id: string;
  account_id: string;
  currency: string;
  amount_minor: number;
  created_at: number;
}

export interface SettlementTables {
  settlement_batches: SettlementBatchRow;
  payout_batches: PayoutBatchRow;
  settlement_delays: SettlementDelayRow;
}
