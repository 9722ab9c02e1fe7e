// The lifecycle commands' pure decisions (issue 30 item 1: facts first, then a pure decision),
// table by table: no database, every status of the payment table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideRefund } from '../refunds/refund.js';
import { reviewMove } from '../review/service.js';
import { ACQUIRING_CODE } from '../web/outcomes.js';
import { decideCancel } from './cancel.js';
import { decideCapture } from './capture.js';
import { PAYMENT_STATUS_CODE, type PaymentStatus } from './states.js';

const STATUSES = Object.keys(PAYMENT_STATUS_CODE) as PaymentStatus[];
const NOW = Date.UTC(2026, 10, 27);
const payment = (status: PaymentStatus, over: Record<string, unknown> = {}) => ({
  status,
  expires_at: NOW + 1000,
  authorised_minor: 1000,
  captured_minor: 1000,
  refunded_minor: 0,
  currency: 'EUR',
  capture_method: 'manual' as const,
  amount_minor: 1000,
  ...over,
});
const code = (r: { ok: boolean; outcome?: string }) => (r.ok ? 'ok' : ACQUIRING_CODE[r.outcome as keyof typeof ACQUIRING_CODE]);

describe('capture', () => {
  test('only an authorised payment, inside its window, up to the authorised amount', () => {
    for (const s of STATUSES) {
      const want = s === 'authorised' ? 'ok' : s === 'expired' ? '1015' : '1012';
      assert.equal(code(decideCapture(payment(s), 500, NOW)), want, s);
    }
    assert.equal(code(decideCapture(payment('authorised', { expires_at: NOW }), 500, NOW)), '1015', 'window ends at expires_at');
    assert.equal(code(decideCapture(payment('authorised', { expires_at: null }), 500, NOW)), 'ok', 'no window');
    assert.equal(code(decideCapture(payment('authorised'), 0, NOW)), '0400');
    assert.equal(code(decideCapture(payment('authorised'), 1.5, NOW)), '0400', 'minor units are integers');
    assert.equal(code(decideCapture(payment('authorised'), 1001, NOW)), '1013');
    const all = decideCapture(payment('authorised'), 1000, NOW);
    assert.deepEqual(all, { ok: true, patch: { authorised_minor: 0, captured_minor: 1000, expires_at: null } });
    const over = decideCapture(payment('authorised'), 1050, NOW);
    assert.equal(over.ok ? '' : over.detail, 'amount 10.50 is more than the authorised 10.00');
  });
});

describe('cancel', () => {
  test('authorised and pending payments (a review hold is decided, not cancelled); a captured one is refunded instead', () => {
    for (const s of STATUSES) {
      const want = s === 'authorised' || s === 'pending' ? 'ok' : s === 'expired' ? '1015' : '1012';
      const r = decideCancel(payment(s));
      assert.equal(code(r), want, s);
      if (r.ok) assert.deepEqual(r.patch, { authorised_minor: 0, expires_at: null });
    }
    const captured = decideCancel(payment('captured'));
    assert.match(captured.ok ? '' : captured.detail, /refund it instead/);
  });
});

describe('refund', () => {
  test('a positive amount, a processor, a refundable status and enough left', () => {
    for (const s of STATUSES) {
      const want = s === 'captured' || s === 'partially_refunded' ? 'ok' : '1012';
      assert.equal(code(decideRefund(payment(s), 100, true)), want, s);
    }
    assert.equal(code(decideRefund(payment('captured'), 0, true)), '0400');
    assert.equal(code(decideRefund(payment('captured'), 100, false)), '1016');
    assert.equal(code(decideRefund(payment('partially_refunded', { refunded_minor: 600 }), 400, true)), 'ok');
    const over = decideRefund(payment('partially_refunded', { refunded_minor: 600 }), 401, true);
    assert.equal(code(over), '1013');
    assert.equal(over.ok ? '' : over.detail, 'the refund of 4.01 is more than the 4.00 left to refund');
  });
});

describe('review', () => {
  test('ACCEPT continues (captured under automatic capture), REJECT cancels, EXPIRE expires', () => {
    assert.equal(reviewMove(payment('review', { capture_method: 'automatic' }), 'ACCEPT', NOW).to, 'captured');
    const manual = reviewMove(payment('review'), 'ACCEPT', NOW);
    assert.equal(manual.to, 'authorised');
    assert.ok(Number(manual.patch.expires_at) > NOW, 'a capture window');
    assert.deepEqual(
      [reviewMove(payment('review'), 'REJECT', NOW), reviewMove(payment('review'), 'EXPIRE', NOW)].map((m) => [
        m.event,
        m.to,
        m.type,
        m.patch.authorised_minor,
      ]),
      [
        ['review_reject', 'cancelled', 'payment.cancelled', 0],
        ['review_expire', 'expired', 'payment.expired', 0],
      ],
    );
  });
});
