// The refund aggregate's one transition table (docs/style.md §4), applied by the one mechanism
// (src/core/machine.ts) like the payment's. A refund is created `succeeded` when the
// processor answers at once (the sandbox) or `pending` (refund_status 2) when it answers
// later.
import { allows, apply, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { RefundRow, RefundStatus } from './tables.js';

export type { RefundStatus };

/** refund_status of docs/contract.md §6. */
export const REFUND_STATUS_CODE: Readonly<Record<RefundStatus, '0' | '1' | '2'>> = {
  pending: '2',
  succeeded: '1',
  failed: '0',
};

/** Statuses a refund may be created in. */
export const REFUND_INITIAL: readonly RefundStatus[] = ['pending', 'succeeded'];

export type RefundEvent = 'settle' | 'fail';

export const REFUND_TRANSITIONS = {
  settle: { from: ['pending'], to: 'succeeded' },
  fail: { from: ['pending'], to: 'failed' },
} as const satisfies Transitions<RefundStatus, RefundEvent>;

/** The refund machine over `refunds.status` (src/core/machine.ts applies it). */
export const REFUND_MACHINE: Machine<RefundRow, RefundStatus, RefundEvent> = {
  noun: 'refund',
  table: 'refunds' satisfies keyof DB,
  key: 'refund_reference_id',
  status: 'status',
  stamp: 'updated_at',
  events: REFUND_TRANSITIONS,
};

export function canApplyRefund(event: RefundEvent, from: RefundStatus): boolean {
  return allows<RefundStatus, RefundEvent>(REFUND_TRANSITIONS, event, from);
}

type Patch = Partial<Pick<RefundRow, 'result_code' | 'refund_reference' | 'processed_at'>>;

/** Compare-and-set of one refund's status: the updated refund, or undefined when another request changed it first. */
export function applyRefundTransition(
  tx: Tx,
  refund_reference_id: string,
  event: RefundEvent,
  from: RefundStatus,
  patch: Patch,
  now_ms: number,
): Promise<RefundRow | undefined> {
  return apply(tx, REFUND_MACHINE, refund_reference_id, event, from, patch, now_ms);
}
