// The payout transition table (docs/contract.md §17), applied as a compare-and-set on the current
// status by the one mechanism (src/core/machine.ts), like the payment's. A payout is created SCHEDULED (a later
// payment_date), PROCESSING (dispatched now) or FAILED (not funded); every later move is
// one of these events.
import { allows, apply, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { PayoutRow, PayoutStatus } from './tables.js';

export { type FeePaidBy, PAYOUT_STATUSES, type PayoutStatus } from './tables.js';

/** What ended a payout other than COMPLETED (`failure_type`). */
export type FailureType = 'INSUFFICIENT_FUNDS' | 'INVALID_ACCOUNT' | 'RETURNED' | 'PROCESSOR_ERROR';

export type PayoutEvent =
  | 'dispatch' // payment_date reached: handed to the payout connector
  | 'still_processing' // the connector took it and answers later: its reference is kept
  | 'complete' // the connector paid the beneficiary
  | 'fail' // the connector refused it, or the bank returned it
  | 'fail_unfunded' // at creation: the available balance does not cover it (nothing was reserved)
  | 'cancel'; // the merchant cancelled it before dispatch

export const PAYOUT_TRANSITIONS = {
  dispatch: { from: ['SCHEDULED'], to: 'PROCESSING' },
  still_processing: { from: ['PROCESSING'], to: 'PROCESSING' },
  complete: { from: ['PROCESSING'], to: 'COMPLETED' },
  fail: { from: ['PROCESSING'], to: 'FAILED' },
  fail_unfunded: { from: ['SCHEDULED', 'PROCESSING'], to: 'FAILED' },
  cancel: { from: ['SCHEDULED'], to: 'CANCELLED' },
} as const satisfies Transitions<PayoutStatus, PayoutEvent>;

/** The payout machine over `payouts.status` (src/core/machine.ts applies it). */
export const PAYOUT_MACHINE: Machine<PayoutRow, PayoutStatus, PayoutEvent> = {
  noun: 'payout',
  table: 'payouts' satisfies keyof DB,
  key: 'transaction_id',
  status: 'status',
  stamp: 'updated_at',
  events: PAYOUT_TRANSITIONS,
};

export function canApplyPayout(event: PayoutEvent, from: PayoutStatus): boolean {
  return allows<PayoutStatus, PayoutEvent>(PAYOUT_TRANSITIONS, event, from);
}

/** Funds stay reserved while a payout may still be paid. */
export function holdsFunds(status: PayoutStatus): boolean {
  return status === 'SCHEDULED' || status === 'PROCESSING';
}

type Patch = Partial<Pick<PayoutRow, 'failure_type' | 'failure_reason' | 'processor_reference'>>;

/** Applies `event` if the payout is still `from`; the updated row, or undefined when another change got there first. */
export function applyPayoutTransition(
  tx: Tx,
  transaction_id: string,
  event: PayoutEvent,
  from: PayoutStatus,
  patch: Patch,
  now_ms: number,
): Promise<PayoutRow | undefined> {
  return apply(tx, PAYOUT_MACHINE, transaction_id, event, from, patch, now_ms);
}
