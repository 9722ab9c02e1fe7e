/** One Idempotency-Key (docs/contract.md §4): the first answer, replayed for 24 h. */
export interface IdempotencyKeyRow {
  id: string;
  /** merchant_id:account_id of the caller: keys of different accounts never meet. */
  scope: string;
  idem_key: string;
  /** HMAC of method, path, scope and body: the same key with another body is a conflict. */
  request_hash: string;
  status: 'started' | 'done';
  response_status: number;
  response_type: string;
  /** The answer's body, encrypted under the master keyring (issue 29). */
  response_body: string;
  /** A `started` row whose owner vanished (crash) may be taken over after this. */
  locked_until: number;
  created_at: number;
  expires_at: number;
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeyRow;
}
