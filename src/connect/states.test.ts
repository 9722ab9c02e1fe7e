// Goal: the connected account's and the transfer's transition tables: one line per event,
// every status checked (allowed or refused), and the transfer's state derived from its
// amounts alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import {
  ACCOUNT_TRANSITIONS,
  type AccountEvent,
  type AccountStatus,
  canApplyAccount,
  canApplyTransfer,
  TRANSFER_TRANSITIONS,
  type TransferEvent,
  type TransferState,
  transferState,
} from './states.js';

describe('connected account table (deleted: 0 live, 1 deleted)', () => {
  const TABLE: Array<[AccountEvent, AccountStatus, boolean]> = [
    ['delete', 0, true],
    ['delete', 1, false],
  ];
  for (const [event, from, allowed] of TABLE) {
    test(`${event} from ${from}: ${allowed ? 'allowed' : 'refused'}`, () => assert.equal(canApplyAccount(event, from), allowed));
  }
  test('delete leads to 1, and is the only event', () => {
    assert.deepEqual(Object.keys(ACCOUNT_TRANSITIONS), ['delete']);
    assert.deepEqual(targets(ACCOUNT_TRANSITIONS.delete), [1]);
  });
});

describe('transfer table', () => {
  const TABLE: Array<[TransferEvent, TransferState, boolean, TransferState]> = [
    ['reverse_partial', 'open', true, 'open'],
    ['reverse_partial', 'reversed', false, 'open'],
    ['reverse_full', 'open', true, 'reversed'],
    ['reverse_full', 'reversed', false, 'reversed'],
  ];
  for (const [event, from, allowed, to] of TABLE) {
    test(`${event} from ${from}: ${allowed ? `allowed, to ${to}` : 'refused'}`, () => {
      assert.equal(canApplyTransfer(event, from), allowed);
      assert.deepEqual(targets(TRANSFER_TRANSITIONS[event]), [to]);
    });
  }
  const STATES: Array<[number, number, TransferState]> = [
    [1000, 0, 'open'],
    [1000, 999, 'open'],
    [1000, 1000, 'reversed'],
    [1, 1, 'reversed'],
  ];
  for (const [amount_minor, reversed_minor, state] of STATES) {
    test(`${reversed_minor} of ${amount_minor} reversed: ${state}`, () => assert.equal(transferState({ amount_minor, reversed_minor }), state));
  }
});
