// Daily settlement batches (docs/contract.md §23; issue 35 item 1). Per account and currency, a
// batch closes at 00:00 UTC (business time: a test clock's for its account) and holds every
// balance movement (a ledger posting into or out of merchant_pending or merchant_available)
// that no earlier batch holds: a movement written late (a transaction that began before
// midnight) lands in the next batch, never in none. Closing is one transaction: the batch's
// row (unique per account, currency and day, so two builders make one), its postings stamped,
// its sums. Its pending part (captures net of their fees) moves to available at
// `available_at`, the day's start plus the account's delay in days and at the earliest its
// closing, by one settlement posting written with the batch's move to `available`. A builder
// killed mid-run wrote nothing; the next run builds the same batch.
import { sql } from 'kysely';
import { newId } from '../crypto/ids.js';
import type { Store, Tx } from '../db/store.js';
import type { SettlementBatchRow } from '../db/tables/settlement.js';
import { groupedLines, unsettledPending } from '../ledger/batch-lines.js';
import { post } from '../ledger/postings.js';

export { type BatchLine, batchLines } from '../ledger/batch-lines.js';

export const DAY_MS = 24 * 3600 * 1000;
/** The delay of an account without its own, in days: T+1. */
export const DEFAULT_DELAY_DAYS = 1;
export const MAX_DELAY_DAYS = 30;
/** Batches closed, or settled, per account and run at most (a backlog of days catches up run by run). */
const BATCHES_PER_RUN = 31;

/** The UTC day of `ms`, YYYY-MM-DD. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * The default delay in days: 1, or (deprecated, CHANGELOG) the process-wide
 * `TOLLGATE_SETTLEMENT_DELAY_MS` in whole days, rounded up.
 */
export function defaultDelayDays(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TOLLGATE_SETTLEMENT_DELAY_MS;
  if (raw === undefined || raw === '') return DEFAULT_DELAY_DAYS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`TOLLGATE_SETTLEMENT_DELAY_MS must be a non-negative integer, got "${raw}"`);
  return Math.min(MAX_DELAY_DAYS, Math.ceil(n / DAY_MS));
}

/** An account's delay in days: its own (`settlement delay`), else the default. */
export async function delayDaysOf(tx: Pick<Tx, 'selectFrom'>, account_id: string, fallback = defaultDelayDays()): Promise<number> {
  const row = await tx.selectFrom('settlement_delays').select('days').where('account_id', '=', account_id).executeTakeFirst();
  return row ? Number(row.days) : fallback;
}

/** Sets an account's delay (0 … MAX_DELAY_DAYS): batches closed from now on use it. */
export async function setDelayDays(store: Store, account_id: string, days: number, now_ms: number): Promise<void> {
  if (!Number.isInteger(days) || days < 0 || days > MAX_DELAY_DAYS) throw new RangeError(`--days must be a whole number from 0 to ${MAX_DELAY_DAYS}`);
  await store.transaction((tx) =>
    tx
      .insertInto('settlement_delays')
      .values({ account_id, days, updated_at: now_ms })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ days, updated_at: now_ms }))
      .execute(),
  );
}

/** The (account, currency) pairs with a movement no batch holds, written before `before`, and the oldest such time. */
async function unbatched(store: Store, before: number, account_id?: string) {
  let q = store.db
    .selectFrom('ledger_postings')
    .select(['account_id', 'currency', sql<number>`min(created_at)`.as('oldest')])
    .where('batch_id', 'is', null)
    .where('created_at', '<', before);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  return q.groupBy(['account_id', 'currency']).execute();
}

/** What a batch's postings come to: its lines' count and sums, and the pending part (its unsettled merchant_pending entries). */
async function sumsOf(tx: Tx, account_id: string, currency: string, batch_id: string) {
  const pending = await unsettledPending(tx, account_id, currency, batch_id);
  const r = await sql<{ lines: number; net: number; fee: number; payouts: number }>`select count(*) as lines, coalesce(sum(net), 0) as net,
      coalesce(sum(fee), 0) as fee, coalesce(sum(case when kind like 'payout%' then net else 0 end), 0) as payouts
    from (${groupedLines(account_id, currency, batch_id)}) l where touches > 0`.execute(tx);
  const row = r.rows[0] ?? { lines: 0, net: 0, fee: 0, payouts: 0 };
  const net = Number(row.net);
  const fee = Number(row.fee);
  return { lines: Number(row.lines), net, fee, gross: net + fee, pending: pending.total, payable: net - Number(row.payouts) };
}

/**
 * Closes the batch of `day` for (account, currency): every posting written before the day's
 * end that no batch holds. Null when it exists already (another builder, or an earlier run) or
 * there is nothing to put in it.
 */
