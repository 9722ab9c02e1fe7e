// What a payout posts (src/ledger/README.md, "Payouts"). Every posting goes to PAYOUT_SLOT
// and a transaction's postings are one per currency, sorted by currency, so payout
// transactions lock balance rows in one global order and never deadlock on PostgreSQL.
//
//   reserve   available −(P+F), payouts_reserved +(P+F)                 (source currency)
//   complete  payouts_reserved −(P+F), fees +F, then                     (source currency)
//               one currency:  processor_clearing +P
//               two:           fx_conversion +P; and in the payment currency
//                              fx_conversion −B, processor_clearing +B
//   release   payouts_reserved −(P+F), available +(P+F)                  (source currency)
//
// P = amount_payer_pays, F = fee_amount, B = amount_beneficiary_receives. A movement made of
// several steps in one transaction (reserve and complete at once) is merged per currency.
import type { Tx } from '../db/store.js';
import { type Entry, PAYOUT_SLOT, post } from '../ledger/postings.js';
import { allocatePayout, releasePayout } from '../settlement/allocate.js';
import type { PayoutRow } from './tables.js';

export type PayoutMovement = 'reserve' | 'complete' | 'release';

type Amounts = Pick<
  PayoutRow,
  | 'transaction_id'
  | 'account_id'
  | 'short_reference_id'
  | 'source_currency'
  | 'payment_currency'
  | 'amount_payer_pays'
  | 'amount_beneficiary_receives'
  | 'fee_amount'
> & { settlement_batches?: string };

function entriesOf(p: Amounts, movement: PayoutMovement): Map<string, Entry[]> {
  const P = Number(p.amount_payer_pays);
  const F = Number(p.fee_amount);
  const B = Number(p.amount_beneficiary_receives);
  const out = new Map<string, Entry[]>();
  const add = (currency: string, ...entries: Entry[]) => out.set(currency, [...(out.get(currency) ?? []), ...entries]);
  if (movement === 'reserve')
    add(p.source_currency, { ledger_account: 'merchant_available', amount_minor: -(P + F) }, { ledger_account: 'payouts_reserved', amount_minor: P + F });
  if (movement === 'release')
    add(p.source_currency, { ledger_account: 'payouts_reserved', amount_minor: -(P + F) }, { ledger_account: 'merchant_available', amount_minor: P + F });
  if (movement === 'complete') {
    add(p.source_currency, { ledger_account: 'payouts_reserved', amount_minor: -(P + F) }, { ledger_account: 'fees', amount_minor: F });
    if (p.source_currency === p.payment_currency) add(p.source_currency, { ledger_account: 'processor_clearing', amount_minor: P });
    else {
      add(p.source_currency, { ledger_account: 'fx_conversion', amount_minor: P });
      add(p.payment_currency, { ledger_account: 'fx_conversion', amount_minor: -B }, { ledger_account: 'processor_clearing', amount_minor: B });
    }
  }
  return out;
}

/**
 * Posts the movements (in the order they happened) as one posting per currency, sorted by
 * currency; then a reserve takes its parts of the settlement batches, a release gives them back
 * (src/settlement/allocate.ts), under the balance rows the postings hold.
 */
export async function postPayout(tx: Tx, p: Amounts, movements: readonly PayoutMovement[], now_ms: number): Promise<void> {
  const byCurrency = new Map<string, Entry[]>();
  for (const m of movements) for (const [currency, entries] of entriesOf(p, m)) byCurrency.set(currency, [...(byCurrency.get(currency) ?? []), ...entries]);
  const reason = movements.length === 1 ? `payout_${movements[0]}` : `payout_${movements.join('_')}`;
  for (const currency of [...byCurrency.keys()].sort()) {
    await post(
      tx,
      {
        account_id: p.account_id,
        currency,
        reason,
        transaction_id: p.transaction_id,
        ref: p.short_reference_id,
        entries: byCurrency.get(currency) as Entry[],
        slot: PAYOUT_SLOT,
      },
      now_ms,
    );
  }
  if (movements.includes('release')) await releasePayout(tx, p);
  else if (movements.includes('reserve')) await allocatePayout(tx, p, now_ms);
}
