// Goal: the subscription transition table (docs/contract.md §16): one line per event, every status
// checked (allowed or refused), where each leads, and what the engine sends for it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import { recurringStatus } from '../payments/subscription-result.js';
import { SUBSCRIPTION_NOTIFY } from './engine.js';
import { canApplySubscription, SUBSCRIPTION_TRANSITIONS, type SubscriptionEvent } from './states.js';
import type { SubscriptionStatus } from './tables.js';

const ALL: SubscriptionStatus[] = ['Active', 'PastDue', 'Completed', 'Inactived'];

const TABLE: Record<SubscriptionEvent, { from: SubscriptionStatus[]; to: SubscriptionStatus; notify: string[] }> = {
  charge_failed: { from: ['Active', 'PastDue'], to: 'PastDue', notify: ['subscription.failed'] },
  charge_succeeded: { from: ['Active', 'PastDue'], to: 'Active', notify: ['subscription.charged'] },
  give_up: { from: ['PastDue'], to: 'Inactived', notify: ['subscription.failed', 'subscription.cancelled'] },
  complete: { from: ['Active', 'PastDue'], to: 'Completed', notify: ['subscription.charged'] },
  cancel: { from: ['Active', 'PastDue'], to: 'Inactived', notify: ['subscription.cancelled'] },
  paid_after_cancel: { from: ['Inactived'], to: 'Inactived', notify: ['subscription.charged'] },
  failed_after_cancel: { from: ['Inactived'], to: 'Inactived', notify: ['subscription.failed'] },
};

describe('subscription transition table', () => {
  test('every event of the table is listed here', () => {
    assert.deepEqual(Object.keys(SUBSCRIPTION_TRANSITIONS).sort(), Object.keys(TABLE).sort());
  });
  for (const [event, line] of Object.entries(TABLE) as Array<[SubscriptionEvent, (typeof TABLE)[SubscriptionEvent]]>) {
    for (const status of ALL) {
      const allowed = line.from.includes(status);
      test(`${event} from ${status}: ${allowed ? 'allowed' : 'refused'}`, () => assert.equal(canApplySubscription(event, status), allowed));
    }
    test(`${event} leads to ${line.to} and sends ${line.notify.join(', ')}`, () => {
      assert.deepEqual(targets(SUBSCRIPTION_TRANSITIONS[event]), [line.to]);
      assert.deepEqual(SUBSCRIPTION_NOTIFY[event], line.notify);
    });
  }
  test('recurring_status: 1 while it charges, 0 once it ended', () => {
    assert.deepEqual(
      ALL.map((s) => recurringStatus(s)),
      ['1', '1', '0', '0'],
    );
  });
});
