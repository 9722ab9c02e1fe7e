/** A refund's status; its transition table is src/refunds/states.ts. */
export type RefundStatus = 'pending' | 'succeeded' | 'failed';

export interface RefundRow {
  /** `<transaction_id>-<two-digit sequence>` (interface.md "Identifiers"). */
  refund_reference_id: string;
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  currency: string;
  /** The original order amount. */
  amount_minor: number;
  refund_amount_minor: number;
  refund_reason: string;
  /** The processor's reference, empty when it gives none. */
  refund_reference: string;
  status: RefundStatus;
  /** `<code>` of refund_message (docs/contract.md §6). */
  result_code: string;
  notify_url: string;
  /** refund_date */
  created_at: number;
  /** refund_processing_date: when the refund reached a final status. */
  processed_at: number | null;
  updated_at: number;
  /** `<idempotency key id>:<item index>` when made under an Idempotency-Key, else null. */
  idempotency_ref: string | null;
  /** JSON object of strings: the generic interface's `metadata` ('{}' otherwise). */
  metadata: string;
}

export interface RefundTables {
  refunds: RefundRow;
}
