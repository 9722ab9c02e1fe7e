// The payout transition table (docs/contract.md §17), applied as a compare-and-set on the current
// status like the payment's (src/payments/states.ts). A payout is created SCHEDULED (a later
// payment_date), PROCESSING (dispatched now) or FAILED (not funded); every later move is
// one of these events.
import type { Tx } from '../db/store.js';
import type { PayoutRow, PayoutStatus } from './tables.js';

export { type FeePaidBy, PAYOUT_STATUSES, type PayoutStatus } from './tables.js';

/** What ended a payout other than COMPLETED (`failure_type`). */
export type FailureType = 'INSUFFICIENT_FUNDS' | 'INVALID_ACCOUNT' | 'RETURNED' | 'PROCESSOR_ERROR';

export type PayoutEvent =
  | 'dispatch' // payment_date reached: handed to the payout connector
  | 'complete' // the connector paid the beneficiary
  | 'fail' // the connector refused it, or the bank returned it
  | 'cancel'; // the merchant cancelled it before dispatch

export const PAYOUT_TRANSITIONS: Readonly<Record<PayoutEvent, { from: readonly PayoutStatus[]; to: PayoutStatus }>> = {
  dispatch: { from: ['SCHEDULED'], to: 'PROCESSING' },
  complete: { from: ['PROCESSING'], to: 'COMPLETED' },
  fail: { from: ['PROCESSING'], to: 'FAILED' },
  cancel: { from: ['SCHEDULED'], to: 'CANCELLED' },
};

/** Funds stay reserved while a payout may still be paid. */
export function holdsFunds(status: PayoutStatus): boolean {
  return status === 'SCHEDULED' || status === 'PROCESSING';
}

type Patch = Partial<Pick<PayoutRow, 'failure_type' | 'failure_reason' | 'processor_reference'>>;

/** Applies `event` if the payout is still `from`; the updated row, or undefined when another change got there first. */
export async function applyPayoutTransition(
  tx: Tx,
  transaction_id: string,
  event: PayoutEvent,
  from: PayoutStatus,
  patch: Patch,
  now_ms: number,
): Promise<PayoutRow | undefined> {
  const rule = PAYOUT_TRANSITIONS[event];
  if (!rule.from.includes(from)) throw new Error(`payout event ${event} is not allowed from ${from}`);
  return tx
    .updateTable('payouts')
    .set({ ...patch, status: rule.to, updated_at: now_ms })
    .where('transaction_id', '=', transaction_id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}
