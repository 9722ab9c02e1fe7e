// Payouts name the batches they paid (docs/contract.md §23; issue 35 item 1). A payout's
// reserve takes its debit (amount plus fee, source currency) from the account's available
// batches: first every open batch whose movements net to a debit (a day of refunds: the
// balance already paid it, so the payout that follows carries it), then the open credit
// batches oldest day first, each up to what is left of its payable part. What the available
// batches cannot cover (money in the balance no available batch holds yet: a dispute won
// today) is named by none. A payout that fails or is cancelled gives its parts back. Written
// in the transaction that posts the reserve or release, after the posting: the posting holds
// the payout funding row and the balance row, so allocations of one balance run one after
// another on both engines.
import type { Tx } from '../db/store.js';

/** A part of a payout as its record names it: the batch, its day, the amount in minor units. */
export interface PaidBatch {
  batch_id: string;
  day: string;
  amount: number;
}

interface Payout {
  transaction_id: string;
  account_id: string;
  source_currency: string;
  amount_payer_pays: number | string;
  fee_amount: number | string;
  settlement_batches?: string;
}

/** Allocates the payout's debit to the open available batches; returns the parts (also written onto the payout). */
export async function allocatePayout(tx: Tx, p: Payout, now_ms: number): Promise<PaidBatch[]> {
  let need = Number(p.amount_payer_pays) + Number(p.fee_amount);
  const open = await tx
    .selectFrom('settlement_batches')
    .select(['batch_id', 'day', 'payable_minor', 'paid_minor'])
    .where('account_id', '=', p.account_id)
    .where('currency', '=', p.source_currency)
    .where('status', '=', 'available')
    .whereRef('paid_minor', '!=', 'payable_minor')
    .orderBy('day')
    .execute();
  const left = (b: (typeof open)[number]) => Number(b.payable_minor) - Number(b.paid_minor);
  const parts: PaidBatch[] = [];
  for (const b of open.filter((b) => left(b) < 0)) {
    parts.push({ batch_id: b.batch_id, day: b.day, amount: left(b) });
    need -= left(b);
  }
  for (const b of open.filter((b) => left(b) > 0)) {
    if (need <= 0) break;
    const take = Math.min(left(b), need);
    parts.push({ batch_id: b.batch_id, day: b.day, amount: take });
    need -= take;
  }
  // Debit batches only when credit ones pay for them: a payout never carries more debit than it has credit.
  const credit = parts.filter((x) => x.amount > 0).reduce((a, x) => a + x.amount, 0);
  const debit = -parts.filter((x) => x.amount < 0).reduce((a, x) => a + x.amount, 0);
  const kept = credit > debit || (credit === debit && credit > 0) ? parts : [];
  for (const x of kept) {
    await tx
      .insertInto('payout_batches')
      .values({
        transaction_id: p.transaction_id,
        batch_id: x.batch_id,
        account_id: p.account_id,
        currency: p.source_currency,
        amount_minor: x.amount,
        created_at: now_ms,
      })
      .execute();
    await tx
      .updateTable('settlement_batches')
      .set((eb) => ({ paid_minor: eb('paid_minor', '+', x.amount) }))
      .where('batch_id', '=', x.batch_id)
      .execute();
  }
  await write(tx, p, kept);
  return kept;
}

/** Gives a failed or cancelled payout's parts back to their batches; its record names none. */
export async function releasePayout(tx: Tx, p: Payout): Promise<void> {
  const parts = await tx.selectFrom('payout_batches').select(['batch_id', 'amount_minor']).where('transaction_id', '=', p.transaction_id).execute();
  for (const x of parts)
    await tx
      .updateTable('settlement_batches')
      .set((eb) => ({ paid_minor: eb('paid_minor', '-', Number(x.amount_minor)) }))
      .where('batch_id', '=', x.batch_id)
      .execute();
  if (parts.length > 0) await tx.deleteFrom('payout_batches').where('transaction_id', '=', p.transaction_id).execute();
  await write(tx, p, []);
}

async function write(tx: Tx, p: Payout, parts: PaidBatch[]): Promise<void> {
  const json = JSON.stringify(parts);
  if (p.settlement_batches === json) return;
  await tx.updateTable('payouts').set({ settlement_batches: json }).where('transaction_id', '=', p.transaction_id).execute();
  // The caller's row carries it into the answer and the event written in this transaction.
  p.settlement_batches = json;
}
