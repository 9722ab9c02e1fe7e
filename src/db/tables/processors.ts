// Processors configured per account (docs/contract.md §21, docs/processors.md) and the
// notifications they send to `/hooks/<connector>/<processor_id>` (§20).

/** A connector this gateway speaks. */
export type ConnectorName = 'sandbox' | 'adyen' | 'stripe';

export interface ProcessorConfigRow {
  /** `prc_…`: named in the webhook address the operator registers at the provider. */
  processor_id: string;
  account_id: string;
  connector: ConnectorName;
  /** The provider's environment, or a mock of it; '' for the connector's default (the in-process sandbox for `sandbox`). */
  base_url: string;
  /** Tried in this order, lowest first, among the processors that take the payment's currency and brand. */
  priority: number;
  /** Upper-case ISO codes, comma-separated; '' takes every currency. */
  currencies: string;
  /** Card brands as the gateway names them, comma-separated; '' takes every brand. */
  brands: string;
  /** The credentials (`{ name: value }` as JSON), encrypted with the master key. */
  credentials_enc: string;
  /** The credentials' names with their last four characters (`{ name: "••••abcd" }`), for display. */
  credentials_hint: string;
  created_at: number;
  updated_at: number;
}

/**
 * One notification a processor sent, kept whatever it matched (duplicates are recognised by
 * the processor's id for it): `settled` moved an attempt, `stale` found it settled already,
 * `open` left it open (pending), `unmatched` named no attempt Tollgate knows (reported by
 * `processor status` and the metric).
 */
export interface ProcessorNotificationRow {
  processor_id: string;
  notification_id: string;
  operation: string;
  attempt_id: string;
  reference: string;
  outcome: string;
  result: 'settled' | 'stale' | 'open' | 'unmatched';
  received_at: number;
}

export interface ProcessorTables {
  processors: ProcessorConfigRow;
  processor_notifications: ProcessorNotificationRow;
}
