// Storage of the risk capability: blocklists, per-account thresholds, and the signals
// each assessed payment leaves behind for the velocity rules.

export type BlocklistType = 'card' | 'email' | 'ip' | 'bin';

export interface RiskBlocklistRow {
  account_id: string;
  type: BlocklistType;
  /** card: the keyed fingerprint only (PCI DSS 3.5.1.1); email lowercased; ip normalised; bin 6–8 digits. */
  value: string;
  created_at: number;
}

export interface RiskSettingsRow {
  account_id: string;
  review_threshold: number;
  reject_threshold: number;
  updated_at: number;
}

export type SignalKind = 'card' | 'email' | 'ip' | 'device';

/** One row per identifying signal of an assessed payment (velocity history). */
export interface RiskSignalRow {
  transaction_id: string;
  account_id: string;
  kind: SignalKind;
  value: string;
  amount_minor: number;
  currency: string;
  created_at: number;
}

export interface RiskTables {
  risk_blocklist: RiskBlocklistRow;
  risk_settings: RiskSettingsRow;
  risk_signals: RiskSignalRow;
}
