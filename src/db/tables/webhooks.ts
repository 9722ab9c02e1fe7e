// Webhook endpoints and the platform family's events on the generic interface (docs/contract.md §24;
// issue 33 item 5). A platform event is one of the gateway's outbox events (`events`) in the
// family's vocabulary: written in the same write unit as its outbox event, together with one
// delivery row per subscribed endpoint, so a committed change has its platform events and
// their deliveries, and a rolled-back one has none.

export interface WebhookEndpointRow {
  /** `we_` + a time-ordered id. */
  id: string;
  account_id: string;
  livemode: number;
  url: string;
  description: string;
  /** JSON array of the event types as given (`*` or platform types), for the answer. */
  enabled_events: string;
  /** The `whsec_` signing secret, encrypted under the master keyring; shown once, on create. */
  secret_enc: string;
  /** 1 when the merchant disabled it: nothing is delivered to it (status `disabled`). */
  disabled: number;
  /** The API version the merchant named on create, '' when none. */
  api_version: string;
  /** JSON object of string values (src/generic/wire.ts limits). */
  metadata: string;
  /** 1 once deleted: answered 404 and delivered nothing afterwards. */
  deleted: number;
  created_at: number;
  updated_at: number;
}

/** One subscription of an endpoint: a platform event type, or `*` for all. */
export interface WebhookEndpointEventRow {
  endpoint_id: string;
  event_type: string;
}

/** A platform event: the outbox event `event_id` under the family's type `type`. */
export interface PlatformEventRow {
  /** `evt_` + a time-ordered id. */
  id: string;
  /** The outbox event it reports (several platform events may report one). */
  event_id: string;
  account_id: string;
  /** The account's mode when the event was written. */
  livemode: number;
  /** The family's event type (`charge.succeeded`, `refund.created`, …). */
  type: string;
  /** The outbox event's kind of object and its id, to build `data.object` from. */
  object_id: string;
  /** JSON of `data.object` as first built (read or sent); null until then. Every later answer and attempt carries the same. */
  data_object: string | null;
  created_at: number;
}

/** One platform event owed to one endpoint: the delivery state, as an outbox event has it. */
export interface WebhookDeliveryRow {
  platform_event_id: string;
  endpoint_id: string;
  merchant_id: string;
  account_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  lease_until: number;
  lease_token: string | null;
  delivered_at: number | null;
  last_error: string;
  created_at: number;
  updated_at: number;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointRow;
  webhook_endpoint_events: WebhookEndpointEventRow;
  platform_events: PlatformEventRow;
  webhook_deliveries: WebhookDeliveryRow;
}
