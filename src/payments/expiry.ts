// decisions §7: a manual authorisation not captured within 7 days expires (7000) and its
// hold is released. Called by a scheduled task inside `serve`, and by tests with a moved
// clock. Each run is bounded.

import type { Deps } from '../http/context.js';
import { postPaymentChange } from '../ledger/postings.js';
import { recordPaymentEvent } from './events.js';
import { applyTransition } from './states.js';
import type { PaymentRow } from './tables.js';

/** Payments expired per run at most (style §9). */
export const EXPIRY_BATCH = 200;

/** Expires due authorisations; returns how many it expired. */
export async function expireDue(deps: Pick<Deps, 'store'>, now_ms: number, limit = EXPIRY_BATCH): Promise<number> {
  const due = await deps.store.db
    .selectFrom('payments')
    .select('transaction_id')
    .where('status', '=', 'authorised')
    .where('expires_at', '<=', now_ms)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  // One transaction per payment, issued together so SQLite commits them as a group.
  const done = await Promise.all(
    due.map(({ transaction_id }) =>
      deps.store.transaction(async (tx) => {
        const row = await tx.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirst();
        if (row?.status !== 'authorised' || row.expires_at === null || Number(row.expires_at) > now_ms) return false;
        const patch = { authorised_minor: 0, expires_at: null };
        // A capture or cancel that got there first wins the compare-and-set.
        if (!(await applyTransition(tx, transaction_id, 'expire', 'authorised', 'expired', patch, now_ms))) return false;
        const after: PaymentRow = { ...row, ...patch, status: 'expired', updated_at: now_ms };
        await postPaymentChange(tx, row, after, now_ms);
        await recordPaymentEvent(tx, after, 'payment.expired', now_ms);
        return true;
      }),
    ),
  );
  return done.filter(Boolean).length;
}
