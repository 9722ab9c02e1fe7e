// The card payment as the core takes it (issue 30 item 1): domain terms only, minor units and
// enums, never an interface's wire strings. Each interface maps its own request to it: the
// acquiring body (acquiring.ts), the generic interface's parameters (src/generic/payments.ts)
// and a hosted checkout's stored request with its card form (src/checkout/routes.ts).

import type { Refused } from '../core/outcomes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { ShopperFacts } from '../risk/index.js';
import type { SubscriptionTerms } from '../subscriptions/service.js';
import type { MpiInfo, ThreedsRequest } from '../threeds/mpi.js';

/** Request fields a payment keeps for its order record and pages (never card data); the checkout and APM paths keep the same. */
export const KEPT_FIELDS = [
  'website',
  'shopper_email',
  'shopper_phone',
  'shopper_id',
  'shopper_ip',
  'first_name',
  'last_name',
  'note',
  'custom',
  'billing_country',
  'billing_state',
  'billing_city',
  'billing_address',
  'billing_postal_code',
  'delivery_firstname',
  'delivery_lastname',
  'delivery_country',
  'delivery_state',
  'delivery_city',
  'delivery_address',
  'delivery_postal_code',
  'device_fingerprint',
  'device_type',
  'browser_lang',
  'default_lang',
  'platform_source',
  'items',
  'subscription',
] as const;

export type KeptField = (typeof KEPT_FIELDS)[number];

export type CaptureMethod = 'automatic' | 'manual';

/** A card brought with the payment: the month 1 to 12, the year in four digits. */
export interface CardDetails {
  kind: 'card';
  pan: string;
  exp_month: number;
  exp_year: number;
  security_code?: string;
}

/**
 * The card to charge: brought with the payment, the token of an account's stored card, or that card itself.
 * `refused`: the request's card fields are wrong, and the refusal is raised where the card
 * is resolved, so a replayed order_no (1011) and a live account without a processor (1016)
 * are answered first, as they always were.
 */
export type CardSource =
  | CardDetails
  | { kind: 'token'; token_id: string }
  /** A card of the account's vault named by the interface itself (a PaymentMethod's, src/generic/payment-intents.ts), never by a shopper. */
  | { kind: 'stored'; card_id: string }
  | { kind: 'refused'; error: Refused };

export interface CardPaymentCommand {
  order_no: string;
  /** In the currency's minor units, greater than zero. */
  amount_minor: number;
  /** An ISO 4217 code the interface has checked. */
  currency: string;
  card: CardSource;
  /** Null: the account's default. */
  capture_method: CaptureMethod | null;
  threeds: {
    request: ThreedsRequest;
    /**
     * The interface's parse of a 3-D Secure result from an outside server (null: none sent).
     * What an ECI means depends on the card's brand, known only once a token is resolved,
     * so the parse takes it; its 400 names the request's field.
     */
    mpi: (brand: string) => MpiInfo | null;
  };
  /** Store the card and answer a token for later payments. */
  keep_token: boolean;
  /** What the risk engine reads of the shopper. */
  shopper: ShopperFacts;
  notify_url?: string;
  return_url?: string;
  /**
   * The subscription the payment starts, read by the interface's own parse when the payment
   * gets to it: its dates are checked against the payment's time, and its 400 names the
   * request's field. Null: none.
   */
  subscription: ((first_payment_ms: number) => SubscriptionTerms) | null;
  /** The order record's fields (KEPT_FIELDS) as the request gave them. */
  kept: Partial<Record<KeptField, unknown>>;
  /** The keyed fingerprint of the request a replay of the order_no is compared with. */
  request_hash: string;
}

/** What a card payment command came to. */
export type CardPaymentResult =
  /** Decided and written now: the acquiring answer record it stored, and the payment. */
  | { kind: 'decided'; record: Record<string, unknown>; row: PaymentRow; threeds_url?: string }
  /**
   * The order_no was paid by the same request before: its stored answer, and the payment as
   * stored (or, while the first request is still at the processor, as its snapshot says it
   * will be written: `processing`).
   */
  | { kind: 'replayed'; record: Record<string, unknown>; row: PaymentRow }
  /** The order_no was used by another request (docs/contract.md §4: 1011); the interface answers it. */
  | { kind: 'duplicate' };
