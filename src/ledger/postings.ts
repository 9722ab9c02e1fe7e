// The posting API (docs/style.md §6): every money movement is one balanced posting, written in the
// same transaction as the change it records. Payouts, transfers and subscriptions post
// through `post` as well. What each movement posts is documented in README.md here.
//
// Each writer has two forms: `…Into(unit, …)` adds the statements to a write unit
// (src/db/unit.ts) and reads nothing (what it needs, the fee, is given), and the Tx form
// runs the same unit inside a transaction with `applyUnit`.
import { sql } from 'kysely';
import { newId } from '../crypto/ids.js';
import { param, runPrepared } from '../db/prepared.js';
import type { Tx } from '../db/store.js';
import { applyUnit, engineOf, WriteUnit } from '../db/unit.js';
import { feeMinor } from '../money/fee.js';
import type { LedgerAccount } from './tables.js';

export interface Entry {
  ledger_account: LedgerAccount;
  /** Signed minor units: positive into the ledger account, negative out of it. */
  amount_minor: number;
}

export interface Posting {
  account_id: string;
  currency: string;
  reason: string;
  transaction_id?: string;
  ref?: string;
  entries: readonly Entry[];
  /** Marks the entries as already settled (the settlement posting itself). */
  settled?: boolean;
  /** The balance slot to update instead of the transaction's random one (PAYOUT_SLOT, TRANSFER_SLOT). */
  slot?: number;
}

export class UnbalancedPosting extends Error {}

/** Most entries one posting may carry (docs/style.md §9). */
const MAX_ENTRIES = 16;

/**
 * Rows per (account, currency, ledger account) balance. On PostgreSQL a balance row stays
 * locked from its update until the commit's fsync; with one row per balance every payment
 * of a merchant queued behind the previous one (issue 6). A transaction picks one slot
 * for all its balance updates, so the fixed lock order below still holds.
 */
export const BALANCE_SLOTS = 32;
const slots = new WeakMap<Tx | WriteUnit, number>();
/**
 * The slot of every payout posting: payments and refunds never update it, so a payout
 * transaction (which posts in two currencies, through several ledger accounts) cannot
 * deadlock with them on PostgreSQL; payouts lock their rows in (currency, ledger account)
 * order among themselves (src/payouts/ledger.ts).
 */
export const PAYOUT_SLOT = BALANCE_SLOTS;
/**
 * The slot of every transfer and transfer reversal posting (src/connect/ledger.ts): like
 * PAYOUT_SLOT, rows no payment, refund or payout updates, locked in (account, ledger
 * account) order by transfers and reversals alike, so they never deadlock on PostgreSQL.
 */
export const TRANSFER_SLOT = BALANCE_SLOTS + 1;

/** The balance slot of a transaction or a unit: one for all its postings. */
function slotOf(owner: Tx | WriteUnit): number {
  let slot = slots.get(owner);
  if (slot === undefined) {
    slot = Math.floor(Math.random() * BALANCE_SLOTS);
    slots.set(owner, slot);
  }
  return slot;
}

/**
 * Writes one posting, its entries and the materialised balances. Zero entries are dropped
 * and entries to the same ledger account merged; a posting that nets to nothing writes
 * nothing and returns null. Refuses an unbalanced posting.
 */
export async function post(tx: Tx, p: Posting, now_ms: number): Promise<string | null> {
  const unit = new WriteUnit(engineOf(tx));
  const posting_id = postInto(unit, { ...p, slot: p.slot ?? slotOf(tx) }, now_ms);
  await applyUnit(tx, unit);
  return posting_id;
}

