// Disputes a processor's webhook reports (docs/processors.md "Disputes"; issue 34 item 2): each
// notice the connector read (src/processors/dispute-notices.ts) finds its dispute by the
// processor's id of it, or opens one on the payment it names (only a payment of the
// processor's own account and connector), and moves it by the core's table
// (src/disputes/service.ts), so a repeat, or a move the table does not allow any more, changes
// nothing. Kept aside in `dispute_orphans`, and answered as accepted all the same:
// - a notice naming a payment Tollgate does not know (logged once at warn, `unmatched` in
//   processor_notifications, so `processor status` counts it);
// - a notice that came before the one that opens its dispute (INFORMATION_SUPPLIED before the
//   NOTIFICATION_OF_CHARGEBACK), or a second chargeback before the reversal it follows: applied,
//   in the processor's order, right after the dispute opens or moves.
// Every notice is recorded once in processor_notifications (operation `dispute`): a repeat
// is recognised there. A notice that moved its dispute is also kept with the move, in its
// transaction (dispute_notices): a crash between the move and that record, or deliveries of one
// notice at once, neither apply it twice nor keep it waiting to be applied again.
import type { FastifyBaseLogger } from 'fastify';
import type { DisputeRow } from '../db/tables/disputes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { ProcessorConfigRow } from '../db/tables/processors.js';
import { type AppliedNotice, claimNotice, moveDispute, openDispute } from '../disputes/service.js';
import type { DisputeEvent } from '../disputes/states.js';
import type { DisputeNotification } from '../processors/dispute-notices.js';
import type { Deps } from '../web/context.js';
import { keepNotification } from './kept.js';

type Result = 'settled' | 'stale' | 'open' | 'unmatched';

/** One dispute notice from `row`'s webhook: applied (or kept aside), then recorded once. */
export async function takeDisputeNotice(deps: Deps, log: FastifyBaseLogger, row: ProcessorConfigRow, n: DisputeNotification): Promise<Result> {
  const db = deps.store.db;
  const seen = await db
    .selectFrom('processor_notifications')
    .select('result')
    .where('processor_id', '=', row.processor_id)
    .where('notification_id', '=', n.id.slice(0, 200))
    .executeTakeFirst();
  if (seen) return seen.result;
  const result = await applyNotice(deps, log, row, n);
  await keepNotification(deps, {
    processor_id: row.processor_id,
    notification_id: n.id.slice(0, 200),
    operation: 'dispute',
    attempt_id: '',
    reference: n.processor_ref.slice(0, 200),
    outcome: n.action,
    result,
    received_at: deps.now(),
  });
  return result;
}

async function applyNotice(deps: Deps, log: FastifyBaseLogger, row: ProcessorConfigRow, n: DisputeNotification): Promise<Result> {
  const now = deps.now();
  let dispute = await disputeOf(deps, row, n.processor_ref);
  if (!dispute) {
    const payment = await paymentOf(deps, row, n);
    if (!payment) {
      await keepAside(deps, row, n, 'unknown_payment', now);
      log.warn(
        { processor_id: row.processor_id, notification_id: n.id, event: n.event, dispute_ref: n.processor_ref, payment_ref: n.payment_ref ?? '' },
        'dispute notification names a payment Tollgate does not know: kept in dispute_orphans',
      );
      return 'unmatched';
    }
    if (!n.opens) {
      await keepAside(deps, row, n, 'waiting', now);
      log.info({ processor_id: row.processor_id, notification_id: n.id, event: n.event }, 'dispute notification before its dispute opened: kept until it does');
      return 'open';
    }
    const amount = n.amount_minor !== undefined && (!n.currency || n.currency === payment.currency) ? n.amount_minor : undefined;
    const opened = await openDispute(
      deps,
      {
        connector: row.connector,
        processor_ref: n.processor_ref,
        payment,
        kind: n.opens,
        reason: n.reason ?? 'general',
        ...(amount !== undefined ? { amount_minor: amount } : {}),
        ...(n.evidence_due_by !== undefined ? { evidence_due_by: n.evidence_due_by } : {}),
      },
      now,
    );
    dispute = opened.dispute;
    await noteAnnounced(deps, row, dispute, n, now);
    const moved = await act(deps, row, dispute, n, now);
    const kept = moved === 'waiting' && (await keepAside(deps, row, n, 'waiting', now, dispute.dispute_id));
    await replayWaiting(deps, row, dispute.dispute_id);
    return kept ? 'open' : 'settled';
  }
  await noteAnnounced(deps, row, dispute, n, now);
  const moved = await act(deps, row, dispute, n, now);
  if (moved === 'waiting') {
    // Not kept when it already moved this dispute (its record lost, or another delivery of it moved it just now).
    return (await keepAside(deps, row, n, 'waiting', now, dispute.dispute_id)) ? 'open' : 'settled';
  }
  if (moved === 'moved') await replayWaiting(deps, row, dispute.dispute_id);
  return moved === 'moved' ? 'settled' : 'stale';
}

