// Storage of subscriptions (docs/contract.md §16). A subscription is created by its first payment's
// approval and keeps what every later deduction needs: the vaulted card, the plan, the
// price, and where the schedule stands.

/** Active and PastDue charge; Inactived (cancelled, or dunning gave up) and Completed do not. */
export type SubscriptionStatus = 'Active' | 'PastDue' | 'Inactived' | 'Completed';

export interface SubscriptionRow {
  /** `rec_` + 24 url-safe characters; with contract_name, how the merchant names it. */
  recurring_id: string;
  merchant_id: string;
  account_id: string;
  /** Unique per account among Active and PastDue subscriptions (partial unique index). */
  contract_name: string;
  /** Merchant references, echoed. */
  contract: string;
  price_id: string;
  /** The shopper-present payment that created it; deductions are `<first order_no>-R<n>`. */
  first_transaction_id: string;
  first_order_no: string;
  first_payment_at: number;
  /** The vaulted card deductions charge (merchant-initiated; no security code is stored). */
  card_id: string;
  currency: string;
  /** The first payment's amount: the promotional price for `promotion_cycle` charges. */
  amount_minor: number;
  contract_amount_minor: number;
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
  /** Total charges including the first payment; 0 = until cancelled. */
  billing_cycle: number;
  promotion_cycle: number;
  /** `YYYY-MM-DD` or ''. */
  contract_start: string;
  contract_end: string;
  status: SubscriptionStatus;
  /** The deduction the schedule waits for (1 = the first after the first payment), and when; null when none is left. */
  next_n: number;
  next_at: number | null;
  notify_url: string;
  /** The last order number used: deduction orders are `<first_order_no>-R<charge_seq>`, every attempt (retries too) a new one. */
  charge_seq: number;
  /** Deductions paid so far (the first payment not counted). */
  charged_count: number;
  /** Failed attempts of deduction `next_n` so far: 0 while Active; 1..3 while PastDue (retried after 1, 3 and 5 days). */
  retry_count: number;
  /** Why it ended ('' while it runs): `cancelled by the merchant`, `payment failed`, … */
  end_reason: string;
  created_at: number;
  updated_at: number;
}

export interface SubscriptionTables {
  subscriptions: SubscriptionRow;
}
