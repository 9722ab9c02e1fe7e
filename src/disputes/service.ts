// The dispute commands of the money core (docs/contract.md §22; issue 34): open (from a processor's
// notification or the sandbox), escalate an inquiry, add evidence and submit it, accept, and
// the processor's decision. Each is one transaction: the dispute's row moved by its table
// (states.ts), its postings (ledger.ts) and its event, so a committed change always has its
// money and its notification and a repeated notification changes nothing twice.
import { randomUUID } from 'node:crypto';
import { newId } from '../crypto/ids.js';
import type { Tx } from '../db/store.js';
import type { DisputeNoticeRow } from '../db/tables/dispute-orphans.js';
import type { DisputeEvidenceRow, DisputeRow } from '../db/tables/disputes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { formatAmount } from '../money/currency.js';
import { type EventType, recordEvent } from '../notifications/outbox.js';
import { sandboxDisputeDelayMs } from '../processors/sandbox/disputes.js';
import { planStripeEvidence } from '../processors/stripe/dispute-response.js';
import type { DisputeEvidence } from '../processors/types.js';
import { enqueueJob } from '../scheduler/scheduler.js';
import type { Deps } from '../web/context.js';
import { postDisputeDebit, postDisputeWon } from './ledger.js';
import { applyDisputeTransition, canApplyDispute, type DisputeEvent, type DisputeStatus, isOpen, takesEvidence } from './states.js';

export const DISPUTE_DECIDE_KIND = 'dispute.sandbox_decide';

/** Days a merchant has to answer a dispute when the processor names no date. */
export const DEFAULT_RESPONSE_DAYS = 7;
/** All evidence of one dispute, files and text, at most (bytes). */
export const EVIDENCE_MAX_BYTES = 5 * 1024 * 1024;

/** A dispute as a processor (or the sandbox) reports it. */
export interface DisputeNotice {
  connector: string;
  /** The processor's id of the dispute: a repeat of it opens nothing. */
  processor_ref: string;
  payment: PaymentRow;
  kind: 'chargeback' | 'inquiry';
  reason: string;
  /** Default: the payment's captured amount. */
  amount_minor?: number;
  /** Default: DEFAULT_RESPONSE_DAYS from now. */
  evidence_due_by?: number;
}

/** The dispute's record, as `/v1/retrievalDispute` answers it and its events carry it. */
export function disputeRecord(d: DisputeRow, evidence: readonly Pick<DisputeEvidenceRow, 'field' | 'content_type' | 'file_name' | 'size_bytes'>[] = []) {
  return {
    dispute_id: d.dispute_id,
    transaction_id: d.transaction_id,
    order_no: d.order_no,
    amount: formatAmount(Number(d.amount_minor), d.currency),
    currency: d.currency,
    fee: formatAmount(Number(d.fee_minor), d.currency),
    reason: d.reason,
    kind: d.kind,
    status: d.status,
    evidence_due_by: new Date(Number(d.evidence_due_by)).toISOString(),
    evidence_submitted_at: d.submitted_at === null ? '' : new Date(Number(d.submitted_at)).toISOString(),
    evidence: evidence.map((e) => ({
      field: e.field,
      type: e.content_type === 'text' ? 'text' : 'file',
      content_type: e.content_type,
      file_name: e.file_name,
      size: Number(e.size_bytes),
    })),
    response_error: d.response_error ?? '',
    created_at: new Date(Number(d.created_at)).toISOString(),
    closed_at: d.closed_at === null ? '' : new Date(Number(d.closed_at)).toISOString(),
  };
}

async function evidenceOf(tx: Tx, dispute_id: string) {
  return tx
    .selectFrom('dispute_evidence')
    .select(['field', 'content_type', 'file_name', 'size_bytes'])
    .where('dispute_id', '=', dispute_id)
    .orderBy('created_at')
    .orderBy('evidence_id')
    .execute();
}

