// A subscription as a payment's order record and answers show it (`subscription_result`,
// interface.md "Order record"; the authorise answer's `recurring_*` fields, docs/contract.md §16).
// The payment's events, order record and query build it, so it lives with them, below
// src/subscriptions, which uses these wire forms too.
import { assertTime, civilFromDays, DAY_MS, pad } from '../core/calendar.js';
import type { SubscriptionRow, SubscriptionStatus } from '../db/tables/subscriptions.js';

/** The `subscription_result` of an order that neither created nor charged a subscription. */
export const EMPTY_SUBSCRIPTION_RESULT: Readonly<Record<string, string>> = Object.freeze({
  contract_name: '',
  recurring_deduction_period: '',
  recurring_deduction_time: '',
  recurring_id: '',
  recurring_status: '',
  subscription_status: '',
  end_reason: '',
});

/** `subscription_result` of an order record: the subscription the payment created, as it stands now. */
export function subscriptionResult(s: SubscriptionRow | undefined): Record<string, string> {
  if (!s) return { ...EMPTY_SUBSCRIPTION_RESULT };
  return {
    contract_name: s.contract_name,
    recurring_deduction_period: periodLabel(s.interval, s.interval_count),
    recurring_deduction_time: s.next_at === null || recurringStatus(s.status) === '0' ? '' : formatDeductionTime(Number(s.next_at)).slice(0, 10),
    recurring_id: s.recurring_id,
    recurring_status: recurringStatus(s.status),
    // Beyond the spec's five: the named state (PastDue while retrying) and why it ended.
    subscription_status: s.status,
    end_reason: s.end_reason,
  };
}

/** `recurring_status`: `1` while it charges (Active, PastDue), `0` once it ended. */
export function recurringStatus(status: SubscriptionStatus): '1' | '0' {
  return status === 'Active' || status === 'PastDue' ? '1' : '0';
}

/** `recurring_deduction_period`: `1 month`, `2 week`. */
export function periodLabel(interval: SubscriptionRow['interval'], interval_count: number): string {
  return `${interval_count} ${interval}`;
}

/** `YYYY-MM-DD hh:mm:ss` in UTC (recurring_deduction_time, §16). */
export function formatDeductionTime(ms: number): string {
  assertTime('ms', ms);
  const day = Math.floor(ms / DAY_MS);
  const { y, m, d } = civilFromDays(day);
  const second_of_day = Math.floor((ms - day * DAY_MS) / 1000);
  const hh = Math.floor(second_of_day / 3600);
  const mm = Math.floor((second_of_day % 3600) / 60);
  const ss = second_of_day % 60;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)} ${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}`;
}
