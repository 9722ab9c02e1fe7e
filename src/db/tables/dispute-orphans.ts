// Processor dispute notifications that could not be applied when they came (issue 34 item 2;
// docs/processors.md "Disputes"): kept, reported, and applied later when they can be.

/**
 * One dispute notification kept aside: `unknown_payment`, it names a payment Tollgate does not
 * know (reported by `processor status` through processor_notifications' `unmatched`); `waiting`,
 * it came before the notification that opens its dispute (or a second chargeback before the
 * reversal it follows) and is applied when that comes. `resolved_at` is set once applied.
 */
export interface DisputeOrphanRow {
  processor_id: string;
  notification_id: string;
  account_id: string;
  connector: string;
  /** The processor's id of the dispute. */
  processor_ref: string;
  /** The payment's reference at the processor, as the notification gave it ('' when none). */
  payment_ref: string;
  event: string;
  state: 'unknown_payment' | 'waiting';
  /** The connector's reading of it (a DisputeNotification, JSON), to apply it later. */
  notice: string;
  occurred_at: number;
  received_at: number;
  resolved_at: number | null;
  dispute_id: string | null;
}

/**
 * A processor notice applied to a dispute, written with the move it made (or, for an announced
 * chargeback, when it reached the dispute still unanswered): one row per notification, so a
 * redelivery, even one whose processor_notifications record was lost, applies nothing again.
 */
export interface DisputeNoticeRow {
  processor_id: string;
  notification_id: string;
  dispute_id: string;
  /** The notice's action (src/processors/dispute-notices.ts): `reopen`, `win`, `announce`, … */
  action: string;
  /** When the processor says it happened (epoch ms). */
  occurred_at: number;
  applied_at: number;
}

export interface DisputeOrphanTables {
  dispute_orphans: DisputeOrphanRow;
  dispute_notices: DisputeNoticeRow;
}
