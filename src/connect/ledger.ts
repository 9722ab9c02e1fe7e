// What a transfer and a transfer reversal post (src/ledger/README.md; docs/contract.md §18). Money
// moves between two ledger accounts' available balances through `connect_transfers`, one
// posting per side, each balanced on its own:
//
//   transfer of A, platform P → connected C     P: merchant_available −A, connect_transfers +A
//                                                C: connect_transfers −A, merchant_available +A
//   reversal of N, connected C → platform P      C: merchant_available −N, connect_transfers +N
//                                                P: connect_transfers −N, merchant_available +N
//
// Both go to TRANSFER_SLOT and are written in account_id order (then ledger account order,
// inside post()), whichever way the money moves: transfers and reversals lock balance rows
// in one global order and cannot deadlock on PostgreSQL.
import type { Tx } from '../db/store.js';
import { post, TRANSFER_SLOT } from '../ledger/postings.js';

export interface Move {
  /** The ledger account (platform account id or `acct_…`) the money leaves. */
  from: string;
  /** The ledger account it arrives at. */
  to: string;
  /** Uppercase ISO 4217. */
  currency: string;
  amount_minor: number;
  reason: 'transfer' | 'transfer_reversal';
  /** The transfer's or the reversal's id. */
  ref: string;
}

export async function postMove(tx: Tx, m: Move, now_ms: number): Promise<void> {
  const n = m.amount_minor;
  const sides = [
    { account_id: m.from, available: -n },
    { account_id: m.to, available: n },
  ].sort((a, b) => (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : 0));
  for (const side of sides) {
    await post(
      tx,
      {
        account_id: side.account_id,
        currency: m.currency,
        reason: m.reason,
        transaction_id: '',
        ref: m.ref,
        entries: [
          { ledger_account: 'merchant_available', amount_minor: side.available },
          { ledger_account: 'connect_transfers', amount_minor: -side.available },
        ],
        slot: TRANSFER_SLOT,
      },
      now_ms,
    );
  }
}
