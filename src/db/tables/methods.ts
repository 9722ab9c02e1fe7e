// Storage of the payment-methods capability: which alternative methods an account may offer.

/**
 * The operator's choice for one method of one account. No row: the default of the account's
 * mode (test: every catalogue method on, so the sandbox works at once; live: off).
 */
export interface AccountPaymentMethodRow {
  account_id: string;
  /** A `payment_method` of the APM catalogue. */
  payment_method: string;
  /** 1 on, 0 off. */
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface MethodTables {
  account_payment_methods: AccountPaymentMethodRow;
}
