// The ranked payment methods of an account for one purchase (docs/contract.md §8): the card brands
// (always offered) and the alternative methods it offers for the currency and billing
// country, ordered by the account's measured approval. `/v1/paymentmethods` answers it and
// the hosted payment page lists its methods in this order.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { CARD_BRANDS } from './catalogue.js';
import { enabledMethods } from './enablement.js';
import { type MethodKey, methodsHistory } from './history.js';
import { type RankedMethod, rankMethods } from './ranking.js';

export interface MethodsQuery {
  currency: string;
  billing_country: string;
  /** Only this card brand (the brand of the shopper's BIN); every listed brand when absent. */
  card_brand?: string;
}

export async function rankedPaymentMethods(
  db: Kysely<DB>,
  account: Pick<AccountRow, 'account_id' | 'mode'>,
  q: MethodsQuery,
  now_ms: number,
): Promise<RankedMethod[]> {
  const cards = q.card_brand ? [q.card_brand] : CARD_BRANDS;
  const apms = await enabledMethods(db, account, q.currency, q.billing_country);
  const keys: MethodKey[] = [
    ...cards.map((payment_method) => ({ payment_method, type: 'card' as const })),
    ...apms.map((m) => ({ payment_method: m.payment_method, type: 'apm' as const })),
  ];
  return rankMethods(await methodsHistory(db, account.account_id, keys, now_ms));
}
