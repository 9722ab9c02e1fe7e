// Connected accounts, transfers and reversals of the generic interface (docs/contract.md §12, §18).
// A connected account belongs to one platform account (the caller) and to its mode; its
// money is in the ledger under its own id (`acct_…`), moved there by transfers.

export interface ConnectedAccountRow {
  /** `acct_` + 16 random characters. */
  id: string;
  /** The platform account that created it (owner of every read and write). */
  platform_account_id: string;
  merchant_id: string;
  livemode: number;
  /** custom | express | standard */
  type: string;
  /** ISO 3166-1 alpha-2, uppercase. */
  country: string;
  email: string;
  /** individual | company | non_profit | government_entity ('' when not given). */
  business_type: string;
  /** Lowercase ISO 4217 ('' until set). */
  default_currency: string;
  /** JSON: { name, industry, url, mcc, product_description, support_email } as given. */
  business_profile: string;
  /** JSON: { card_payments: 'active'|'inactive', transfers: … } */
  capabilities: string;
  /** JSON object of string values (wire.ts limits). */
  metadata: string;
  /** 1 once deleted: kept for the ledger, answered 404 afterwards. */
  deleted: number;
  created_at: number;
  updated_at: number;
}

export interface TransferRow {
  /** `tr_` + time-ordered id. */
  id: string;
  platform_account_id: string;
  merchant_id: string;
  livemode: number;
  /** The connected account's id (`acct_…`). */
  destination: string;
  /** Uppercase ISO 4217 (lowercase on the wire). */
  currency: string;
  amount_minor: number;
  /** Sum of its reversals; never above amount_minor (a conditional update keeps it so). */
  reversed_minor: number;
  description: string;
  transfer_group: string;
  metadata: string;
  /** The Idempotency-Key's row id when made under one (unique): a re-run of that request answers this transfer. */
  idempotency_ref: string | null;
  created_at: number;
  updated_at: number;
}

export interface TransferReversalRow {
  /** `trr_` + time-ordered id. */
  id: string;
  transfer_id: string;
  platform_account_id: string;
  livemode: number;
  currency: string;
  amount_minor: number;
  description: string;
  metadata: string;
  /** As TransferRow.idempotency_ref. */
  idempotency_ref: string | null;
  created_at: number;
  updated_at: number;
}

export interface ConnectTables {
  connected_accounts: ConnectedAccountRow;
  transfers: TransferRow;
  transfer_reversals: TransferReversalRow;
}
