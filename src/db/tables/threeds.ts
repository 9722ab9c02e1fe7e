// 3-D Secure challenges (docs/contract.md §10): the sandbox issuer's, or a processor's own.

export type ChallengeStatus = 'open' | 'processing' | 'completed' | 'failed' | 'expired';

export interface ThreedsChallengeRow {
  /** SHA-256 of the page id: the id itself (the secret in the URL) is never stored. */
  id_hash: string;
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  /** Single-use token the page's form must send back. */
  form_token: string;
  status: ChallengeStatus;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  /**
   * A processor's own challenge (Adyen, Stripe): where the page forwards the shopper
   * (`ShopperAction` as JSON, encrypted with the master key); null for the sandbox challenge.
   */
  action_enc: string | null;
}

export interface ThreedsTables {
  threeds_challenges: ThreedsChallengeRow;
}
