// The subscription transition table (docs/contract.md §16), applied as a compare-and-set on the
// current status like the payment's (src/payments/states.ts).
import type { Tx } from '../db/store.js';
import type { SubscriptionRow, SubscriptionStatus } from './tables.js';

export type SubscriptionEvent =
  | 'charge_failed' // a deduction declined: retries follow (dunning)
  | 'charge_succeeded' // a deduction (or a retry) was paid
  | 'give_up' // the last retry failed
  | 'complete' // billing_cycle or contract_end reached
  | 'cancel'; // the merchant (API, portal, CLI) cancelled it

export const SUBSCRIPTION_TRANSITIONS: Readonly<Record<SubscriptionEvent, { from: readonly SubscriptionStatus[]; to: SubscriptionStatus }>> = {
  charge_failed: { from: ['Active', 'PastDue'], to: 'PastDue' },
  charge_succeeded: { from: ['Active', 'PastDue'], to: 'Active' },
  give_up: { from: ['PastDue'], to: 'Inactived' },
  complete: { from: ['Active', 'PastDue'], to: 'Completed' },
  cancel: { from: ['Active', 'PastDue'], to: 'Inactived' },
};

/** `recurring_status`: `1` while it charges (Active, PastDue), `0` once it ended. */
export function recurringStatus(status: SubscriptionStatus): '1' | '0' {
  return status === 'Active' || status === 'PastDue' ? '1' : '0';
}

type Patch = Partial<Omit<SubscriptionRow, 'recurring_id' | 'status' | 'updated_at'>>;

/** Applies `event` if the subscription is still in `from`; false when another change got there first. */
export async function applySubscriptionTransition(
  tx: Tx,
  recurring_id: string,
  event: SubscriptionEvent,
  from: SubscriptionStatus,
  patch: Patch,
  now_ms: number,
): Promise<boolean> {
  const rule = SUBSCRIPTION_TRANSITIONS[event];
  if (!rule.from.includes(from)) throw new Error(`subscription event ${event} is not allowed from ${from}`);
  const r = await tx
    .updateTable('subscriptions')
    .set({ ...patch, status: rule.to, updated_at: now_ms })
    .where('recurring_id', '=', recurring_id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
