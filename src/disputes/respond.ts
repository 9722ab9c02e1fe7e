// A merchant's answer to a dispute, sent to the processor that holds the payment (docs/contract.md
// §22; issue 34 item 3): the evidence submitted (`defend`) or the dispute accepted. The submit
// or accept commits the dispute's move with a `dispute.respond` job in one transaction; the job
// records the processor attempt (committed before the call, holding the dispute's claim), makes
// the call outside any transaction, and settles it: taken, the dispute stays where the merchant
// put it; refused, the attempt is declined and submitted evidence goes back to the merchant
// (`refuse`, with the processor's reason in `response_error`); no answer, the job fails and the
// scheduler runs it again later, which sends again under the same attempt id (the processor's
// idempotency key). The sandbox decides its own disputes (sandbox.ts) and is sent nothing.
import type { DisputeRow } from '../db/tables/disputes.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { processorOfPayment, processorReference } from '../payments/at-processor.js';
import { callWithDeadline, newAttempt, OPEN_ATTEMPT, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { DisputeEvidence, DisputeResponseOutcome, Processor } from '../processors/types.js';
import type { Deps } from '../web/context.js';
import { type DisputeAction, moveDisputeIn, notifyDispute } from './service.js';

/** The claim an open response attempt holds: one call about a dispute at a processor at a time. */
const claimOf = (dispute_id: string) => `dispute:${dispute_id}`;

/** The status the dispute is in while its response is due to be sent (else it moved meanwhile: nothing to send). */
const AWAITING = { defend: 'under_review', accept: 'accepted' } as const;

/** What one run of the job did (tests read it). */
export type ResponseRun = 'stale' | 'approved' | 'declined' | 'unknown' | 'no_connector';

/**
 * The `dispute.respond` job, at least once. Throws when the processor gave no answer, so the
 * scheduler runs it again (with backoff) and the call is repeated under the same attempt id.
 */
export async function runResponse(deps: Deps, dispute_id: string, action: DisputeAction, now_ms: number): Promise<ResponseRun> {
  const d = await deps.store.db.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).executeTakeFirst();
  // Decided meanwhile (the processor's notification came first), or already refused and back with the merchant.
  if (!d || d.status !== AWAITING[action]) return 'stale';
  const processor = await processorOfPayment(deps, d);
  if (!processor?.respondToDispute) {
    await settleResponse(deps, d, action, undefined, { kind: 'declined', reason: 'no configured processor of this payment takes dispute responses' }, now_ms);
    return 'no_connector';
  }
  const attempt = await claimAttempt(deps, processor, d, action, now_ms);
  if (!attempt) return 'stale';
  const payment = await deps.store.db.selectFrom('payments').select('details').where('transaction_id', '=', d.transaction_id).executeTakeFirstOrThrow();
  const input = {
    action,
    processor_ref: d.processor_ref,
    transaction_id: d.transaction_id,
    reference: processorReference(payment),
    evidence: action === 'defend' ? await evidenceOf(deps, d.dispute_id) : [],
  };
  const respond = processor.respondToDispute;
  const outcome = await callWithDeadline(attempt, deps.now, (call) => respond.call(processor, input, call));
  await settleResponse(deps, d, action, attempt, outcome, now_ms);
  if (outcome.kind === 'unknown') throw new Error(`the ${processor.name} answer to dispute ${d.dispute_id}'s ${action} is unknown: ${outcome.reason}`);
  return outcome.kind;
}

/**
 * The attempt to send: the open one of an earlier run (its process died, or no answer came),
 * given a new deadline, or a new one committed now. Undefined when another run holds it.
 */
