// Per-account balances per currency, read from the materialised sums of the postings
// (`ledger verify` proves they equal the entries).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.js';
import { formatAmount } from '../money/currency.js';
import type { LedgerAccount } from './tables.js';

export interface AccountBalance {
  currency: string;
  /** Captured, awaiting settlement (net of fees). */
  pending_minor: number;
  /** Settled; refunds are taken from here. */
  available_minor: number;
  /** Authorisation holds on shoppers' cards, not yet captured. */
  held_minor: number;
  refunds_in_flight_minor: number;
  fees_minor: number;
  /** Taken from available for payouts not paid yet (SCHEDULED, PROCESSING). */
  payouts_reserved_minor: number;
}

export async function accountBalances(db: Kysely<DB>, account_id: string): Promise<AccountBalance[]> {
  // A balance is the sum of its slots (postings.ts).
  const rows = await db
    .selectFrom('ledger_balances')
    .select(['currency', 'ledger_account', sql<number>`sum(balance_minor)`.as('balance_minor')])
    .where('account_id', '=', account_id)
    .groupBy(['currency', 'ledger_account'])
    .orderBy('currency')
    .execute();
  const byCurrency = new Map<string, AccountBalance>();
  for (const r of rows) {
    let b = byCurrency.get(r.currency);
    if (!b) {
      b = { currency: r.currency, pending_minor: 0, available_minor: 0, held_minor: 0, refunds_in_flight_minor: 0, fees_minor: 0, payouts_reserved_minor: 0 };
      byCurrency.set(r.currency, b);
    }
    const field: Partial<Record<LedgerAccount, keyof Omit<AccountBalance, 'currency'>>> = {
      merchant_pending: 'pending_minor',
      merchant_available: 'available_minor',
      customer_holds: 'held_minor',
      refunds_in_flight: 'refunds_in_flight_minor',
      fees: 'fees_minor',
      payouts_reserved: 'payouts_reserved_minor',
    };
    const f = field[r.ledger_account];
    if (f) b[f] = Number(r.balance_minor);
  }
  return [...byCurrency.values()];
}

export function formatBalance(b: AccountBalance): Record<string, string> {
  return {
    currency: b.currency,
    pending: formatAmount(b.pending_minor, b.currency),
    available: formatAmount(b.available_minor, b.currency),
    held: formatAmount(b.held_minor, b.currency),
    refunds_in_flight: formatAmount(b.refunds_in_flight_minor, b.currency),
    fees: formatAmount(b.fees_minor, b.currency),
    payouts_reserved: formatAmount(b.payouts_reserved_minor, b.currency),
  };
}
