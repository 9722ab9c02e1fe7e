/**
 * The transactional outbox (decisions §11): an event row is written in the same
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
  created_at: number;
  updated_at: number;
}

export interface NotificationTables {
  events: EventRow;
}