async function closeBatch(store: Store, account_id: string, currency: string, day_start: number, now_ms: number): Promise<SettlementBatchRow | null> {
  const closes_at = day_start + DAY_MS;
  return store.transaction(async (tx) => {
    // A day with nothing to hold gets no batch (a test clock moved a month ahead makes no empty ones).
    const any = await tx
      .selectFrom('ledger_postings')
      .select('posting_id')
      .where('account_id', '=', account_id)
      .where('currency', '=', currency)
      .where('batch_id', 'is', null)
      .where('created_at', '<', closes_at)
      .limit(1)
      .executeTakeFirst();
    if (!any) return null;
    const delay_days = await delayDaysOf(tx, account_id);
    const row: SettlementBatchRow = {
      batch_id: newId('settlement_batch', closes_at),
      account_id,
      currency,
      day: dayOf(day_start),
      closes_at,
      lines: 0,
      gross_minor: 0,
      fee_minor: 0,
      net_minor: 0,
      pending_minor: 0,
      delay_days,
      payable_minor: 0,
      paid_minor: 0,
      available_at: Math.max(closes_at, day_start + delay_days * DAY_MS),
      status: 'pending',
      settled_at: null,
      created_at: now_ms,
    };
    const made = await tx
      .insertInto('settlement_batches')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'currency', 'day']).doNothing())
      .executeTakeFirst();
    if (Number(made.numInsertedOrUpdatedRows ?? 0) !== 1) return null;
    // Every posting before the end of the day that no batch holds (the ones that do not move the balance too: holds,
    // payouts completing), so none is left behind for a day already closed.
    await tx
      .updateTable('ledger_postings')
      .set({ batch_id: row.batch_id })
      .where('account_id', '=', account_id)
      .where('currency', '=', currency)
      .where('batch_id', 'is', null)
      .where('created_at', '<', closes_at)
      .execute();
    const s = await sumsOf(tx, account_id, currency, row.batch_id);
    const sums = { lines: s.lines, gross_minor: s.gross, fee_minor: s.fee, net_minor: s.net, pending_minor: s.pending, payable_minor: s.payable };
    await tx.updateTable('settlement_batches').set(sums).where('batch_id', '=', row.batch_id).execute();
    return { ...row, ...sums };
  });
}

/**
 * Closes every day that has ended by `now_ms` (business time) and holds movements no batch
 * holds, oldest first, at most BATCHES_PER_RUN per account and currency. Returns the batches closed.
 */
export async function closeBatches(store: Store, now_ms: number, account_id?: string): Promise<SettlementBatchRow[]> {
  const today = dayStart(now_ms);
  const closed: SettlementBatchRow[] = [];
  for (const pair of await unbatched(store, today, account_id)) {
    let day = dayStart(Number(pair.oldest));
    for (let i = 0; i < BATCHES_PER_RUN && day < today; i++, day += DAY_MS) {
      const b = await closeBatch(store, pair.account_id, pair.currency, day, now_ms);
      if (b) closed.push(b);
    }
  }
  return closed;
}

class SettledMeanwhile extends Error {}

/**
 * Moves each closed batch whose `available_at` has come from pending to available: its
 * entries marked settled, one settlement posting of their sum (carrying the batch), the batch
 * `available`, in one transaction (a compare-and-set on its status: once). Returns the
 * number of entries moved.
 */
export async function settleBatches(store: Store, now_ms: number, account_id?: string, limit = 1_000): Promise<number> {
  let q = store.db.selectFrom('settlement_batches').selectAll().where('status', '=', 'pending').where('available_at', '<=', now_ms);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  const due = await q.orderBy('available_at').limit(limit).execute();
  let moved = 0;
  for (const b of due) {
    moved += await store
      .transaction(async (tx) => {
        const r = await tx
          .updateTable('settlement_batches')
          .set({ status: 'available', settled_at: now_ms })
          .where('batch_id', '=', b.batch_id)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) throw new SettledMeanwhile();
        return settleEntries(tx, b, now_ms);
      })
      .catch((e) => {
        if (e instanceof SettledMeanwhile) return 0;
        throw e;
      });
  }
  return moved;
}

/** The batch's unsettled pending entries marked settled, and the posting that moves their sum to available. */
async function settleEntries(tx: Tx, b: SettlementBatchRow, now_ms: number): Promise<number> {
  const held = await unsettledPending(tx, b.account_id, b.currency, b.batch_id);
  if (held.entries === 0) return 0;
  const total = held.total;
  // One statement for the batch's entries, however many (a day of 100,000 payments holds 200,000).
  await tx
    .updateTable('ledger_entries')
    .set({ settled: 1 })
    .where('ledger_account', '=', 'merchant_pending')
    .where('settled', '=', 0)
    .where('posting_id', 'in', (eb) =>
      eb
        .selectFrom('ledger_postings')
        .select('posting_id')
        .where('account_id', '=', b.account_id)
        .where('currency', '=', b.currency)
        .where('batch_id', '=', b.batch_id),
    )
    .execute();
  const posting_id = await post(
    tx,
    {
      account_id: b.account_id,
      currency: b.currency,
      reason: 'settlement',
      ref: b.batch_id,
      settled: true,
      entries: [
        { ledger_account: 'merchant_pending', amount_minor: -total },
        { ledger_account: 'merchant_available', amount_minor: total },
      ],
    },
    now_ms,
  );
  // The settlement posting belongs to the batch it settles: never a movement of a later one.
  if (posting_id) await tx.updateTable('ledger_postings').set({ batch_id: b.batch_id }).where('posting_id', '=', posting_id).execute();
  return held.entries;
}

/** The settlement sweep: closes the days that ended, then settles what is due (one account's, for a test clock). */
export async function runSettlement(store: Store, now_ms: number, account_id?: string): Promise<{ closed: number; settled: number }> {
  const closed = await closeBatches(store, now_ms, account_id);
  const settled = await settleBatches(store, now_ms, account_id);
  return { closed: closed.length, settled };
}
