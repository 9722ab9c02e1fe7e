// Goal: the hosted-checkout session's table (docs/contract.md §14): one line per event, every state
// checked (allowed or refused), where each leads, and the state derived from the payment.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { targets } from '../core/machine.js';
import type { PaymentStatus } from '../payments/states.js';
import { type CheckoutSessionState, canApplySession, checkoutSessionState, SESSION_STATES, SESSION_TRANSITIONS, type SessionEvent } from './states.js';

const TABLE: Record<SessionEvent, { from: CheckoutSessionState[]; to: CheckoutSessionState[] }> = {
  pay_card: { from: ['open'], to: ['claimed', 'ended'] },
  start_method: { from: ['open'], to: ['claimed'] },
  cancel: { from: ['open'], to: ['ended'] },
  expire: { from: ['open', 'claimed'], to: ['ended'] },
  finish: { from: ['claimed'], to: ['ended'] },
};

describe('checkout session table', () => {
  test('every event of the table is listed here', () => {
    assert.deepEqual(Object.keys(SESSION_TRANSITIONS).sort(), Object.keys(TABLE).sort());
  });
  for (const [event, line] of Object.entries(TABLE) as Array<[SessionEvent, (typeof TABLE)[SessionEvent]]>) {
    for (const state of SESSION_STATES) {
      const allowed = line.from.includes(state);
      test(`${event} from ${state}: ${allowed ? 'allowed' : 'refused'}`, () => assert.equal(canApplySession(event, state), allowed));
    }
    test(`${event} leads to ${line.to.join(' or ')}`, () => assert.deepEqual(targets(SESSION_TRANSITIONS[event]), line.to));
  }
});

describe('a session state derived from its payment', () => {
  const CASES: Array<[PaymentStatus, string, CheckoutSessionState]> = [
    ['pending', '', 'open'],
    ['pending', 'visa', 'claimed'], // away at a 3-D Secure challenge
    ['pending', 'ideal', 'claimed'], // away at the issuer's page
    ['authorised', 'visa', 'ended'],
    ['captured', 'visa', 'ended'],
    ['review', 'visa', 'ended'],
    ['declined', 'visa', 'ended'],
    ['cancelled', '', 'ended'],
    ['expired', '', 'ended'],
  ];
  for (const [status, card_brand, state] of CASES) {
    test(`${status} with card_brand '${card_brand}': ${state}`, () => assert.equal(checkoutSessionState({ status, card_brand }), state));
  }
});
