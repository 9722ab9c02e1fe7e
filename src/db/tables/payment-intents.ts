// PaymentIntents of the generic interface (docs/contract.md §24; issue 33): the platform family's
// `pi_` object. The intent holds what the merchant asked for (amount, currency, PaymentMethod,
// customer); each confirm is one core payment (`payments` row, its charge `ch_<transaction_id>`),
// linked here by `payment_intent_charges`. The intent's status on the wire is read from its
// latest payment once it has one (src/generic/payment-intents.ts).

/** The intent's own states; once `confirmed`, the wire status is its latest payment's. */
export type IntentState = 'requires_payment_method' | 'requires_confirmation' | 'confirmed' | 'canceled';

export interface PaymentIntentRow {
  /** `pi_` + a time-ordered id. */
  id: string;
  account_id: string;
  livemode: number;
  state: IntentState;
  amount_minor: number;
  /** Upper-case ISO 4217. */
  currency: string;
  capture_method: 'automatic' | 'manual';
  /** `cus_…`, '' when none. */
  customer_id: string;
  /** `pm_…`, '' when none yet. */
  payment_method_id: string;
  /** '', 'on_session' or 'off_session': attach the PaymentMethod to the customer once approved. */
  setup_future_usage: string;
  description: string;
  receipt_email: string;
  return_url: string;
  statement_descriptor: string;
  /** `payment_method_options.card.request_three_d_secure`: '', 'automatic', 'any' or 'challenge'. */
  three_d_secure: string;
  /** JSON object of string values. */
  metadata: string;
  /** `<id>_secret_<random>`: what a browser would be given; not a card secret. */
  client_secret: string;
  /** The latest confirm's payment (`payments.transaction_id`), '' before the first. */
  transaction_id: string;
  /** When the latest confirm claimed the intent (its lease: a confirm that died is re-run after it). */
  confirmed_at: number;
  canceled_at: number | null;
  cancellation_reason: string;
  created_at: number;
  updated_at: number;
}

/** One row per confirm: the payment it made, written when the confirm claims the intent (before the payment). */
export interface PaymentIntentChargeRow {
  transaction_id: string;
  intent_id: string;
  account_id: string;
  created_at: number;
}

export interface PaymentIntentTables {
  payment_intents: PaymentIntentRow;
  payment_intent_charges: PaymentIntentChargeRow;
}