/** The notice as the dispute keeps it once applied (dispute_notices). */
const appliedNotice = (row: ProcessorConfigRow, n: DisputeNotification): AppliedNotice => ({
  processor_id: row.processor_id,
  notification_id: n.id.slice(0, 200),
  action: n.action,
  occurred_at: n.occurred_at,
});

/**
 * A chargeback announced (Adyen's NOTIFICATION_OF_CHARGEBACK) while its dispute still waits for
 * the merchant's answer is kept with the dispute: the defence then given answers that chargeback,
 * so its booking (CHARGEBACK) takes the money and leaves the defence under review. An
 * announcement after an inquiry was answered (a REQUEST_FOR_INFORMATION's) is not: that answer
 * was not a defence of the chargeback, which the merchant is asked for when it is booked.
 */
async function noteAnnounced(deps: Deps, row: ProcessorConfigRow, d: DisputeRow, n: DisputeNotification, now: number): Promise<void> {
  if (n.action !== 'announce' || d.status !== 'warning_needs_response') return;
  await deps.store.transaction((tx) => claimNotice(tx, d.dispute_id, appliedNotice(row, n), now));
}

/** What the dispute's applied notices say of it: whether its chargeback was announced, and the newest one's time. */
async function historyOf(deps: Deps, dispute_id: string): Promise<{ announced: boolean; latest_at: number }> {
  const rows = await deps.store.db.selectFrom('dispute_notices').select(['action', 'occurred_at']).where('dispute_id', '=', dispute_id).execute();
  return { announced: rows.some((r) => r.action === 'announce'), latest_at: Math.max(0, ...rows.map((r) => Number(r.occurred_at))) };
}

/** The core move a notice asks for, given where the dispute stands and what it was told before (null: none). */
function eventFor(d: DisputeRow, n: DisputeNotification, history: { announced: boolean; latest_at: number }): DisputeEvent | 'waiting' | null {
  switch (n.action) {
    case 'escalate':
      // Adyen books a chargeback it announced after the defence too: the money leaves; the merchant is not asked again.
      if (d.kind !== 'inquiry') return null;
      return d.status === 'under_review' && history.announced ? 'book' : 'escalate';
    case 'lose_unanswered':
      return d.status === 'needs_response' ? 'lose' : null;
    case 'win_inquiry':
      return d.kind === 'inquiry' ? 'win' : null;
    case 'reopen':
      // A second chargeback follows a reversal: one that comes first waits for it.
      return d.status === 'won' ? 'reopen' : d.status === 'needs_response' || d.status === 'under_review' ? 'waiting' : null;
    case 'win':
      // A lost chargeback the processor reverses later (a reversal after the defence period ended, arbitration won after a
      // lost pre-arbitration) is won; a reversal older than what lost it (delivered late) is not.
      return d.status === 'lost' ? (n.occurred_at > history.latest_at ? 'reverse' : null) : 'win';
    case 'submit':
    case 'lose':
      return n.action;
    default:
      return null;
  }
}

async function act(deps: Deps, row: ProcessorConfigRow, d: DisputeRow, n: DisputeNotification, now: number): Promise<'moved' | 'unchanged' | 'waiting'> {
  const reads = (n.action === 'escalate' && d.status === 'under_review') || (n.action === 'win' && d.status === 'lost');
  const event = eventFor(d, n, reads ? await historyOf(deps, d.dispute_id) : { announced: false, latest_at: 0 });
  if (event === 'waiting') return 'waiting';
  if (event === null) return 'unchanged';
  const patch = event === 'submit' && d.submitted_at === null ? { submitted_at: now } : {};
  const r = await moveDispute(deps, d.dispute_id, event, now, patch, appliedNotice(row, n));
  return r.moved ? 'moved' : 'unchanged';
}

