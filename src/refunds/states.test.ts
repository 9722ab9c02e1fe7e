// Goal: the refund transition table: pending → succeeded | failed, nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canApplyRefund, REFUND_INITIAL, REFUND_STATUS_CODE, REFUND_TRANSITIONS, type RefundEvent, type RefundStatus } from './states.js';

const table: Array<[RefundEvent, RefundStatus, boolean]> = [
  ['settle', 'pending', true],
  ['settle', 'succeeded', false],
  ['settle', 'failed', false],
  ['fail', 'pending', true],
  ['fail', 'succeeded', false],
  ['fail', 'failed', false],
];

for (const [event, from, allowed] of table) {
  test(`refund ${event} from ${from}: ${allowed ? 'allowed' : 'refused'}`, () => {
    assert.equal(canApplyRefund(event, from), allowed);
  });
}

test('targets, initial statuses and refund_status codes (docs/contract.md §6)', () => {
  assert.equal(REFUND_TRANSITIONS.settle.to, 'succeeded');
  assert.equal(REFUND_TRANSITIONS.fail.to, 'failed');
  assert.deepEqual([...REFUND_INITIAL].sort(), ['pending', 'succeeded']);
  assert.deepEqual(REFUND_STATUS_CODE, { pending: '2', succeeded: '1', failed: '0' });
});
