// The sandbox as a source of disputes (docs/contract.md §22): it opens the dispute of a captured
// payment of a dispute card, and decides submitted evidence by its words: `winning_evidence`
// wins, `losing_evidence` loses, anything else stays under review (as the family's test mode
// does). Its disputes whose deadline passed unanswered are lost here too.
import type { DisputeRow } from '../db/tables/disputes.js';
import { sandboxDisputeOf } from '../processors/sandbox/disputes.js';
import type { Deps } from '../web/context.js';
import { evidenceTexts, moveDispute, openDispute } from './service.js';

export { DISPUTE_DECIDE_KIND } from './service.js';

/** Opens the sandbox's dispute of payment `transaction_id`, once (its processor_ref is the payment's). */
export async function sandboxOpen(deps: Deps, transaction_id: string, now_ms: number): Promise<DisputeRow | undefined> {
  const payment = await deps.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirst();
  const card = payment ? sandboxDisputeOf(payment) : undefined;
  if (!payment || !card || Number(payment.captured_minor) <= 0) return undefined;
  const r = await openDispute(
    deps,
    { connector: 'sandbox', processor_ref: `sandbox:${transaction_id}`, payment, kind: card.kind, reason: card.reason },
    now_ms,
  );
  return r.dispute;
}

/** The sandbox's decision by the evidence's words. */
export async function sandboxDecide(deps: Deps, dispute_id: string, now_ms: number): Promise<DisputeRow | undefined> {
  const texts = await evidenceTexts(deps, dispute_id);
  const event = texts.some((t) => t.includes('winning_evidence')) ? 'win' : texts.some((t) => t.includes('losing_evidence')) ? 'lose' : null;
  if (!event) return undefined;
  return (await moveDispute(deps, dispute_id, event, now_ms)).dispute;
}

/**
 * The sandbox's disputes still asking for a response past their deadline are lost (an inquiry
 * simply closes: it moved no money). A real processor's are decided by the processor, whose
 * notification says so (Adyen's DISPUTE_DEFENSE_PERIOD_ENDED, Stripe's `lost`): closing them here
 * would refuse a later escalation and lose its debit.
 */
export async function expireOverdue(deps: Deps, now_ms: number, account_id?: string, limit = 100): Promise<number> {
  let q = deps.store.db
    .selectFrom('disputes')
    .select('dispute_id')
    .where('connector', '=', 'sandbox')
    .where('status', 'in', ['warning_needs_response', 'needs_response'])
    .where('evidence_due_by', '<', now_ms)
    .limit(limit);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  let n = 0;
  for (const d of await q.execute()) if ((await moveDispute(deps, d.dispute_id, 'lose', now_ms)).moved) n++;
  return n;
}
