// Audit trail of review decisions: who (the API, or the expiry job) decided what, when.
export interface RiskReviewRow {
  transaction_id: string;
  account_id: string;
  decision: 'ACCEPT' | 'REJECT' | 'EXPIRE';
  note: string;
  source: 'api' | 'expiry';
  decided_at: number;
}

export interface ReviewTables {
  risk_reviews: RiskReviewRow;
}