/** Notices kept waiting for this dispute, applied in the processor's order, each once it can be. */
async function replayWaiting(deps: Deps, row: ProcessorConfigRow, dispute_id: string): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const d = await deps.store.db.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).executeTakeFirstOrThrow();
    const waiting = await deps.store.db
      .selectFrom('dispute_orphans')
      .selectAll()
      .where('processor_id', '=', row.processor_id)
      .where('processor_ref', '=', d.processor_ref)
      .where('state', '=', 'waiting')
      .where('resolved_at', 'is', null)
      .orderBy('occurred_at')
      .orderBy('received_at')
      .execute();
    let progressed = false;
    for (const w of waiting) {
      const n = JSON.parse(w.notice) as DisputeNotification;
      const moved = await act(deps, row, d, n, deps.now());
      if (moved === 'waiting') continue;
      await deps.store.transaction((tx) =>
        tx
          .updateTable('dispute_orphans')
          .set({ resolved_at: deps.now(), dispute_id })
          .where('processor_id', '=', w.processor_id)
          .where('notification_id', '=', w.notification_id)
          .execute(),
      );
      if (moved === 'moved') {
        progressed = true;
        break; // read the dispute again before the next
      }
    }
    if (!progressed) return;
  }
}

async function keepAside(
  deps: Deps,
  row: ProcessorConfigRow,
  n: DisputeNotification,
  state: 'unknown_payment' | 'waiting',
  now: number,
  dispute_id: string | null = null,
): Promise<boolean> {
  return deps.store.transaction(async (tx) => {
    // Read after the dispute was: a move this notice made is committed with its dispute_notices row, so it is seen here.
    if (dispute_id !== null) {
      const applied = await tx
        .selectFrom('dispute_notices')
        .select('dispute_id')
        .where('processor_id', '=', row.processor_id)
        .where('notification_id', '=', n.id.slice(0, 200))
        .executeTakeFirst();
      if (applied) return false;
    }
    await tx
      .insertInto('dispute_orphans')
      .values({
        processor_id: row.processor_id,
        notification_id: n.id.slice(0, 200),
        account_id: row.account_id,
        connector: row.connector,
        processor_ref: n.processor_ref,
        payment_ref: n.payment_ref ?? '',
        event: n.event.slice(0, 100),
        state,
        notice: JSON.stringify(n),
        occurred_at: n.occurred_at,
        received_at: now,
        resolved_at: null,
        dispute_id,
      })
      .onConflict((oc) => oc.columns(['processor_id', 'notification_id']).doNothing())
      .execute();
    return true;
  });
}

/** The dispute by the processor's id of it, only of this processor's account. */
async function disputeOf(deps: Deps, row: ProcessorConfigRow, processor_ref: string): Promise<DisputeRow | undefined> {
  const d = await deps.store.db
    .selectFrom('disputes')
    .selectAll()
    .where('connector', '=', row.connector)
    .where('processor_ref', '=', processor_ref)
    .executeTakeFirst();
  return d && d.account_id === row.account_id ? d : undefined;
}

/**
 * The disputed payment: by our transaction id when the processor echoes it, else by the
 * processor's reference of the authorisation our attempt recorded; only a payment of this
 * processor's account that went through this connector.
 */
async function paymentOf(deps: Deps, row: ProcessorConfigRow, n: DisputeNotification): Promise<PaymentRow | undefined> {
  const db = deps.store.db;
  const mine = (p: PaymentRow | undefined) => (p && p.account_id === row.account_id && p.connector === row.connector ? p : undefined);
  if (n.object_id) {
    const p = mine(await db.selectFrom('payments').selectAll().where('transaction_id', '=', n.object_id).executeTakeFirst());
    if (p) return p;
  }
  if (!n.payment_ref) return undefined;
  const attempt = await db
    .selectFrom('processor_attempts')
    .select('object_id')
    .where('reference', '=', n.payment_ref)
    .where('account_id', '=', row.account_id)
    .where('operation', '=', 'authorise')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!attempt) return undefined;
  return mine(await db.selectFrom('payments').selectAll().where('transaction_id', '=', attempt.object_id).executeTakeFirst());
}
