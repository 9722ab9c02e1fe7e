// Capture (interface.md "Capture a transaction"; docs/contract.md §5, §7): at most the
// authorised amount, once; a partial capture releases the rest of the hold.

import type { FastifyBaseLogger } from 'fastify';
import { type Refusal, refuse } from '../core/outcomes.js';
import { formatAmount } from '../money/currency.js';
import type { Deps } from '../web/context.js';
import { afterSettle, processorOfPayment, processorReference, sendForPayment, settlePaymentOperation } from './at-processor.js';
import { describeStatus, guardItem } from './lifecycle.js';
import { accountPayment, requirePaymentColumns } from './reader.js';
import type { PaymentRow } from './tables.js';

/** Why a payment that is no longer `authorised` cannot be captured. */
function notCapturable(row: Pick<PaymentRow, 'status'>): Refusal {
  if (row.status === 'expired') return refuse('authorisation_expired', 'the authorisation expired before it was captured');
  if (row.status === 'captured' || row.status === 'partially_refunded' || row.status === 'refunded') {
    return refuse('invalid_state', `the payment is already ${describeStatus(row.status)}; a payment is captured once`);
  }
  return refuse('invalid_state', `cannot capture a payment that is ${describeStatus(row.status)}`);
}

/** Capture `amount_minor` of a payment of `account_id` (at most what is authorised, once). */
export interface CaptureCommand {
  account_id: string;
  transaction_id: string;
  amount_minor: number;
}

/**
 * The capture decision, pure (facts first, then this): what the payment as read allows, and
 * the patch that captures it. An authorisation past its window is expired even when the
 * expiry job has not run yet.
 */
export function decideCapture(
  row: Pick<PaymentRow, 'status' | 'expires_at' | 'authorised_minor' | 'currency'>,
  amount_minor: number,
  now: number,
): { ok: true; patch: Partial<PaymentRow> } | Refusal {
  if (row.status !== 'authorised') return notCapturable(row);
  if (row.expires_at !== null && Number(row.expires_at) <= now) return refuse('authorisation_expired', 'the authorisation expired before it was captured');
  if (!Number.isSafeInteger(amount_minor) || amount_minor <= 0) return refuse('invalid_input', 'amount must be greater than zero');
  if (amount_minor > Number(row.authorised_minor)) {
    const asked = formatAmount(amount_minor, row.currency);
    return refuse('amount_exceeds', `amount ${asked} is more than the authorised ${formatAmount(row.authorised_minor, row.currency)}`);
  }
  return { ok: true, patch: { authorised_minor: 0, captured_minor: amount_minor, expires_at: null } };
}

/** A capture's answer: done, or sent and not yet confirmed (`capture_status` 2: the payment stays authorised until the processor confirms). */
export type CaptureResult = { ok: true; payment: PaymentRow } | { ok: 'pending'; payment: PaymentRow } | Refusal;

/**
 * The one capture of a payment (the acquiring batch item, the generic interface's
 * `/v1/payments/:id/capture`, the portal): the payment read, the decision, then the capture
 * at the processor as a recorded attempt (src/payments/at-processor.ts), whose answer moves
 * the payment with its postings and event.
 */
export function capturePayment(deps: Deps, log: FastifyBaseLogger, cmd: CaptureCommand): Promise<CaptureResult> {
  return guardItem(log, async () => {
    const now = deps.now();
    const row = await accountPayment(deps.store.db, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found', `no transaction ${cmd.transaction_id} on this account`);
    const decided = decideCapture(row, cmd.amount_minor, now);
    if (!decided.ok) return decided;
    const processor = await processorOfPayment(deps, row);
    if (!processor) return refuse('no_processor', 'this account is in live mode and no processor is configured for it');
    const input = { transaction_id: row.transaction_id, reference: processorReference(row), amount_minor: cmd.amount_minor, currency: row.currency };
    const sent = await sendForPayment(deps, row, 'capture', cmd.amount_minor, processor, (call) => processor.capture(input, call));
    if (sent.kind === 'changed') {
      // Lost a race (a concurrent cancel, capture or expiry): say what won.
      return notCapturable(await requirePaymentColumns(deps.store.db, row.transaction_id, ['status']));
    }
    if (sent.kind === 'busy') {
      // The same capture sent before and not yet confirmed is pending still; anything else waits for it.
      if (sent.open?.operation === 'capture' && Number(sent.open.amount_minor) === cmd.amount_minor) return { ok: 'pending', payment: row };
      return refuse('invalid_state', `a ${sent.open?.operation ?? 'capture or cancel'} of this payment is pending at the processor`);
    }
    const settled = await settlePaymentOperation(deps, row, sent.attempt, sent.outcome, deps.now());
    return afterSettle(deps, row, sent.attempt, settled, notCapturable);
  });
}
