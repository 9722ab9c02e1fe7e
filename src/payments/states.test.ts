// Goal: the payment transition table is exactly what docs/contract.md §6/§7 and the lifecycle
// allow: one line per event, every status checked (allowed and refused).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canApply, PAYMENT_TRANSITIONS, type PaymentEvent, type PaymentStatus } from './states.js';

const ALL: PaymentStatus[] = [
  'pending',
  'processing',
  'authorised',
  'review',
  'captured',
  'refunded',
  'partially_refunded',
  'cancelled',
  'declined',
  'expired',
];

const ALLOWED: Record<PaymentEvent, PaymentStatus[]> = {
  authenticate_ok: ['pending'],
  authenticate_fail: ['pending'],
  review_accept: ['review'],
  review_reject: ['review'],
  review_expire: ['review'],
  // From review: the late confirmation of a review's capture or cancel (src/review/service.ts).
  capture: ['authorised', 'review'],
  cancel: ['authorised', 'pending', 'review'],
  expire: ['authorised', 'pending'],
  refund_partial: ['captured', 'partially_refunded'],
  refund_full: ['captured', 'partially_refunded'],
  refund_reversed: ['partially_refunded', 'refunded'],
  checkout_pay: ['pending'],
  issuer_approve: ['pending'],
  issuer_decline: ['pending'],
  processor_send: ['pending'],
  processor_answer: ['processing'],
  processor_void: ['processing'],
};

describe('payment transition table', () => {
  test('every event of the table is listed here', () => {
    assert.deepEqual(Object.keys(PAYMENT_TRANSITIONS).sort(), Object.keys(ALLOWED).sort());
  });
  for (const [event, from] of Object.entries(ALLOWED) as Array<[PaymentEvent, PaymentStatus[]]>) {
    for (const status of ALL) {
      const allowed = from.includes(status);
      test(`${event} from ${status}: ${allowed ? 'allowed' : 'refused'}`, () => {
        assert.equal(canApply(event, status), allowed);
      });
    }
  }
  test('terminal statuses accept no lifecycle event', () => {
    for (const status of ['cancelled', 'declined', 'expired', 'refunded'] as const) {
      for (const event of ['capture', 'cancel', 'expire', 'refund_partial', 'refund_full'] as const)
        assert.equal(canApply(event, status), false, `${event} ${status}`);
    }
  });
});
