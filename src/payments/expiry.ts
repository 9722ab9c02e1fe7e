// Payments that waited too long (one job, one rule per waiting status):
// - docs/contract.md §7: a manual authorisation not captured within 7 days expires (7000) and its
//   hold is released;
// - docs/contract.md §14/§15: a hosted-checkout session nobody paid within its time, or an
//   alternative-method payment the shopper did not finish by the method's deadline,
//   expires (7000, `1018:Not paid in time`); nothing was reserved, so nothing is released.
// (A pending 3-D Secure challenge has no expires_at on the payment: its challenge lapses.)
// Called by a scheduled task inside `serve`, by the pages that meet a lapsed payment, and
// by tests with a moved clock. Each run is bounded.

import type { Deps } from '../web/context.js';
import { paymentClaim } from './at-processor.js';
import { movePayment } from './engine.js';
import { expiringIds, paymentById } from './reader.js';
import { checkoutSessionState } from './states.js';

/** Payments expired per run at most (docs/style.md §9). */
export const EXPIRY_BATCH = 200;

const WAITING = ['authorised', 'pending'] as const;

/** Expires one payment if it is still waiting and due; true when this call expired it. */
export async function expireIfDue(deps: Pick<Deps, 'store'>, transaction_id: string, now_ms: number): Promise<boolean> {
  return deps.store.transaction(async (tx) => {
    // Locked first (PostgreSQL): a capture or cancel that claims it commits before this reads its claim, or waits for this to end.
    const row = await paymentById(tx, transaction_id, { lock: deps.store.engine === 'postgres' });
    if (!row || (row.status !== 'authorised' && row.status !== 'pending') || row.expires_at === null || Number(row.expires_at) > now_ms) return false;
    // A capture or cancel at the processor (docs/attempts.md) is not overtaken: its answer decides.
    const claimed = await tx.selectFrom('processor_attempts').select('attempt_id').where('claim_key', '=', paymentClaim(transaction_id)).executeTakeFirst();
    if (claimed) return false;
    const patch = row.status === 'authorised' ? { authorised_minor: 0, expires_at: null } : { authorised_minor: 0, expires_at: null, result_code: '1018' };
    // A capture, cancel or payment that got there first wins the compare-and-set. A session
    // nobody had chosen a method for must still be unclaimed: a card payment that claimed it
    // meanwhile (pending again, for its 3-D Secure challenge) is not this deadline's to end.
    const unclaimed = checkoutSessionState(row) === 'open';
    return (await movePayment(tx, row, { event: 'expire', to: 'expired', patch, notify: 'payment.expired', unclaimed }, now_ms)) !== undefined;
  });
}

/** Expires due payments (of one account when given: a test clock); returns how many it expired. */
export async function expireDue(deps: Pick<Deps, 'store'>, now_ms: number, limit = EXPIRY_BATCH, account_id?: string): Promise<number> {
  let n = 0;
  for (const status of WAITING) {
    const due = await expiringIds(deps.store.db, status, now_ms, limit, account_id);
    // One transaction per payment, issued together so SQLite commits them as a group.
    const done = await Promise.all(due.map(({ transaction_id }) => expireIfDue(deps, transaction_id, now_ms)));
    n += done.filter(Boolean).length;
  }
  return n;
}
