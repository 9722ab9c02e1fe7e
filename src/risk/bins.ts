// Issuing country by BIN (the leading digits of a card number). A production deployment
// loads its acquirer's BIN file; this table covers every sandbox test card (docs/contract.md §9)
// plus the country test cards merchants know from the widely used card platform, so the
// country rule can be exercised end to end. Longest prefix wins.

export interface BinEntry {
  prefix: string;
  /** ISO 3166-1 alpha-2 issuing country. */
  country: string;
  note: string;
}

export const BINS: readonly BinEntry[] = [
  // docs/contract.md §9 test cards
  { prefix: '424242', country: 'US', note: 'Visa test card' },
  { prefix: '555555', country: 'US', note: 'Mastercard test card' },
  { prefix: '378282', country: 'US', note: 'American Express test card' },
  { prefix: '601111', country: 'US', note: 'Discover test card' },
  { prefix: '356600', country: 'JP', note: 'JCB test card' },
  { prefix: '400000', country: 'US', note: 'Visa outcome test cards (declines, 3-D Secure)' },
  { prefix: '410000', country: 'US', note: 'Visa anti-fraud test card' },
  { prefix: '520082', country: 'US', note: 'Mastercard debit test card' },
  // Country test cards (8-digit prefixes: 4000 + ISO 3166 numeric code + 0)
  { prefix: '40000004', country: 'AT', note: 'Austria' },
  { prefix: '40000003', country: 'AU', note: 'Australia' },
  { prefix: '40000005', country: 'BE', note: 'Belgium' },
  { prefix: '40000007', country: 'BR', note: 'Brazil' },
  { prefix: '40000012', country: 'CA', note: 'Canada' },
  { prefix: '40000020', country: 'DK', note: 'Denmark' },
  { prefix: '40000025', country: 'FR', note: 'France' },
  { prefix: '40000027', country: 'DE', note: 'Germany' },
  { prefix: '40000038', country: 'IT', note: 'Italy' },
  { prefix: '40000039', country: 'JP', note: 'Japan' },
  { prefix: '40000048', country: 'MX', note: 'Mexico' },
  { prefix: '40000072', country: 'ES', note: 'Spain' },
  { prefix: '40000075', country: 'SE', note: 'Sweden' },
  { prefix: '40000082', country: 'GB', note: 'United Kingdom' },
];

const byPrefix = new Map(BINS.map((b) => [b.prefix, b]));

/** The issuing country of a card number, or null when the BIN is not in the table. */
export function issuingCountry(pan: string): string | null {
  for (const len of [8, 6]) {
    const hit = byPrefix.get(pan.slice(0, len));
    if (hit) return hit.country;
  }
  return null;
}
