// The payout engine (issue 30 item 2): every move of a payout is one event of its transition
// table (states.ts), applied by compare-and-set with the ledger movement and the
// notification that belong to it, in the caller's transaction. The service decides which
// event (the connector's answer, the funding check, the merchant's cancel); this file alone
// pairs an event with its effects, so no call site can post without moving or move
// without notifying.
import type { Tx } from '../db/store.js';
import { type EventType, recordEvent } from '../notifications/outbox.js';
import { type PayoutMovement, postPayout } from './ledger.js';
import { payoutRecord } from './record.js';
import { applyPayoutTransition, type PayoutEvent, type PayoutStatus } from './states.js';
import type { PayoutRow } from './tables.js';

/** What each event owes besides its status: the ledger movement (docs/contract.md §17) and the event sent. */
export const PAYOUT_EFFECTS: Readonly<Record<PayoutEvent, { movement: PayoutMovement | null; notify: EventType | null }>> = {
  dispatch: { movement: null, notify: null },
  still_processing: { movement: null, notify: null },
  complete: { movement: 'complete', notify: 'payout.completed' },
  fail: { movement: 'release', notify: 'payout.failed' },
  // Nothing was reserved for an unfunded payout: nothing to release.
  fail_unfunded: { movement: null, notify: 'payout.failed' },
  cancel: { movement: 'release', notify: 'payout.cancelled' },
};

type Patch = Parameters<typeof applyPayoutTransition>[4];

/**
 * Applies `event` to a payout still in `from`, then its effects. `owed`: movements this
 * transaction already owes (the reserve of a payout created and dispatched at once), posted
 * with the event's own, merged per currency. Undefined, with nothing posted or sent, when
 * another change got there first.
 */
export async function movePayout(
  tx: Tx,
  transaction_id: string,
  event: PayoutEvent,
  from: PayoutStatus,
  patch: Patch,
  now_ms: number,
  owed: readonly PayoutMovement[] = [],
): Promise<PayoutRow | undefined> {
  const row = await applyPayoutTransition(tx, transaction_id, event, from, patch, now_ms);
  if (!row) return undefined;
  const effect = PAYOUT_EFFECTS[event];
  const movements = effect.movement ? [...owed, effect.movement] : owed;
  if (movements.length > 0) await postPayout(tx, row, movements, now_ms);
  if (effect.notify) await recordPayoutEvent(tx, row, effect.notify, now_ms);
  return row;
}

export async function recordPayoutEvent(tx: Tx, row: PayoutRow, event_type: EventType, now_ms: number): Promise<void> {
  await recordEvent(
    tx,
    {
      merchant_id: row.merchant_id,
      account_id: row.account_id,
      event_type,
      object_id: row.transaction_id,
      notify_url: row.notify_url,
      data: payoutRecord(row),
    },
    now_ms,
  );
}
