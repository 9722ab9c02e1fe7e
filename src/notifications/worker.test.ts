// The retry decision after an attempt (docs/contract.md §11), one line per case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_SCHEDULE_MS, nextStep } from './worker.js';

const NOW = 1_000_000;
const mid = () => 0.5; // no jitter
const schedule = [1_000, 5_000, 60_000];

const table: Array<[label: string, status: number | null, retry_after_ms: number | null, attempt: number, outcome: string, at: number]> = [
  ['200 acknowledges', 200, null, 1, 'delivered', NOW],
  ['204 acknowledges', 204, null, 2, 'delivered', NOW],
  ['500 → first step', 500, null, 1, 'retry', NOW + 1_000],
  ['timeout → second step', null, null, 2, 'retry', NOW + 5_000],
  ['302 is a failure', 302, null, 1, 'retry', NOW + 1_000],
  ['410 Gone stops', 410, null, 1, 'failed', NOW],
  ['schedule exhausted → failed', 500, null, 4, 'failed', NOW],
  ['Retry-After replaces the step', 429, 30_000, 1, 'retry', NOW + 30_000],
  ['Retry-After capped by the longest step', 503, 3_600_000, 1, 'retry', NOW + 60_000],
  ['Retry-After does not extend the attempts', 503, 1_000, 4, 'failed', NOW],
];
for (const [label, status_code, retry_after_ms, attempt, outcome, at] of table) {
  test(label, () => {
    assert.deepEqual(nextStep({ status_code, retry_after_ms }, attempt, schedule, NOW, mid), { outcome, next_attempt_at: at });
  });
}

test('jitter stays within ±10% of the step', () => {
  assert.equal(nextStep({ status_code: 500, retry_after_ms: null }, 3, schedule, NOW, () => 0).next_attempt_at, NOW + 54_000);
  assert.equal(nextStep({ status_code: 500, retry_after_ms: null }, 3, schedule, NOW, () => 0.999999).next_attempt_at, NOW + 66_000);
});

test('the default schedule retries for about 3 days', () => {
  const total_h = DEFAULT_SCHEDULE_MS.reduce((a, b) => a + b, 0) / 3_600_000;
  assert.ok(total_h > 70 && total_h < 76, `${total_h} h`);
  assert.equal(DEFAULT_SCHEDULE_MS.length + 1, 13, '13 attempts');
});
