// The transition tables of connected accounts and transfers (docs/contract.md §12, §18), over the
// one mechanism (src/core/machine.ts).
//
// A connected account's status is its `deleted` flag: 0 while it is live, 1 once deleted
// (kept for the ledger, answered 404 afterwards); deleting it is the only transition, a
// compare-and-set like any other.
//
// A transfer has no status column: its state is how much of it is reversed, and a reversal
// is a compare-and-set on that counter bounded by the amount (as a payment's refund
// reservation is, src/payments/states.ts). The state is derived in one function,
// `transferState`, and the counter moved in one, `reserveReversal`. A status column would
// store the same fact twice.
import { allows, apply, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { ConnectedAccountRow, TransferRow } from './tables.js';

/** `connected_accounts.deleted`. */
export type AccountStatus = 0 | 1;
export const ACCOUNT_LIVE: AccountStatus = 0;
export const ACCOUNT_DELETED: AccountStatus = 1;

export type AccountEvent = 'delete';

export const ACCOUNT_TRANSITIONS = {
  delete: { from: [ACCOUNT_LIVE], to: ACCOUNT_DELETED },
} as const satisfies Transitions<AccountStatus, AccountEvent>;

export const ACCOUNT_MACHINE: Machine<ConnectedAccountRow, AccountStatus, AccountEvent> = {
  noun: 'connected account',
  table: 'connected_accounts' satisfies keyof DB,
  key: 'id',
  status: 'deleted',
  stamp: 'updated_at',
  events: ACCOUNT_TRANSITIONS,
};

export function canApplyAccount(event: AccountEvent, from: AccountStatus): boolean {
  return allows<AccountStatus, AccountEvent>(ACCOUNT_TRANSITIONS, event, from);
}

/**
 * Marks one of the platform's live connected accounts (of its mode) deleted: the row, or
 * undefined when there is no such live account. The update locks the row until commit.
 */
export function deleteAccount(
  tx: Tx,
  id: string,
  owner: { platform_account_id: string; livemode: number },
  now_ms: number,
): Promise<ConnectedAccountRow | undefined> {
  return apply(tx, ACCOUNT_MACHINE, id, 'delete', ACCOUNT_LIVE, {}, now_ms, { where: owner });
}

export type TransferState = 'open' | 'reversed';

export type TransferEvent =
  | 'reverse_partial' // some of what is left taken back
  | 'reverse_full'; // all that is left taken back

export const TRANSFER_TRANSITIONS = {
  reverse_partial: { from: ['open'], to: 'open' },
  reverse_full: { from: ['open'], to: 'reversed' },
} as const satisfies Transitions<TransferState, TransferEvent>;

/** The one derivation of a transfer's state: `reversed` once the whole amount is reversed. */
export function transferState(t: Pick<TransferRow, 'amount_minor' | 'reversed_minor'>): TransferState {
  return Number(t.reversed_minor) === Number(t.amount_minor) ? 'reversed' : 'open';
}

export function canApplyTransfer(event: TransferEvent, from: TransferState): boolean {
  return allows<TransferState, TransferEvent>(TRANSFER_TRANSITIONS, event, from);
}

/**
 * Raises a transfer's `reversed_minor` by `n` in one compare-and-set bounded by its amount
 * (never read-then-write): true when it moved, false when less than `n` is left.
 */
export async function reserveReversal(tx: Tx, transfer_id: string, n: number, now_ms: number): Promise<boolean> {
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error('a reversal takes back a positive amount');
  const raised = await tx
    .updateTable('transfers')
    .set((eb) => ({ reversed_minor: eb('reversed_minor', '+', n), updated_at: now_ms }))
    .where('id', '=', transfer_id)
    .where((eb) => eb(eb('reversed_minor', '+', n), '<=', eb.ref('amount_minor')))
    .returning('id')
    .executeTakeFirst();
  return raised !== undefined;
}
