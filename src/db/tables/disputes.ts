// Disputes (chargebacks) of captured payments (docs/contract.md §22; issue 34). One row per
// dispute, from the processor that holds the payment (or the sandbox on test accounts); its
// status moves by its own transition table (src/disputes/states.ts). Evidence is kept
// encrypted, one row per text field or file.

export type DisputeStatus = 'warning_needs_response' | 'needs_response' | 'under_review' | 'won' | 'lost' | 'accepted';

export interface DisputeRow {
  /** `dp_` + a time-ordered id. */
  dispute_id: string;
  merchant_id: string;
  account_id: string;
  livemode: number;
  /** The disputed payment. */
  transaction_id: string;
  order_no: string;
  /** The processor that holds the payment ('sandbox', 'adyen', 'stripe', 'remote'). */
  connector: string;
  /** The processor's own id of the dispute (its PSP reference, `dp_…`): one row per (connector, processor_ref). */
  processor_ref: string;
  /** 'chargeback' moves money; an 'inquiry' (retrieval request) does not, unless it becomes one. */
  kind: 'chargeback' | 'inquiry';
  amount_minor: number;
  /** Upper-case ISO 4217. */
  currency: string;
  /** The dispute fee charged when money moved ('' account fee at the time), minor units. */
  fee_minor: number;
  /** The family's reason codes: fraudulent, product_not_received, duplicate, general, … */
  reason: string;
  status: DisputeStatus;
  /** When evidence is due (ms). */
  evidence_due_by: number;
  /** When evidence was last submitted (ms), null before. */
  submitted_at: number | null;
  /** JSON object of string values (the generic interface's metadata). */
  metadata: string;
  /** The request (its Idempotency-Key's record) that submitted the evidence, '' before or without one: its re-run is answered, not refused. */
  submit_ref: string;
  /** Why the processor refused the merchant's last answer (evidence or acceptance); '' when it took it or none was sent. */
  response_error: string;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
}

/** One piece of evidence: a text field (`uncategorized_text`, `product_description`, …) or a file. */
export interface DisputeEvidenceRow {
  evidence_id: string;
  dispute_id: string;
  /** The field it answers (`customer_communication`, `receipt`, `uncategorized_text`, …). */
  field: string;
  /** 'text' or the file's type as read from its content: 'application/pdf', 'image/png', 'image/jpeg'. */
  content_type: string;
  /** A file's name as given ('' for text). */
  file_name: string;
  size_bytes: number;
  /** The text or the file's bytes (base64), encrypted under the master keyring. */
  data_enc: string;
  /** The request (its Idempotency-Key's record) that gave it, '' without one: a re-run of that request stores nothing again. */
  request_ref: string;
  created_at: number;
}

/** The fee an account is charged per dispute, per currency (`npx tollgate pricing dispute`). */
export interface DisputeFeeRow {
  account_id: string;
  currency: string;
  fee_minor: number;
  updated_at: number;
}

export interface DisputeTables {
  disputes: DisputeRow;
  dispute_evidence: DisputeEvidenceRow;
  dispute_fees: DisputeFeeRow;
}
