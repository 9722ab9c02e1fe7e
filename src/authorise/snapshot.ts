// A new card payment's snapshot (docs/attempts.md): the lean claim writes no payment row
// before the processor's call, only the attempt that claims the order_no and carries what
// the payment will be. When the process that made the call died, its payment is written
// from here: by the sweeper, or by a repeat of the same request that finds the claim
// abandoned, so the merchant who was answered "pending" can query the order.
import type { CardRow, PaymentRow } from '../db/tables/payments.js';
import { WriteUnit } from '../db/unit.js';
import { paymentById } from '../payments/reader.js';
import { sealAnswer } from '../payments/stored-answer.js';
import type { Deps } from '../web/context.js';
import { cardAnswerRecord } from './answer.js';

export interface PaymentSnapshot {
  payment: PaymentRow;
  card: CardRow | null;
  note: string;
}

/**
 * Writes the snapshot's payment (`processing`, with the pending answer) and its card, unless
 * they are there already; the payment as stored, or undefined when another payment took its
 * order_no meanwhile.
 */
export async function writeSnapshotPayment(deps: Pick<Deps, 'store' | 'keyring'>, snap: PaymentSnapshot): Promise<PaymentRow | undefined> {
  const row: PaymentRow = { ...snap.payment, answer: sealAnswer(deps.keyring, cardAnswerRecord(snap.payment, snap.note, { token_id: '' })) };
  const unit = new WriteUnit(deps.store.engine);
  if (snap.card) unit.insertRows('cards', [snap.card], { ignoreConflictOn: ['card_id'] });
  unit.insertRows('payments', [row], { ignoreConflictOn: ['account_id', 'order_no'] });
  await deps.store.write(unit);
  return paymentById(deps.store.db, row.transaction_id);
}