/** Records the dispute's event `type` with its record as it now stands (in the caller's transaction). */
export async function notifyDispute(tx: Tx, d: DisputeRow, type: EventType, now_ms: number): Promise<void> {
  const payment = await tx.selectFrom('payments').select('notify_url').where('transaction_id', '=', d.transaction_id).executeTakeFirst();
  await recordEvent(
    tx,
    {
      merchant_id: d.merchant_id,
      account_id: d.account_id,
      event_type: type,
      object_id: d.dispute_id,
      notify_url: payment?.notify_url ?? '',
      data: disputeRecord(d, await evidenceOf(tx, d.dispute_id)),
    },
    now_ms,
  );
}

/** The account's dispute fee in `currency` (0 unless the operator set one). */
async function disputeFee(tx: Tx, account_id: string, currency: string): Promise<number> {
  const row = await tx.selectFrom('dispute_fees').select('fee_minor').where('account_id', '=', account_id).where('currency', '=', currency).executeTakeFirst();
  return Number(row?.fee_minor ?? 0);
}

/**
 * Opens the dispute a processor reports, once: a repeat of the same (connector, processor_ref)
 * answers the dispute it opened and changes nothing. A chargeback takes the amount and the fee
 * from the merchant's available balance at once.
 */
export async function openDispute(deps: Deps, n: DisputeNotice, now_ms: number): Promise<{ dispute: DisputeRow; opened: boolean }> {
  return deps.store.transaction(async (tx) => {
    const known = await byProcessorRef(tx, n.connector, n.processor_ref);
    if (known) return { dispute: known, opened: false };
    const p = n.payment;
    const row: DisputeRow = {
      dispute_id: newId('dispute', now_ms),
      merchant_id: p.merchant_id,
      account_id: p.account_id,
      livemode: Number(p.livemode),
      transaction_id: p.transaction_id,
      order_no: p.order_no,
      connector: n.connector,
      processor_ref: n.processor_ref,
      kind: n.kind,
      amount_minor: n.amount_minor ?? Number(p.captured_minor),
      currency: p.currency,
      fee_minor: await disputeFee(tx, p.account_id, p.currency),
      reason: n.reason,
      status: n.kind === 'inquiry' ? 'warning_needs_response' : 'needs_response',
      evidence_due_by: n.evidence_due_by ?? now_ms + DEFAULT_RESPONSE_DAYS * 24 * 3600 * 1000,
      submitted_at: null,
      metadata: '{}',
      submit_ref: '',
      response_error: '',
      created_at: now_ms,
      updated_at: now_ms,
      closed_at: null,
    };
    const inserted = await tx
      .insertInto('disputes')
      .values(row)
      .onConflict((oc) => oc.columns(['connector', 'processor_ref']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) {
      // Another process recorded the same notification between the read and the insert.
      return { dispute: (await byProcessorRef(tx, n.connector, n.processor_ref)) as DisputeRow, opened: false };
    }
    if (row.kind === 'chargeback') await postDisputeDebit(tx, row, now_ms);
    await notifyDispute(tx, row, 'dispute.created', now_ms);
    return { dispute: row, opened: true };
  });
}

function byProcessorRef(tx: Tx, connector: string, processor_ref: string): Promise<DisputeRow | undefined> {
  return tx.selectFrom('disputes').selectAll().where('connector', '=', connector).where('processor_ref', '=', processor_ref).executeTakeFirst();
}

/** A refusal of a dispute command: what the interfaces answer as a 4xx naming `field`. */
export class DisputeRefused extends Error {
  constructor(
    readonly outcome: 'not_found' | 'invalid_state' | 'invalid_input',
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Moves dispute `dispute_id` by `event`, with what the move carries: money (an inquiry
 * escalated, a reopened chargeback debit the merchant; a won chargeback gives the amount
 * back) and the event (`dispute.closed` when it ends, else `dispute.updated`). A move the
 * table does not allow from the current status changes nothing and answers the row as it is
 * (a processor's repeated or reordered notification).
 */
export async function moveDispute(
  deps: Deps,
  dispute_id: string,
  event: DisputeEvent,
  now_ms: number,
  patch: Partial<DisputeRow> = {},
  notice?: AppliedNotice,
): Promise<{ dispute: DisputeRow; moved: boolean }> {
  return deps.store.transaction(async (tx) => {
    if (!notice) return moveDisputeIn(tx, dispute_id, event, now_ms, patch);
    // A processor's notice moves its dispute once, whatever became of its processor_notifications record (a crash
    // before it, deliveries at once): its key is written in the move's transaction; a second writer finds it (on
    // PostgreSQL it waits for the first to commit) and moves nothing.
    if (!(await claimNotice(tx, dispute_id, notice, now_ms))) {
      return {
        dispute: (await tx.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).executeTakeFirstOrThrow()) as DisputeRow,
        moved: false,
      };
    }
    const r = await moveDisputeIn(tx, dispute_id, event, now_ms, patch);
    // Not applied (the table refused it from here): not kept as applied, so it may still wait for its turn.
    if (!r.moved)
      await tx.deleteFrom('dispute_notices').where('processor_id', '=', notice.processor_id).where('notification_id', '=', notice.notification_id).execute();
    return r;
  });
}

/** A processor's notice, as the dispute it was applied to keeps it (dispute_notices). */
export type AppliedNotice = Pick<DisputeNoticeRow, 'processor_id' | 'notification_id' | 'action' | 'occurred_at'>;

/** Records `notice` as applied to the dispute: false when it already was. */
export async function claimNotice(tx: Tx, dispute_id: string, notice: AppliedNotice, now_ms: number): Promise<boolean> {
  const r = await tx
    .insertInto('dispute_notices')
    .values({ ...notice, dispute_id, applied_at: now_ms })
    .onConflict((oc) => oc.columns(['processor_id', 'notification_id']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function moveDisputeIn(
  tx: Tx,
  dispute_id: string,
  event: DisputeEvent,
  now_ms: number,
  patch: Partial<DisputeRow> = {},
): Promise<{ dispute: DisputeRow; moved: boolean }> {
  const before = await tx.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).executeTakeFirst();
  if (!before) throw new DisputeRefused('not_found', 'dispute_id', `dispute ${dispute_id} does not exist`);
  const closing = event === 'win' || event === 'reverse' || event === 'lose' || event === 'accept';
  const kind = event === 'escalate' || event === 'book' ? 'chargeback' : before.kind;
  // A move the table does not allow from here (a repeated or reordered notification) changes nothing.
  if (!canApplyDispute(event, before.status)) return { dispute: before, moved: false };
  const after = await applyDisputeTransition(
    tx,
    dispute_id,
    event,
    before.status,
    { ...patch, kind, ...(closing ? { closed_at: now_ms } : event === 'reopen' ? { closed_at: null } : {}) },
    now_ms,
    // Refused evidence: back to what the merchant was asked (an inquiry stays one).
    event === 'refuse' ? (kind === 'inquiry' ? 'warning_needs_response' : 'needs_response') : undefined,
  );
  if (!after) return { dispute: before, moved: false };
  // Money: an inquiry that becomes a chargeback (escalated, or booked after its defence), or a won chargeback disputed
  // again, is taken now; a won chargeback, or a lost one the processor reversed, is given back.
  if (((event === 'escalate' || event === 'book') && before.kind === 'inquiry') || event === 'reopen')
    await postDisputeDebit(tx, { ...after, fee_minor: event === 'reopen' ? 0 : after.fee_minor }, now_ms);
  if ((event === 'win' || event === 'reverse') && after.kind === 'chargeback') await postDisputeWon(tx, after, now_ms);
  await notifyDispute(tx, after, closing ? 'dispute.closed' : 'dispute.updated', now_ms);
  return { dispute: after, moved: true };
}

/** One piece of evidence as an interface hands it in: text, or a file's bytes. */
export type EvidenceItem = { field: string; text: string } | { field: string; file_name: string; bytes: Buffer };

/** The type a file's first bytes say it is (never its name): PDF, PNG or JPEG; null for anything else. */
export function sniffEvidence(bytes: Buffer): 'application/pdf' | 'image/png' | 'image/jpeg' | null {
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

/**
 * Adds evidence to an open dispute and, with `submit`, sends it (`under_review`): checked first
 * (files by content, 5 MB in all with what the dispute holds), then written in one transaction
 * with the move and its event, encrypted. A closed dispute, or one already under review, takes
 * none: nothing is stored.
 */
export async function giveEvidence(
  deps: Deps,
  d: DisputeRow,
  items: readonly EvidenceItem[],
  submit: boolean,
  now_ms: number,
  request_ref = '',
): Promise<{ dispute: DisputeRow; evidence: number; replayed?: boolean }> {
  // A re-run of a request whose answer was lost (its Idempotency-Key's record): what it did stands, answered as it is now.
  if (request_ref !== '') {
    const done = await rerunOf(deps, d.dispute_id, items.length > 0, submit, request_ref);
    if (done) return { dispute: done, evidence: 0, replayed: true };
  }
  if (!takesEvidence(d.status))
    throw new DisputeRefused('invalid_state', 'dispute_id', `dispute ${d.dispute_id} is ${d.status.replaceAll('_', ' ')}: it takes no more evidence`);
  if (items.length === 0 && !submit) throw new DisputeRefused('invalid_input', 'evidence', 'give at least one piece of evidence, or submit');
  const rows: DisputeEvidenceRow[] = items.map((item, i) => {
    const isText = 'text' in item;
    const bytes = isText ? Buffer.from(item.text, 'utf8') : item.bytes;
    const type = isText ? 'text' : sniffEvidence(bytes);
    if (type === null)
      throw new DisputeRefused('invalid_input', `evidence[${i}]`, `${item.field}: the file is not a PDF, PNG or JPEG (its content says so, whatever its name)`);
    const refusal = type === 'text' ? null : processorRefuses(d.connector, type, bytes.length);
    if (refusal) throw new DisputeRefused('invalid_input', `evidence[${i}]`, `${item.field}: ${refusal}`);
    return {
      evidence_id: newId('dispute_evidence', now_ms),
      dispute_id: d.dispute_id,
      field: item.field,
      content_type: type,
      file_name: isText ? '' : item.file_name,
      size_bytes: bytes.length,
      data_enc: deps.keyring.encrypt(isText ? item.text : bytes.toString('base64')),
      request_ref,
      created_at: now_ms,
    };
  });
  return deps.store.transaction(async (tx) => {
    // Lock the dispute and check it still takes evidence (a concurrent submit or close wins). Locked before the
    // evidence is summed: on PostgreSQL two uploads at once would otherwise each sum without the other's and
    // together pass 5 MB; the second now waits here and sums with the first's committed.
    const locked = await tx
      .updateTable('disputes')
      .set({ updated_at: now_ms })
      .where('dispute_id', '=', d.dispute_id)
      .where('status', 'in', ['warning_needs_response', 'needs_response'])
      .returningAll()
      .executeTakeFirst();
    if (!locked) throw new DisputeRefused('invalid_state', 'dispute_id', `dispute ${d.dispute_id} changed meanwhile: it takes no more evidence`);
    const held = await tx
      .selectFrom('dispute_evidence')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size_bytes'), eb.val(0)).as('n'))
      .where('dispute_id', '=', d.dispute_id)
      .executeTakeFirstOrThrow();
    const total = Number(held.n) + rows.reduce((a, r) => a + r.size_bytes, 0);
    if (total > EVIDENCE_MAX_BYTES)
      throw new DisputeRefused('invalid_input', 'evidence', `evidence of a dispute is at most 5 MB in all; this would make ${(total / 1048576).toFixed(1)} MB`);
    if (d.connector === 'stripe' && rows.length > 0) await refuseWhatStripeWouldNot(deps, tx, d.dispute_id, items, rows);
    if (rows.length > 0) await tx.insertInto('dispute_evidence').values(rows).execute();
    if (!submit) {
      await notifyDispute(tx, locked, 'dispute.updated', now_ms);
      return { dispute: locked, evidence: rows.length };
    }
    const moved = await moveDisputeIn(tx, d.dispute_id, 'submit', now_ms, { submitted_at: now_ms, submit_ref: request_ref, response_error: '' });
    // In the same transaction, the job that sends it: the sandbox's decision (by the evidence's words), or
    // the call to the processor that holds the payment (respond.ts), whose notification then decides.
    await scheduleSandboxDecision(tx, moved.dispute, now_ms);
    await scheduleResponse(tx, moved.dispute, 'defend', now_ms);
    return { dispute: moved.dispute, evidence: rows.length };
  });
}

/** The dispute as it stands if request `ref` already gave its evidence (or submitted it): undefined when it has not. */
async function rerunOf(deps: Deps, dispute_id: string, gives: boolean, submits: boolean, ref: string): Promise<DisputeRow | undefined> {
  const row = await deps.store.db.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).executeTakeFirst();
  if (!row) return undefined;
  if (submits && row.submit_ref === ref) return row;
  if (gives) {
    const given = await deps.store.db
      .selectFrom('dispute_evidence')
      .select('evidence_id')
      .where('dispute_id', '=', dispute_id)
      .where('request_ref', '=', ref)
      .executeTakeFirst();
    // Its evidence and its submit were one transaction: evidence of this request is the request done.
    if (given) return row;
  }
  return undefined;
}

/** The merchant accepts the dispute (it is lost without defence); refused once it is under review or closed. */
export async function acceptDispute(deps: Deps, d: DisputeRow, now_ms: number): Promise<DisputeRow> {
  if (!takesEvidence(d.status))
    throw new DisputeRefused('invalid_state', 'dispute_id', `dispute ${d.dispute_id} is ${d.status.replaceAll('_', ' ')}: it cannot be accepted`);
  const r = await deps.store.transaction(async (tx) => {
    const moved = await moveDisputeIn(tx, d.dispute_id, 'accept', now_ms, { response_error: '' });
    // The processor that holds the payment is told in the same unit of work (respond.ts).
    if (moved.moved) await scheduleResponse(tx, moved.dispute, 'accept', now_ms);
    return moved;
  });
  if (!r.moved) throw new DisputeRefused('invalid_state', 'dispute_id', `dispute ${d.dispute_id} changed meanwhile`);
  return r.dispute;
}

/** Where the processor that holds a dispute takes fewer files than the three: Adyen's Disputes API takes PDF (to 2 MB) and JPEG. */
const PROCESSOR_FILES: Readonly<Record<string, { types: readonly string[]; pdf_max_bytes: number; name: string }>> = {
  adyen: { types: ['application/pdf', 'image/jpeg'], pdf_max_bytes: 2 * 1024 * 1024, name: 'Adyen' },
};

/** Why the dispute's processor would refuse this file (null: it takes it), so it is refused before anything is stored. */
function processorRefuses(connector: string, type: string, size: number): string | null {
  const rule = Object.hasOwn(PROCESSOR_FILES, connector) ? PROCESSOR_FILES[connector] : undefined;
  if (!rule) return null;
  if (!rule.types.includes(type)) return `this dispute is at ${rule.name}, which takes PDF and JPEG files only: send this one as a PDF or JPEG`;
  if (type === 'application/pdf' && size > rule.pdf_max_bytes) return `this dispute is at ${rule.name}, which takes PDF files of at most 2 MB`;
  return null;
}

/**
 * Stripe's limits (5,000 or 20,000 characters per text field, 150,000 in all, one file per field and a second in
 * uncategorized_file) checked when the evidence is given, with what the dispute holds, by the same plan the job
 * sends (src/processors/stripe/dispute-response.ts): refused here, naming the piece that does not fit, rather than
 * stored and then refused by the job after the submit. Under the dispute's lock, so uploads at once are checked together.
 */
async function refuseWhatStripeWouldNot(
  deps: Deps,
  tx: Tx,
  dispute_id: string,
  items: readonly EvidenceItem[],
  rows: readonly DisputeEvidenceRow[],
): Promise<void> {
  const held = (
    await tx
      .selectFrom('dispute_evidence')
      .select(['field', 'content_type', 'file_name', 'data_enc'])
      .where('dispute_id', '=', dispute_id)
      .orderBy('created_at')
      .orderBy('evidence_id')
      .execute()
  ).map((r) => asEvidence(r.field, r.content_type, r.file_name, deps.keyring.decrypt(r.data_enc)));
  const given = items.map((item, i): DisputeEvidence => {
    if ('text' in item) return { field: item.field, text: item.text };
    return { field: item.field, file_name: item.file_name, content_type: rows[i]?.content_type as FileEvidence['content_type'], bytes: item.bytes };
  });
  if (planStripeEvidence([...held, ...given]).kind === 'plan') return;
  // The first piece that makes it not fit (items are few: the interfaces bound them).
  for (let i = 0; i < given.length; i++) {
    const plan = planStripeEvidence([...held, ...given.slice(0, i + 1)]);
    if (plan.kind === 'declined')
      throw new DisputeRefused('invalid_input', `evidence[${i}]`, `this dispute is at Stripe, which would refuse it: ${plan.reason}`);
  }
}

/** A stored piece of evidence as the processors take it (a file's plain data is its base64). */
function asEvidence(field: string, content_type: string, file_name: string, plain: string): DisputeEvidence {
  if (content_type === 'text') return { field, text: plain };
  return { field, file_name, content_type: content_type as FileEvidence['content_type'], bytes: Buffer.from(plain, 'base64') };
}

type FileEvidence = Extract<DisputeEvidence, { bytes: Buffer }>;

/** The decrypted text of a dispute's evidence, for the sandbox's rule and the processors' defence documents. */
export async function evidenceTexts(deps: Deps, dispute_id: string): Promise<string[]> {
  const rows = await deps.store.db.selectFrom('dispute_evidence').select(['content_type', 'data_enc']).where('dispute_id', '=', dispute_id).execute();
  return rows.filter((r) => r.content_type === 'text').map((r) => deps.keyring.decrypt(r.data_enc));
}

export { type DisputeStatus, isOpen };

/** After a sandbox dispute's evidence is submitted: its decision is due a few seconds later (test clocks move it). */
async function scheduleSandboxDecision(tx: Tx, d: DisputeRow, now_ms: number): Promise<void> {
  if (d.connector !== 'sandbox') return;
  await enqueueJob(
    tx,
    {
      kind: DISPUTE_DECIDE_KIND,
      job_key: `${DISPUTE_DECIDE_KIND}:${d.dispute_id}:${now_ms}`,
      account_id: d.account_id,
      due_at: now_ms + sandboxDisputeDelayMs(),
      payload: { dispute_id: d.dispute_id },
    },
    now_ms,
  );
}

export const DISPUTE_RESPOND_KIND = 'dispute.respond';

/** A merchant's answer to a dispute that goes to the processor holding the payment (respond.ts). */
export type DisputeAction = 'defend' | 'accept';

/** In the submit's or accept's transaction: the job that sends it (none for the sandbox's own disputes). */
export async function scheduleResponse(tx: Tx, d: DisputeRow, action: DisputeAction, now_ms: number): Promise<void> {
  if (d.connector === 'sandbox') return;
  await enqueueJob(
    tx,
    {
      kind: DISPUTE_RESPOND_KIND,
      // Each submit or accept its own job: a resubmission after a refusal, even at the same (test clock's) time, is sent.
      job_key: `${DISPUTE_RESPOND_KIND}:${d.dispute_id}:${action}:${randomUUID()}`,
      account_id: d.account_id,
      due_at: now_ms,
      payload: { dispute_id: d.dispute_id, action },
    },
    now_ms,
  );
}
