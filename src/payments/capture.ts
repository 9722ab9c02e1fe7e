// Capture (interface.md "Capture a transaction"; docs/contract.md §5, §7): at most the
// authorised amount, once; a partial capture releases the rest of the hold.

import type { FastifyBaseLogger } from 'fastify';
import { type Refusal, refuse } from '../core/outcomes.js';
import { formatAmount } from '../money/currency.js';
import type { Deps } from '../web/context.js';
import { movePayment } from './engine.js';
import { describeStatus, runItem } from './lifecycle.js';
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

/**
 * The one capture of a payment (the acquiring batch item, the generic interface's
 * `/v1/payments/:id/capture`, the portal): the payment read, the decision, then the
 * compare-and-set with its postings and event, in one transaction.
 */
export function capturePayment(deps: Deps, log: FastifyBaseLogger, cmd: CaptureCommand): Promise<{ ok: true; payment: PaymentRow } | Refusal> {
  return runItem(deps.store, log, async (tx) => {
    const now = deps.now();
    const row = await accountPayment(tx, cmd.account_id, cmd.transaction_id);
    if (!row) return refuse('not_found', `no transaction ${cmd.transaction_id} on this account`);
    const decided = decideCapture(row, cmd.amount_minor, now);
    if (!decided.ok) return decided;
    const after = await movePayment(tx, row, { event: 'capture', to: 'captured', patch: decided.patch, notify: 'payment.captured' }, now);
    if (!after) {
      // Lost a race (a concurrent cancel, capture or expiry): say what won.
      const current = await requirePaymentColumns(tx, row.transaction_id, ['status']);
      return notCapturable(current);
    }
    return { ok: true as const, payment: after };
  });
}
