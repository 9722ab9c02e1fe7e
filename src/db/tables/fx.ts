// The operator's FX rate table (docs/contract.md §17). One row per currency pair as the operator
// set it: `rate` units of `quote` for one unit of `base`, a decimal string.

export interface FxRateRow {
  base: string;
  quote: string;
  /** Decimal text with at most RATE_SCALE places (convert.ts). */
  rate: string;
  updated_at: number;
}

export interface FxTables {
  fx_rates: FxRateRow;
}