async function claimAttempt(deps: Deps, processor: Processor, d: DisputeRow, action: DisputeAction, now_ms: number): Promise<ProcessorAttemptRow | undefined> {
  const operation = action === 'defend' ? 'dispute_defend' : 'dispute_accept';
  const fresh = newAttempt(
    {
      account_id: d.account_id,
      connector: processor.name,
      processor_id: processor.processor_id,
      operation,
      object_id: d.dispute_id,
      amount_minor: Number(d.amount_minor),
      currency: d.currency,
      claim_key: claimOf(d.dispute_id),
    },
    now_ms,
    deps.settings.processor_timeout_ms,
  );
  return deps.store.transaction(async (tx) => {
    const open = await tx
      .selectFrom('processor_attempts')
      .selectAll()
      .where('claim_key', '=', claimOf(d.dispute_id))
      .where('status', 'in', [...OPEN_ATTEMPT])
      .executeTakeFirst();
    if (!open) {
      await tx.insertInto('processor_attempts').values(fresh).execute();
      return fresh;
    }
    if (open.operation !== operation) return undefined;
    // Sent again under the same attempt id, with a new deadline.
    const renewed = { deadline_at: fresh.deadline_at, next_check_at: fresh.deadline_at, updated_at: now_ms };
    const r = await tx
      .updateTable('processor_attempts')
      .set(renewed)
      .where('attempt_id', '=', open.attempt_id)
      .where('status', '=', open.status)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? { ...open, ...renewed } : undefined;
  });
}

/** The dispute's evidence, decrypted for the call only. */
async function evidenceOf(deps: Deps, dispute_id: string): Promise<DisputeEvidence[]> {
  const rows = await deps.store.db
    .selectFrom('dispute_evidence')
    .select(['field', 'content_type', 'file_name', 'data_enc'])
    .where('dispute_id', '=', dispute_id)
    .orderBy('created_at')
    .orderBy('evidence_id')
    .execute();
  return rows.map((r) => {
    const plain = deps.keyring.decrypt(r.data_enc);
    if (r.content_type === 'text') return { field: r.field, text: plain };
    return { field: r.field, file_name: r.file_name, content_type: r.content_type as 'application/pdf', bytes: Buffer.from(plain, 'base64') };
  });
}

class SettledMeanwhile extends Error {}

/**
 * Settles the attempt with the processor's answer, and on a refusal of evidence moves the
 * dispute back to the merchant with the reason, in one transaction. An acceptance refused
 * stays accepted (the merchant gave up the money already); its reason is kept and the
 * processor's own decision, when it comes, closes the matter.
 */
async function settleResponse(
  deps: Deps,
  d: DisputeRow,
  action: DisputeAction,
  attempt: ProcessorAttemptRow | undefined,
  outcome: DisputeResponseOutcome,
  now_ms: number,
): Promise<void> {
  const unit = new WriteUnit(deps.store.engine);
  const lost = () => new SettledMeanwhile();
  if (attempt) {
    const status = outcome.kind === 'approved' ? 'approved' : outcome.kind === 'declined' ? 'declined' : 'unknown';
    const error = outcome.kind === 'approved' ? undefined : outcome.reason;
    const result_code = outcome.kind === 'declined' && outcome.credentials_refused ? '1007' : undefined;
    const reference = outcome.kind === 'approved' ? outcome.reference || undefined : undefined;
    settleAttemptInto(unit, attempt, 'answer', { status, error, result_code, reference, checks: attempt.checks + 1 }, now_ms, lost);
  }
  await deps.store
    .transaction(async (tx) => {
      await applyUnit(tx, unit);
      if (outcome.kind !== 'declined') return;
      const reason = outcome.reason.slice(0, 500);
      if (action === 'defend') {
        await moveDisputeIn(tx, d.dispute_id, 'refuse', now_ms, { response_error: reason, submitted_at: null, submit_ref: '' });
        return;
      }
      const kept = await tx
        .updateTable('disputes')
        .set({ response_error: reason, updated_at: now_ms })
        .where('dispute_id', '=', d.dispute_id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await notifyDispute(tx, kept, 'dispute.updated', now_ms);
    })
    .catch((e) => {
      if (!(e instanceof SettledMeanwhile)) throw e;
    });
}
