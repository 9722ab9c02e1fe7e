// What a dispute posts (src/ledger/README.md; docs/contract.md §22). The disputed amount goes back
// to the cardholder through the card network, and the dispute fee to the gateway, when money
// moves (a chargeback opens, or an inquiry becomes one); the amount comes back if it is won
// (the fee does not). Both leave the merchant's available balance, which may go negative and
// then holds payouts until it is covered.
//
//   dispute opened, amount A          `dispute`         merchant_available −A, processor_clearing +A
//   its fee F                          `dispute_fee`     merchant_available −F, fees +F
//   won                                `dispute_won`     processor_clearing −A, merchant_available +A
//
// Each carries the payment's transaction_id and the dispute's id as `ref`; `ledger verify` checks
// each dispute's postings against its kind and status (src/ledger/verify.ts).
import type { Tx } from '../db/store.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import { post } from '../ledger/postings.js';

export const DISPUTE_REASONS = ['dispute', 'dispute_fee', 'dispute_won'] as const;

type Money = Pick<DisputeRow, 'account_id' | 'currency' | 'transaction_id' | 'dispute_id' | 'amount_minor' | 'fee_minor'>;

/** The money leaves: the amount to the cardholder, the fee to the gateway. */
export async function postDisputeDebit(tx: Tx, d: Money, now_ms: number): Promise<void> {
  const common = { account_id: d.account_id, currency: d.currency, transaction_id: d.transaction_id, ref: d.dispute_id };
  const A = Number(d.amount_minor);
  const F = Number(d.fee_minor);
  await post(
    tx,
    {
      ...common,
      reason: 'dispute',
      entries: [
        { ledger_account: 'merchant_available', amount_minor: -A },
        { ledger_account: 'processor_clearing', amount_minor: A },
      ],
    },
    now_ms,
  );
  if (F > 0)
    await post(
      tx,
      {
        ...common,
        reason: 'dispute_fee',
        entries: [
          { ledger_account: 'merchant_available', amount_minor: -F },
          { ledger_account: 'fees', amount_minor: F },
        ],
      },
      now_ms,
    );
}

/** Won: the amount comes back (the fee stays charged). */
export async function postDisputeWon(tx: Tx, d: Money, now_ms: number): Promise<void> {
  const A = Number(d.amount_minor);
  await post(
    tx,
    {
      account_id: d.account_id,
      currency: d.currency,
      transaction_id: d.transaction_id,
      ref: d.dispute_id,
      reason: 'dispute_won',
      entries: [
        { ledger_account: 'processor_clearing', amount_minor: -A },
        { ledger_account: 'merchant_available', amount_minor: A },
      ],
    },
    now_ms,
  );
}
