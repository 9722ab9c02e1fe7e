// Storage of the alternative-method flow (docs/contract.md §15): the sandbox issuer's pages.

export type IssuerPageStatus = 'open' | 'done';

export interface IssuerPageRow {
  /** SHA-256 of the page id: the id itself (the secret in issuer_url) is never looked up in clear. */
  id_hash: string;
  transaction_id: string;
  merchant_id: string;
  account_id: string;
  payment_method: string;
  /** Single-use token the page's form must send back. */
  form_token: string;
  status: IssuerPageStatus;
  created_at: number;
  /** The method's deadline: the payment expires (`7000`) when it passes unpaid. */
  expires_at: number;
  decided_at: number | null;
}

export interface ApmTables {
  apm_issuer_pages: IssuerPageRow;
}
