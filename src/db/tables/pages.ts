/** An origin allowed to frame the account's pages (docs/contract.md §14); see frame-origins.ts. */
export interface AccountFrameOriginRow {
  account_id: string;
  /** Normalised: `https://shop.example`, `https://*.shop.example:8443`, `http://localhost:3000`. */
  origin: string;
  created_at: number;
}

export interface PageTables {
  account_frame_origins: AccountFrameOriginRow;
}
