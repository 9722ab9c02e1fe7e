// Processor attempts (docs/contract.md §20, docs/attempts.md): every call to a processor is
// recorded and committed before it is made, and its outcome settled by compare-and-set.

/** What an attempt asked the processor to do. */
export type AttemptOperation = 'authorise' | 'capture' | 'cancel' | 'refund' | 'payout' | 'apm_start' | 'dispute_defend' | 'dispute_accept';

/**
 * Where an attempt stands. `sent`: recorded, the call made or about to be (a `sent` attempt
 * older than its deadline was abandoned by a process that died); `unknown`: no answer by the
 * deadline, the connection lost, a 5xx; `pending`: the processor reports later. The others
 * are final.
 */
export type AttemptStatus = 'sent' | 'unknown' | 'pending' | 'approved' | 'declined' | 'challenge' | 'voided';

export interface ProcessorAttemptRow {
  /** The processor's idempotency key and our reference at the processor. */
  attempt_id: string;
  account_id: string;
  /** The connector's name (`sandbox`, `adyen`, `stripe`). */
  connector: string;
  /** The configured processor it went to (`prc_…`); null for the in-process sandbox of a test account with none set. */
  processor_id: string | null;
  operation: AttemptOperation;
  /** The payment (or refund, payout, dispute) the attempt is for. */
  object_id: string;
  amount_minor: number;
  currency: string;
  status: AttemptStatus;
  /** The decline's result code (`1001`…`1007`); empty otherwise. */
  result_code: string;
  /** The processor's own reference, once it gave one. */
  reference: string;
  /** Times the outcome was asked for again. */
  checks: number;
  /** The call's deadline; after it a `sent` attempt counts as abandoned. */
  deadline_at: number;
  /** When the sweeper asks again (open attempts only). */
  next_check_at: number | null;
  last_error: string;
  /** What the open attempt holds alone (`payment:<id>` for a capture or cancel); null once its outcome is final. */
  claim_key: string | null;
  /** A new card payment's rows as they will be written (JSON: payment, card, note), until its payment row exists. */
  snapshot: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * A subscription's contract_name held by a first payment that is at the processor
 * (docs/attempts.md): concurrent first payments of one name cannot all reach the
 * processor; the claim goes when the payment's outcome is recorded.
 */
export interface SubscriptionNameClaimRow {
  account_id: string;
  contract_name: string;
  transaction_id: string;
  created_at: number;
}

export interface AttemptTables {
  processor_attempts: ProcessorAttemptRow;
  subscription_name_claims: SubscriptionNameClaimRow;
}
