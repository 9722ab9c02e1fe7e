export interface MerchantRow {
  merchant_id: string;
  name: string;
  created_at: number;
}

export interface AccountRow {
  account_id: string;
  merchant_id: string;
  mode: 'test' | 'live';
  /** Default capture for payments that do not send capture_method (docs/contract.md §7). */
  capture_method: 'automatic' | 'manual';
  /** Standard Webhooks secret, encrypted at rest. */
  webhook_secret_enc: string;
  /** Card-platform style API keys (generic interface), encrypted; hash for lookup. */
  created_at: number;
}

export interface AccountKeyRow {
  key_id: string;
  account_id: string;
  secret_enc: string;
  /** active: signs and verifies; retiring: still verifies until retired (docs/contract.md §2). */
  status: 'active' | 'retiring';
  created_at: number;
}

export interface AccountIpRow {
  account_id: string;
  cidr: string;
  created_at: number;
}

export interface SequenceRow {
  name: string;
  value: number;
}

export interface CoreTables {
  merchants: MerchantRow;
  accounts: AccountRow;
  account_keys: AccountKeyRow;
  account_ips: AccountIpRow;
  sequences: SequenceRow;
}
