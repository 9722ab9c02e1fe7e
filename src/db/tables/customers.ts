// Customers of the generic interface (docs/contract.md §24; issue 33): the platform family's
// `cus_` object, kept per account and mode. What a customer says of itself is stored as given;
// card data never is (cards stay in the vault, `cards`).

export interface CustomerRow {
  /** `cus_` + a time-ordered id. */
  id: string;
  /** The account whose API key created it (owner of every read and write). */
  account_id: string;
  livemode: number;
  name: string;
  email: string;
  description: string;
  phone: string;
  /** JSON: the address as given ({} when none). */
  address: string;
  /** JSON: { name, phone, address } as given ({} when none). */
  shipping: string;
  /** JSON array of locale strings. */
  preferred_locales: string;
  /** JSON object of string values (src/generic/wire.ts limits). */
  metadata: string;
  /** 1 once deleted: answered 404 afterwards, kept for the payments that name it. */
  deleted: number;
  created_at: number;
  updated_at: number;
}

export interface CustomerTables {
  customers: CustomerRow;
}
