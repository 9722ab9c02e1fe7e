// An account's recent outcomes per payment method, for the ranking (docs/contract.md §8). One
// bounded read per method on the covering index payments_method_recent (account_id,
// card_brand, created_at, status, result_code): the latest
// HISTORY_LIMIT attempts within HISTORY_WINDOW_MS, whichever is fewer.
//
// What counts:
// - a payment is counted under the method in its `card_brand` column: a card payment's
//   brand (direct or hosted checkout alike), and for an APM payment its `payment_method`,
//   which the APM flow writes there (the column names the payment's brand or method; the
//   catalogue keeps APM names apart from card brand names);
// - approved: the authorisation succeeded (`0000`, or `0004` approved and held for review),
//   whatever happened to the payment afterwards (captured, refunded, cancelled);
// - not counted: payments still waiting for the shopper (`pending`: a 3-D Secure challenge
//   or an issuer page), and refusals by the gateway itself that say nothing about the
//   method: `1008` (the account's own risk rules) and `1010` (a mistyped card number, never
//   sent to the processor);
// - every other outcome is an attempt that failed: issuer declines, failed 3-D Secure,
//   and APM payments the shopper let expire.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { accountPaymentsQuery } from '../payments/reader.js';
import type { MethodHistory, MethodType } from './ranking.js';

export const HISTORY_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
export const HISTORY_LIMIT = 1000;

export const APPROVED_RESULTS: readonly string[] = ['0000', '0004'];
export const UNCOUNTED_RESULTS: readonly string[] = ['1008', '1010'];

export interface MethodKey {
  payment_method: string;
  type: MethodType;
}

/** The latest counted attempts of one method: a bounded backward range of `payments_method_recent`. */
export function recentAttempts(
  db: Kysely<DB>,
  account_id: string,
  payment_method: string,
  now_ms: number,
  limit = HISTORY_LIMIT,
  window_ms = HISTORY_WINDOW_MS,
) {
  return accountPaymentsQuery(db, account_id)
    .select('result_code')
    .where('card_brand', '=', payment_method)
    .where('created_at', '>=', now_ms - window_ms)
    .where('status', '<>', 'pending')
    .where('result_code', 'not in', UNCOUNTED_RESULTS)
    .orderBy('created_at', 'desc')
    .limit(limit);
}

export async function methodHistory(
  db: Kysely<DB>,
  account_id: string,
  method: MethodKey,
  now_ms: number,
  limit = HISTORY_LIMIT,
  window_ms = HISTORY_WINDOW_MS,
): Promise<MethodHistory> {
  const recent = recentAttempts(db, account_id, method.payment_method, now_ms, limit, window_ms).as('recent');
  const row = await db
    .selectFrom(recent)
    .select((eb) => [
      eb.fn.countAll<number | string>().as('attempts'),
      eb.fn.sum<number | string | null>(eb.case().when('result_code', 'in', APPROVED_RESULTS).then(1).else(0).end()).as('approved'),
    ])
    .executeTakeFirstOrThrow();
  return { ...method, attempts: Number(row.attempts), approved: Number(row.approved ?? 0) };
}

/** The history of several methods, read side by side. */
export function methodsHistory(db: Kysely<DB>, account_id: string, methods: readonly MethodKey[], now_ms: number): Promise<MethodHistory[]> {
  return Promise.all(methods.map((m) => methodHistory(db, account_id, m, now_ms)));
}
