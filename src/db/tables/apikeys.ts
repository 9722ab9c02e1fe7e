// Generic-interface API keys (docs/contract.md §18): `sk_test_…` / `sk_live_…` by the account's
// mode, shown once, stored as a keyed hash, found by a short prefix, revocable.

export interface ApiKeyRow {
  /** `key_<ulid>`: how the CLI and the portal name a key (never the secret). */
  key_id: string;
  account_id: string;
  merchant_id: string;
  livemode: number;
  /** The first characters of the secret after `sk_<mode>_`: the indexed lookup (not secret enough to use alone). */
  lookup: string;
  /** Keyed hash (HMAC-SHA256 under the master key's fingerprint key) of the whole secret; compared in constant time. */
  secret_hash: string;
  /** The last four characters, to tell keys apart in listings. */
  last4: string;
  /** A label given at creation ('' when none). */
  name: string;
  /** active | revoked */
  status: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ApiKeyTables {
  api_keys: ApiKeyRow;
}
