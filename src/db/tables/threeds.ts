// The sandbox issuer's 3-D Secure challenges (docs/contract.md §10).

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
}

export interface ThreedsTables {
  threeds_challenges: ThreedsChallengeRow;
}
