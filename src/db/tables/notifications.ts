/**
 * The transactional outbox (docs/contract.md §11): an event row is written in the same
 * database transaction as the change it reports, and delivered after commit.
 */
export interface EventRow {
  event_id: string;
  merchant_id: string;
  account_id: string;
  event_type: string;
  /** transaction_id, refund_reference_id, recurring_id or payout id the event is about. */
  object_id: string;
  /** Where the payment or payout asked to be told; empty means record only. */
  notify_url: string;
  /** The JSON body sent, without its signature fields. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed' | 'no_target';
  attempts: number;
  next_attempt_at: number;
  /** Row lease so several workers never deliver one attempt twice at once. */
  lease_until: number;
  /** Who holds the lease: only the holder may record the outcome of its attempt. */
  lease_token: string | null;
  delivered_at: number | null;
  /** Short reason of the last failed attempt, '' when none. */
  last_error: string;
  created_at: number;
  updated_at: number;
}

/** One delivery attempt, kept for the operator and the merchant (docs/contract.md §11). */
export interface EventAttemptRow {
  attempt_id: string;
  event_id: string;
  /** 1-based count since the event was created or last replayed. */
  attempt_no: number;
  started_at: number;
  latency_ms: number;
  /** HTTP status of the answer, null when none came (timeout, refused, connection error). */
  status_code: number | null;
  error: string;
  /** First bytes of the answer body (bounded). */
  response_excerpt: string;
  /** What the attempt led to: delivered, retry (scheduled again) or failed (given up). */
  outcome: 'delivered' | 'retry' | 'failed';
  /** '' for the notify_url delivery; a webhook endpoint's id (`we_…`) for a delivery of the platform event `event_id` to it (migration 0088). */
  delivery: string;
}

export interface NotificationTables {
  events: EventRow;
  event_attempts: EventAttemptRow;
}
