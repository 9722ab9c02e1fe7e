// The subscription transition table (docs/contract.md §16), applied as a compare-and-set on the
// current status by the one mechanism (src/core/machine.ts), like the payment's.
import { allows, apply, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { SubscriptionRow, SubscriptionStatus } from './tables.js';

export type SubscriptionEvent =
  | 'charge_failed' // a deduction declined: retries follow (dunning)
  | 'charge_succeeded' // a deduction (or a retry) was paid
  | 'give_up' // the last retry failed
  | 'complete' // billing_cycle or contract_end reached
  | 'cancel' // the merchant (API, portal, CLI) cancelled it
  | 'paid_after_cancel' // a deduction at the processor when it was cancelled was paid: counted, the end stands
  | 'failed_after_cancel'; // … or declined: recorded, nothing retried

export const SUBSCRIPTION_TRANSITIONS = {
  charge_failed: { from: ['Active', 'PastDue'], to: 'PastDue' },
  charge_succeeded: { from: ['Active', 'PastDue'], to: 'Active' },
  give_up: { from: ['PastDue'], to: 'Inactived' },
  complete: { from: ['Active', 'PastDue'], to: 'Completed' },
  cancel: { from: ['Active', 'PastDue'], to: 'Inactived' },
  paid_after_cancel: { from: ['Inactived'], to: 'Inactived' },
  failed_after_cancel: { from: ['Inactived'], to: 'Inactived' },
} as const satisfies Transitions<SubscriptionStatus, SubscriptionEvent>;

/** The subscription machine over `subscriptions.status` (src/core/machine.ts applies it). */
export const SUBSCRIPTION_MACHINE: Machine<SubscriptionRow, SubscriptionStatus, SubscriptionEvent> = {
  noun: 'subscription',
  table: 'subscriptions' satisfies keyof DB,
  key: 'recurring_id',
  status: 'status',
  stamp: 'updated_at',
  events: SUBSCRIPTION_TRANSITIONS,
};

export function canApplySubscription(event: SubscriptionEvent, from: SubscriptionStatus): boolean {
  return allows<SubscriptionStatus, SubscriptionEvent>(SUBSCRIPTION_TRANSITIONS, event, from);
}

type Patch = Partial<Omit<SubscriptionRow, 'recurring_id' | 'status' | 'updated_at'>>;

/** Applies `event` if the subscription is still in `from`: the updated row, or undefined when another change got there first. */
export function applySubscriptionTransition(
  tx: Tx,
  recurring_id: string,
  event: SubscriptionEvent,
  from: SubscriptionStatus,
  patch: Patch,
  now_ms: number,
): Promise<SubscriptionRow | undefined> {
  return apply(tx, SUBSCRIPTION_MACHINE, recurring_id, event, from, patch, now_ms);
}
