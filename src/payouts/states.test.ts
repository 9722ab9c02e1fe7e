// Goal: the payout transition table (docs/contract.md §17) is exactly what the lifecycle allows:
// one line per event, every status checked (allowed or refused), the target of each, and
// the effects the engine pairs with each event.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import { PAYOUT_EFFECTS } from './engine.js';
import { canApplyPayout, PAYOUT_STATUSES, PAYOUT_TRANSITIONS, type PayoutEvent, type PayoutStatus } from './states.js';

const TABLE: Record<PayoutEvent, { from: PayoutStatus[]; to: PayoutStatus; movement: string | null; notify: string | null }> = {
  dispatch: { from: ['SCHEDULED'], to: 'PROCESSING', movement: null, notify: null },
  still_processing: { from: ['PROCESSING'], to: 'PROCESSING', movement: null, notify: null },
  complete: { from: ['PROCESSING'], to: 'COMPLETED', movement: 'complete', notify: 'payout.completed' },
  fail: { from: ['PROCESSING'], to: 'FAILED', movement: 'release', notify: 'payout.failed' },
  fail_unfunded: { from: ['SCHEDULED', 'PROCESSING'], to: 'FAILED', movement: null, notify: 'payout.failed' },
  cancel: { from: ['SCHEDULED'], to: 'CANCELLED', movement: 'release', notify: 'payout.cancelled' },
};

describe('payout transition table', () => {
  test('every event of the table is listed here', () => {
    assert.deepEqual(Object.keys(PAYOUT_TRANSITIONS).sort(), Object.keys(TABLE).sort());
  });
  for (const [event, line] of Object.entries(TABLE) as Array<[PayoutEvent, (typeof TABLE)[PayoutEvent]]>) {
    for (const status of PAYOUT_STATUSES) {
      const allowed = line.from.includes(status);
      test(`${event} from ${status}: ${allowed ? 'allowed' : 'refused'}`, () => assert.equal(canApplyPayout(event, status), allowed));
    }
    test(`${event} leads to ${line.to}, posts ${line.movement ?? 'nothing'}, sends ${line.notify ?? 'nothing'}`, () => {
      assert.deepEqual(targets(PAYOUT_TRANSITIONS[event]), [line.to]);
      assert.deepEqual(PAYOUT_EFFECTS[event], { movement: line.movement, notify: line.notify });
    });
  }
  test('the ends (COMPLETED, FAILED, CANCELLED) accept no event', () => {
    for (const status of ['COMPLETED', 'FAILED', 'CANCELLED'] as const)
      for (const event of Object.keys(TABLE) as PayoutEvent[]) assert.equal(canApplyPayout(event, status), false, `${event} ${status}`);
  });
});
