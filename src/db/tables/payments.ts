import type { Keyring } from '../../crypto/keyring.js';

/** A payment's status; its transition table is src/payments/states.ts. */
export type PaymentStatus =
  | 'pending' // 1000: shopper action outstanding (3-D Secure challenge, issuer page)
  | 'processing' // 1100: the processor's answer is not known yet (docs/contract.md §20)
  | 'authorised' // 2000: authorised, not captured (manual capture)
  | 'review' // 2100: held for risk review
  | 'captured' // 3000
  | 'refunded' // 4000: refunded in full
  | 'partially_refunded' // 4100
  | 'cancelled' // 5000
  | 'declined' // 6000: declined or failed
  | 'expired'; // 7000

/** The card vault: one row per stored card, the number encrypted (PCI DSS 3.5.1). */
export interface CardRow {
  card_id: string;
  account_id: string;
  /**
   * Keyed hash (HMAC under the keyring's fingerprint key) of the reusable token handed to the
   * merchant when token_flag asked for one; the token itself is a bearer credential and is not
   * stored (issue 29). The old `token_id` column stays in the table, always NULL.
   */
  token_hash: string | null;
  pan_enc: string;
  key_id: string;
  fingerprint: string;
  brand: string;
  bin: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  created_at: number;
}

export interface PaymentRow {
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  order_no: string;
  /** `recurring`: a subscription deduction, charged by the gateway from the vaulted card (docs/contract.md §16). */
  kind: 'card' | 'apm' | 'checkout' | 'recurring';
  livemode: number;
  currency: string;
  amount_minor: number;
  /** Amount still held for a later capture (manual capture). */
  authorised_minor: number;
  captured_minor: number;
  refunded_minor: number;
  status: PaymentStatus;
  capture_method: 'automatic' | 'manual';
  /** `<code>` of result_info (docs/contract.md §6). */
  result_code: string;
  card_id: string | null;
  card_brand: string;
  card_masked: string;
  connector: string;
  is3ds: number;
  threeds_result: string;
  risk_score: number | null;
  risk_action: string;
  /** JSON array of {name, status}. */
  risk_reasons: string;
  notify_url: string;
  return_url: string;
  /** Hash of the signed request, to tell a repeat from a different order (docs/contract.md §4). */
  request_hash: string;
  /** JSON of the request fields kept for the order record (never card data). */
  details: string;
  /** The signed answer first given, replayed for an identical repeat. */
  answer: string;
  created_at: number;
  updated_at: number;
  /** When an uncaptured authorisation or a pending state lapses. */
  expires_at: number | null;
}

export interface PaymentTables {
  cards: CardRow;
  payments: PaymentRow;
}

/** The keyed hash a card's token is stored and looked up by (`cards.token_hash`). */
export function tokenHash(keyring: Keyring, token_id: string): string {
  return keyring.fingerprint(`card token:${token_id}`);
}