/** `post` as statements added to `unit` (its posting id, or null when it nets to nothing). */
export function postInto(unit: WriteUnit, p: Posting, now_ms: number): string | null {
  if (p.entries.length > MAX_ENTRIES) throw new UnbalancedPosting(`a posting carries at most ${MAX_ENTRIES} entries`);
  const merged = new Map<LedgerAccount, number>();
  let sum = 0;
  for (const e of p.entries) {
    if (!Number.isSafeInteger(e.amount_minor)) throw new UnbalancedPosting(`entry ${e.ledger_account} is not a whole number of minor units`);
    merged.set(e.ledger_account, (merged.get(e.ledger_account) ?? 0) + e.amount_minor);
    sum += e.amount_minor;
  }
  if (sum !== 0) throw new UnbalancedPosting(`posting ${p.reason} for ${p.transaction_id ?? p.account_id} is off by ${sum} ${p.currency} minor units`);
  // Sorted, so concurrent transactions lock balance rows in one order (no deadlocks on PostgreSQL).
  const lines = [...merged.entries()].filter(([, amount]) => amount !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (lines.length === 0) return null;
  const posting_id = newId('posting', now_ms);
  const transaction_id = p.transaction_id ?? '';
  unit.insertRows('ledger_postings', [
    { posting_id, account_id: p.account_id, currency: p.currency, reason: p.reason, transaction_id, ref: p.ref ?? '', created_at: now_ms },
  ]);
  unit.insertRows(
    'ledger_entries',
    lines.map(([ledger_account, amount_minor], i) => ({
      entry_id: `${posting_id}.${i}`,
      posting_id,
      account_id: p.account_id,
      currency: p.currency,
      ledger_account,
      amount_minor,
      transaction_id,
      settled: p.settled ? 1 : 0,
      created_at: now_ms,
    })),
  );
  const slot = p.slot ?? slotOf(unit);
  // An upsert per balance line, compiled once per line count (src/db/prepared.ts).
  const values: Record<string, unknown> = { account_id: p.account_id, currency: p.currency, slot, now: now_ms };
  lines.forEach(([ledger_account, amount_minor], i) => {
    values[`ledger_account#${i}`] = ledger_account;
    values[`amount#${i}`] = amount_minor;
  });
  unit.prepared(
    'upsert',
    `ledger:balances|${lines.length}`,
    (q) =>
      q
        .insertInto('ledger_balances')
        .values(
          lines.map((_, i) => ({
            account_id: param('account_id'),
            currency: param('currency'),
            ledger_account: param(`ledger_account#${i}`),
            slot: param('slot'),
            balance_minor: param(`amount#${i}`),
            updated_at: param('now'),
          })),
        )
        .onConflict((oc) =>
          oc.columns(['account_id', 'currency', 'ledger_account', 'slot']).doUpdateSet({
            balance_minor: sql<number>`ledger_balances.balance_minor + excluded.balance_minor`,
            updated_at: sql<number>`excluded.updated_at`,
          }),
        ),
    values,
  );
  return posting_id;
}

/** The money-bearing part of a payment row. */
export interface PaymentMoney {
  account_id: string;
  currency: string;
  transaction_id: string;
  /** Still held for a later capture. */
  authorised_minor: number;
  captured_minor: number;
}

/**
 * Posts what a payment's change of held and captured amounts means (README.md): a new
 * hold, a capture (from the hold, else straight from the outside world), the release of
 * what is no longer held, and the fee on what was captured. `before` is null for a new
 * payment. Any capability that moves a payment between states calls this with the row
 * before and after, so the ledger follows the payments table by construction.
 */
export async function postPaymentChange(tx: Tx, before: PaymentMoney | null, after: PaymentMoney, now_ms: number): Promise<void> {
  const captured = capturedBy(before, after);
  const fee_minor = captured > 0 ? await feeFor(tx, after.account_id, after.currency, captured) : 0;
  const unit = new WriteUnit(engineOf(tx));
  for (const p of paymentChangePostings(before, after, fee_minor)) postInto(unit, { ...p, slot: slotOf(tx) }, now_ms);
  await applyUnit(tx, unit);
}

/** `postPaymentChange` as statements added to `unit`; `fee_minor` is `feeFor` the amount `capturedBy` the change (read first). */
export function postPaymentChangeInto(unit: WriteUnit, before: PaymentMoney | null, after: PaymentMoney, fee_minor: number, now_ms: number): void {
  for (const p of paymentChangePostings(before, after, fee_minor)) postInto(unit, p, now_ms);
}

/** The amount a change captures (0 when it captures nothing); refuses a decrease. */
export function capturedBy(before: PaymentMoney | null, after: PaymentMoney): number {
  const dCaptured = after.captured_minor - (before?.captured_minor ?? 0);
  if (dCaptured < 0) throw new UnbalancedPosting('a captured amount never decreases; refunds post on their own');
  return dCaptured;
}

/** The postings of a payment's change, in the order they are written (pure: the fee is given). */
export function paymentChangePostings(before: PaymentMoney | null, after: PaymentMoney, fee_minor: number): Posting[] {
  const dHold = after.authorised_minor - (before?.authorised_minor ?? 0);
  const dCaptured = capturedBy(before, after);
  const base = { account_id: after.account_id, currency: after.currency, transaction_id: after.transaction_id };
  const holdDrop = Math.max(0, -dHold);
  const fromHold = Math.min(dCaptured, holdDrop);
  const released = holdDrop - fromHold;
  const postings: Posting[] = [];
  if (dHold > 0) {
    postings.push({
      ...base,
      reason: 'authorise_hold',
      entries: [
        { ledger_account: 'processor_clearing', amount_minor: -dHold },
        { ledger_account: 'customer_holds', amount_minor: dHold },
      ],
    });
  }
  if (dCaptured > 0) {
    postings.push({
      ...base,
      reason: 'capture',
      entries: [
        { ledger_account: 'customer_holds', amount_minor: -fromHold },
        { ledger_account: 'processor_clearing', amount_minor: -(dCaptured - fromHold) },
        { ledger_account: 'merchant_pending', amount_minor: dCaptured },
      ],
    });
  }
  if (released > 0) {
    postings.push({
      ...base,
      reason: 'hold_release',
      entries: [
        { ledger_account: 'customer_holds', amount_minor: -released },
        { ledger_account: 'processor_clearing', amount_minor: released },
      ],
    });
  }
  if (dCaptured > 0 && fee_minor > 0) {
    postings.push({
      ...base,
      reason: 'fee',
      entries: [
        { ledger_account: 'merchant_pending', amount_minor: -fee_minor },
        { ledger_account: 'fees', amount_minor: fee_minor },
      ],
    });
  }
  return postings;
}

/** Fee on a captured amount: percent (basis points, half-up) + fixed, never above the amount. */
export function computeFee(captured_minor: number, percent_bp: number, fixed_minor: number): number {
  return Math.min(feeMinor(captured_minor, percent_bp, fixed_minor), captured_minor);
}

export async function feeFor(tx: Tx, account_id: string, currency: string, captured_minor: number): Promise<number> {
  const price = (
    await runPrepared<{ percent_bp: number; fixed_minor: number }>(
      tx,
      'ledger:pricing',
      () =>
        tx.selectFrom('pricing').select(['percent_bp', 'fixed_minor']).where('account_id', '=', param('account_id')).where('currency', '=', param('currency')),
      { account_id, currency },
    )
  ).rows[0];
  if (!price) return 0;
  return computeFee(captured_minor, Number(price.percent_bp), Number(price.fixed_minor));
}

export type RefundLedgerStep = 'succeeded' | 'pending' | 'settled' | 'failed';

/**
 * Refund postings (README.md). Refunds come out of the available balance (which may go
 * negative until later captures settle) and do not give the fee back.
 */
export async function postRefund(
  tx: Tx,
  r: { account_id: string; currency: string; transaction_id: string; refund_reference_id: string; amount_minor: number },
  step: RefundLedgerStep,
  now_ms: number,
): Promise<void> {
  const n = r.amount_minor;
  const moves: Record<RefundLedgerStep, [reason: string, from: LedgerAccount, to: LedgerAccount]> = {
    succeeded: ['refund', 'merchant_available', 'processor_clearing'],
    pending: ['refund_pending', 'merchant_available', 'refunds_in_flight'],
    settled: ['refund_settled', 'refunds_in_flight', 'processor_clearing'],
    failed: ['refund_failed', 'refunds_in_flight', 'merchant_available'],
  };
  const [reason, from, to] = moves[step];
  await post(
    tx,
    {
      account_id: r.account_id,
      currency: r.currency,
      transaction_id: r.transaction_id,
      ref: r.refund_reference_id,
      reason,
      entries: [
        { ledger_account: from, amount_minor: -n },
        { ledger_account: to, amount_minor: n },
      ],
    },
    now_ms,
  );
}
