// Reconciliation runs (issue 35 item 3; decisions.md §23): one row per run of `npx tollgate
// reconcile` over a processor's settlement report, with its counts per category, and the
// mismatches it found (matched lines are counted, never stored). A run is written whole, in one
// transaction, after the file was read to its end: a file that cannot be read writes nothing.

/** What a processor's report line or a Tollgate movement is, as reconciliation pairs them (docs/finance.md). */
export type MovementKind = 'capture' | 'refund' | 'refund_reversal' | 'dispute' | 'dispute_won';

/** The mismatch categories: every tracked line is `matched` or one of these; untracked lines are `not_applicable`. */
export type MismatchKind = 'missing_here' | 'missing_at_processor' | 'amount_differs' | 'fee_differs';

export interface ReconciliationRunRow {
  /** `rcn_` + a time-ordered id. */
  run_id: string;
  account_id: string;
  /** `adyen` or `stripe`: whose report it was, and whose movements it was held against. */
  connector: string;
  /** The file's name as given (its base name), its SHA-256 (hex) and size: which report this run read. */
  file_name: string;
  file_sha256: string;
  file_bytes: number;
  /** Data lines read (the header row not counted). */
  lines: number;
  /** The first and last time of the tracked lines (ms, UTC); null when the file had none. */
  from_ms: number | null;
  to_ms: number | null;
  matched: number;
  missing_here: number;
  missing_at_processor: number;
  amount_differs: number;
  fee_differs: number;
  not_applicable: number;
  /** missing_here + missing_at_processor + amount_differs + fee_differs. */
  mismatches: number;
  /** Mismatch rows kept in `reconciliation_items` (at most the cap), and those counted but not kept. */
  items_kept: number;
  items_dropped: number;
  started_at: number;
  finished_at: number;
}

/** One mismatch of a run. */
export interface ReconciliationItemRow {
  run_id: string;
  /** 1, 2, … in the order found (file order, then Tollgate's movements the file lacks). */
  seq: number;
  kind: MismatchKind;
  movement: MovementKind;
  /** The report's line (the line a record ends on); null for `missing_at_processor`. */
  line_no: number | null;
  /** The processor's reference of the line (Adyen's modification or PSP reference, Stripe's source), or Tollgate's posting for `missing_at_processor`. */
  reference: string;
  /** Tollgate's payment, '' when the line named none Tollgate could find. */
  transaction_id: string;
  /** The refund's `refund_reference_id` for refund movements, '' otherwise. */
  refund_id: string;
  /** Minor units of `currency`; null where that side has nothing. */
  ours_amount_minor: number | null;
  theirs_amount_minor: number | null;
  ours_fee_minor: number | null;
  theirs_fee_minor: number | null;
  currency: string;
  /** Why, in words (another currency, a refund still pending here, a second line for one movement, …). */
  detail: string;
}

export interface ReconciliationTables {
  reconciliation_runs: ReconciliationRunRow;
  reconciliation_items: ReconciliationItemRow;
}
