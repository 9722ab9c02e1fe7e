// The dispute transition table (docs/contract.md §22), applied as a compare-and-set on the current
// status by the one mechanism (src/core/machine.ts). A dispute opens as `needs_response` (a
// chargeback: the money has left the merchant) or `warning_needs_response` (an inquiry: no
// money yet). The merchant submits evidence (`under_review`) or accepts it (`accepted`); the
// processor decides (`won`: the amount comes back; `lost`), or the deadline passes unanswered.
import { allows, apply, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { DisputeRow, DisputeStatus } from '../db/tables/disputes.js';

export type { DisputeStatus } from '../db/tables/disputes.js';

export type DisputeEvent =
  | 'escalate' // an inquiry became a chargeback: the money leaves now
  | 'submit' // the merchant's evidence went to the processor
  | 'accept' // the merchant accepts the dispute: it is lost without defence
  | 'win' // the processor decided for the merchant
  | 'lose' // the processor decided for the cardholder, or the deadline passed unanswered
  | 'reopen' // the cardholder's bank disputed again (a second chargeback, pre-arbitration)
  | 'book' // the processor booked the chargeback it had announced, after the defence: the money leaves, the defence stands
  | 'reverse' // the processor reversed a lost chargeback (Adyen: CHARGEBACK_REVERSED, arbitration won): the amount comes back
  | 'refuse'; // the processor refused the evidence sent: the dispute is the merchant's to answer again

export const DISPUTE_TRANSITIONS = {
  escalate: { from: ['warning_needs_response', 'under_review'], to: 'needs_response' },
  submit: { from: ['warning_needs_response', 'needs_response'], to: 'under_review' },
  accept: { from: ['warning_needs_response', 'needs_response'], to: 'accepted' },
  win: { from: ['warning_needs_response', 'needs_response', 'under_review'], to: 'won' },
  lose: { from: ['warning_needs_response', 'needs_response', 'under_review'], to: 'lost' },
  reopen: { from: ['won'], to: 'needs_response' },
  // Adyen announces a chargeback (NOTIFICATION_OF_CHARGEBACK), takes the defence, and books it (CHARGEBACK) after.
  book: { from: ['under_review'], to: 'under_review' },
  // Money follows the processor (§20): a loss it reverses is won. Apart from `win` so that only a processor's notice moves a lost dispute.
  reverse: { from: ['lost'], to: 'won' },
  // An inquiry's evidence refused goes back to the inquiry; a chargeback's to needs_response (moveDisputeIn picks by kind).
  refuse: { from: ['under_review'], to: ['warning_needs_response', 'needs_response'] },
} as const satisfies Transitions<DisputeStatus, DisputeEvent>;

export const DISPUTE_MACHINE: Machine<DisputeRow, DisputeStatus, DisputeEvent> = {
  noun: 'dispute',
  table: 'disputes' satisfies keyof DB,
  key: 'dispute_id',
  status: 'status',
  stamp: 'updated_at',
  events: DISPUTE_TRANSITIONS,
};

export const OPEN_STATUSES: readonly DisputeStatus[] = ['warning_needs_response', 'needs_response', 'under_review'];
export const CLOSED_STATUSES: readonly DisputeStatus[] = ['won', 'lost', 'accepted'];

export const isOpen = (s: DisputeStatus): boolean => OPEN_STATUSES.includes(s);
/** Evidence may be given (and submitted) while the merchant is asked to respond. */
export const takesEvidence = (s: DisputeStatus): boolean => s === 'warning_needs_response' || s === 'needs_response';

export function canApplyDispute(event: DisputeEvent, from: DisputeStatus): boolean {
  return allows<DisputeStatus, DisputeEvent>(DISPUTE_TRANSITIONS, event, from);
}

/** Applies `event` if the dispute is still `from`: the updated row, or undefined when another change got there first. */
export function applyDisputeTransition(
  tx: Tx,
  dispute_id: string,
  event: DisputeEvent,
  from: DisputeStatus,
  patch: Partial<DisputeRow>,
  now_ms: number,
  to?: DisputeStatus,
): Promise<DisputeRow | undefined> {
  return apply(tx, DISPUTE_MACHINE, dispute_id, event, from, patch, now_ms, { to });
}
