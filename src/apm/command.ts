// The alternative-method payment as the core takes it (issue 30 item 1): domain terms only,
// minor units and the catalogue's method, never an interface's wire strings. Each interface
// maps its own request to it: the acquiring body (acquiring.ts) and a hosted checkout's
// stored request with the method form (src/checkout/routes.ts).
import { KEPT_FIELDS as CARD_KEPT_FIELDS, type CaptureMethod } from '../authorise/command.js';
import type { Refused } from '../core/outcomes.js';
import type { ApmMethod } from '../methods/catalogue.js';

/** Request fields an APM payment keeps: a card payment's, and its method (no document numbers). */
export const KEPT_FIELDS = [...CARD_KEPT_FIELDS.filter((f) => f !== 'subscription'), 'payment_method', 'bank_code'] as const;

export type ApmKeptField = (typeof KEPT_FIELDS)[number];

export interface ApmPaymentCommand {
  order_no: string;
  /** In the currency's minor units, greater than zero. */
  amount_minor: number;
  /** An ISO 4217 code the interface has checked. */
  currency: string;
  /** From the catalogue; whether this account offers it is the service's check. */
  method: ApmMethod;
  /** Which methods the account offers depends on it ('' when the request gave none). */
  billing_country: string;
  /** The method's required fields present as strings, `path → value`, for the connector. */
  fields: Readonly<Record<string, string>>;
  /**
   * The first fault of the method's fields or the missing return_url (400 naming the field),
   * raised only once the account is known to offer the method, so its 404 comes first, as
   * it always did.
   */
  refused: Refused | null;
  /** The shopper's bank (iDEAL), kept in the order record. */
  bank_code?: string;
  /** Null: the account's default. */
  capture_method: CaptureMethod | null;
  notify_url?: string;
  return_url?: string;
  /** The order record's fields (KEPT_FIELDS) as the request gave them. */
  kept: Partial<Record<ApmKeptField, unknown>>;
  /** The keyed fingerprint of the request a replay of the order_no is compared with. */
  request_hash: string;
}

/** What an APM payment command came to. */
export type ApmPaymentResult =
  /** Started and written now: the acquiring answer record it stored, and where the shopper goes. */
  | { kind: 'started'; record: Record<string, unknown>; issuer_url: string }
  /** The order_no was started by the same request before: its stored answer. */
  | { kind: 'replayed'; record: Record<string, unknown> }
  /** The order_no was used by another request (docs/contract.md §4: 1011); the interface answers it. */
  | { kind: 'duplicate' }
  /** A hosted checkout's payment was paid, cancelled or started in another tab first. */
  | { kind: 'lost' };
