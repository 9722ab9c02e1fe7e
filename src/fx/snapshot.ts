// The dated default rate snapshot (docs/contract.md §17: "rates from an operator table, with a dated
// default snapshot"). Units of each currency for one US dollar. These figures make the
// sandbox work out of the box; they are NOT market data: an operator sets real rates with
// `npx tollgate fx set EUR USD 1.0842`, and a rate set that way always wins.

export const SNAPSHOT_DATE = '2026-11-02';

/** Units per 1 USD on SNAPSHOT_DATE (rounded; for tests and demos). */
export const PER_USD: Readonly<Record<string, string>> = {
  USD: '1',
  EUR: '0.865',
  GBP: '0.76',
  CHF: '0.8',
  SEK: '9.5',
  NOK: '10.1',
  DKK: '6.46',
  PLN: '3.68',
  CAD: '1.4',
  MXN: '18.4',
  BRL: '5.35',
  JPY: '154',
  CNY: '7.12',
  HKD: '7.77',
  SGD: '1.3',
  INR: '88.6',
  AUD: '1.53',
  NZD: '1.75',
  ZAR: '17.3',
  KWD: '0.307',
};
