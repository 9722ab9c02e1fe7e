// PaymentMethods of the generic interface (docs/contract.md §24; issue 33): the platform family's
// `pm_` object over a vaulted card. The card itself is a `cards` row (number encrypted, security
// code never kept); this row holds who it belongs to and what the merchant said of it.

export interface PaymentMethodRow {
  /** `pm_` + a time-ordered id. */
  id: string;
  account_id: string;
  livemode: number;
  /** The vault row (`cards.card_id`). */
  card_id: string;
  /** The customer it is attached to (`cus_…`), '' when none. */
  customer_id: string;
  /** 1 once detached from a customer: it may not be used or attached again (as the family has it). */
  detached: number;
  /** JSON: { name, email, phone, address } as given ({} when none). */
  billing_details: string;
  /** JSON object of string values (src/generic/wire.ts limits). */
  metadata: string;
  created_at: number;
  updated_at: number;
}

export interface PaymentMethodTables {
  payment_methods: PaymentMethodRow;
}
