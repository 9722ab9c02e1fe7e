// The refund aggregate's one transition table (style §4), in the style of
// src/payments/states.ts. A refund is created `succeeded` when the processor answers at
// once (the sandbox) or `pending` (refund_status 2) when it answers later.
import type { Tx } from '../db/store.js';
import type { RefundRow } from './tables.js';

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

/** refund_status of docs/contract.md §6. */
export const REFUND_STATUS_CODE: Readonly<Record<RefundStatus, '0' | '1' | '2'>> = {
  pending: '2',
  succeeded: '1',
  failed: '0',
};

/** Statuses a refund may be created in. */
export const REFUND_INITIAL: readonly RefundStatus[] = ['pending', 'succeeded'];

export type RefundEvent = 'settle' | 'fail';

export const REFUND_TRANSITIONS: Readonly<Record<RefundEvent, { from: readonly RefundStatus[]; to: RefundStatus }>> = {
  settle: { from: ['pending'], to: 'succeeded' },
  fail: { from: ['pending'], to: 'failed' },
};

export class RefundTransitionError extends Error {
  constructor(
    readonly event: RefundEvent,
    readonly current: RefundStatus | undefined,
  ) {
    super(current ? `cannot ${event} a refund that is ${current}` : 'refund not found');
  }
}

export function canApplyRefund(event: RefundEvent, from: RefundStatus): boolean {
  return REFUND_TRANSITIONS[event].from.includes(from);
}

type Patch = Partial<Pick<RefundRow, 'result_code' | 'refund_reference' | 'processed_at'>>;

/** Compare-and-set of one refund's status; false when another request changed it first. */
export async function applyRefundTransition(
  tx: Tx,
  refund_reference_id: string,
  event: RefundEvent,
  from: RefundStatus,
  patch: Patch,
  now_ms: number,
): Promise<boolean> {
  const rule = REFUND_TRANSITIONS[event];
  if (!rule.from.includes(from)) throw new RefundTransitionError(event, from);
  const result = await tx
    .updateTable('refunds')
    .set({ ...patch, status: rule.to, updated_at: now_ms })
    .where('refund_reference_id', '=', refund_reference_id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
