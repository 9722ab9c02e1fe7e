// Storage of the hosted checkout (docs/contract.md §14). A session is the page side of one
// payment: the payment row (kind `checkout`, `pending` until the shopper pays) carries the
// state; the session keeps what the pages need besides it.

export interface CheckoutSessionRow {
  /** `cs_` + 32 url-safe characters: in the loading page's form action and the payment page's address. */
  session_id: string;
  /** The session's payment (one per session, one session per payment). */
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  /** JSON of the validated request without its signature; a checkout request carries no card data. */
  request: string;
  /** Where "Cancel" sends the shopper (return_url when the merchant gave none). */
  cancel_url: string;
  /** The shopper's IP address as the merchant's page reached the gateway (source_request_ip). */
  source_ip: string;
  created_at: number;
}

export interface CheckoutTables {
  checkout_sessions: CheckoutSessionRow;
}
