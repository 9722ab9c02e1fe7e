// Goal: the 3-D Secure challenge's transition table (docs/contract.md §10): one line per event,
// every status checked (allowed or refused), and where each leads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import { CHALLENGE_STATUSES, CHALLENGE_TRANSITIONS, type ChallengeEvent, canApplyChallenge } from './states.js';
import type { ChallengeStatus } from './tables.js';

const TABLE: Record<ChallengeEvent, { from: ChallengeStatus[]; to: ChallengeStatus }> = {
  claim: { from: ['open'], to: 'processing' },
  complete: { from: ['processing'], to: 'completed' },
  fail: { from: ['processing'], to: 'failed' },
  expire: { from: ['open'], to: 'expired' },
};

describe('3-D Secure challenge table', () => {
  test('every event of the table is listed here', () => {
    assert.deepEqual(Object.keys(CHALLENGE_TRANSITIONS).sort(), Object.keys(TABLE).sort());
  });
  for (const [event, line] of Object.entries(TABLE) as Array<[ChallengeEvent, (typeof TABLE)[ChallengeEvent]]>) {
    for (const status of CHALLENGE_STATUSES) {
      const allowed = line.from.includes(status);
      test(`${event} from ${status}: ${allowed ? 'allowed' : 'refused'}`, () => assert.equal(canApplyChallenge(event, status), allowed));
    }
    test(`${event} leads to ${line.to}`, () => assert.deepEqual(targets(CHALLENGE_TRANSITIONS[event]), [line.to]));
  }
  test('an ended challenge (completed, failed, expired) accepts no event: single use', () => {
    for (const status of ['completed', 'failed', 'expired'] as const)
      for (const event of Object.keys(TABLE) as ChallengeEvent[]) assert.equal(canApplyChallenge(event, status), false, `${event} ${status}`);
  });
});
