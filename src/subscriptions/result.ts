// A subscription as an order record shows it (`subscription_result`, interface.md "Order record").
import { formatDeductionTime, periodLabel } from './schedule.js';
import { recurringStatus } from './states.js';
import type { SubscriptionRow } from './tables.js';

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
