// The dispute transition table (docs/contract.md §22): one line per event, every status checked
// (allowed or refused), and where each allowed event leads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import { CLOSED_STATUSES, canApplyDispute, DISPUTE_TRANSITIONS, type DisputeEvent, type DisputeStatus, OPEN_STATUSES, takesEvidence } from './states.js';

const ALL: readonly DisputeStatus[] = ['warning_needs_response', 'needs_response', 'under_review', 'won', 'lost', 'accepted'];

/** event → the statuses it fires from, and where it leads. */
const EXPECTED: Record<DisputeEvent, { from: DisputeStatus[]; to: DisputeStatus | DisputeStatus[] }> = {
  escalate: { from: ['warning_needs_response', 'under_review'], to: 'needs_response' },
  submit: { from: ['warning_needs_response', 'needs_response'], to: 'under_review' },
  accept: { from: ['warning_needs_response', 'needs_response'], to: 'accepted' },
  win: { from: ['warning_needs_response', 'needs_response', 'under_review'], to: 'won' },
  lose: { from: ['warning_needs_response', 'needs_response', 'under_review'], to: 'lost' },
  reopen: { from: ['won'], to: 'needs_response' },
  book: { from: ['under_review'], to: 'under_review' },
  reverse: { from: ['lost'], to: 'won' },
  refuse: { from: ['under_review'], to: ['warning_needs_response', 'needs_response'] },
};

describe('dispute table', () => {
  test('the events are exactly these', () => assert.deepEqual(Object.keys(DISPUTE_TRANSITIONS).sort(), Object.keys(EXPECTED).sort()));
  for (const [event, { from, to }] of Object.entries(EXPECTED) as Array<[DisputeEvent, { from: DisputeStatus[]; to: DisputeStatus | DisputeStatus[] }]>) {
    for (const status of ALL) {
      const allowed = from.includes(status);
      test(`${event} from ${status}: ${allowed ? `allowed, to ${[to].flat().join(' or ')}` : 'refused'}`, () => {
        assert.equal(canApplyDispute(event, status), allowed);
        if (allowed) assert.deepEqual(targets(DISPUTE_TRANSITIONS[event]), [to].flat());
      });
    }
  }
  test('accepted is final; lost is only reversed, won only reopens; open and closed cover every status once', () => {
    for (const e of Object.keys(EXPECTED) as DisputeEvent[]) {
      assert.equal(canApplyDispute(e, 'accepted'), false, `${e} from accepted`);
      assert.equal(canApplyDispute(e, 'lost'), e === 'reverse', `${e} from lost`);
    }
    assert.deepEqual([...OPEN_STATUSES, ...CLOSED_STATUSES].sort(), [...ALL].sort());
    assert.deepEqual(ALL.filter(takesEvidence), ['warning_needs_response', 'needs_response']);
  });
});
