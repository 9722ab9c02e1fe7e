// `ledger verify`'s settlement checks (docs/contract.md §23; issue 35): each batch's sums are
// its postings' (lines, gross, fee, net), its pending part is what it still holds in
// merchant_pending or what its one settlement posting moved, no posting before an account's
// last closed day is left out of every batch, and so the sum of the batches' nets equals the
// ledger's movement of the merchant's balance over the days they cover. What payouts took of
// the batches (payout_batches) is what the batches say was paid, within their payable part,
// and what each payout's record names; a payout that failed or was cancelled names none.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.js';
import { batchLines } from './batch-lines.js';

const DAY_MS = 24 * 3600 * 1000;

type Note = (p: string) => void;
const PAGE = 200;

/** Checks every batch, a page at a time; returns how many it read. */
export async function verifySettlement(db: Kysely<DB>, note: Note): Promise<number> {
  const paidOf = await verifyPayoutParts(db, note);
  let read = 0;
  let after = '';
  for (;;) {
    const batches = await db.selectFrom('settlement_batches').selectAll().where('batch_id', '>', after).orderBy('batch_id').limit(PAGE).execute();
    if (batches.length === 0) break;
    read += batches.length;
    after = batches[batches.length - 1]?.batch_id ?? after;
    for (const b of batches) {
      const lines = await batchLines(db, b.account_id, b.currency, b.batch_id);
      const sum = (f: (l: (typeof lines)[number]) => number) => lines.reduce((a, l) => a + f(l), 0);
      const want = { lines: lines.length, gross: sum((l) => l.gross_minor), fee: sum((l) => l.fee_minor), net: sum((l) => l.net_minor) };
      const have = { lines: Number(b.lines), gross: Number(b.gross_minor), fee: Number(b.fee_minor), net: Number(b.net_minor) };
      if (JSON.stringify(want) !== JSON.stringify(have))
        note(`settlement batch ${b.batch_id}: holds ${JSON.stringify(have)} but its postings make ${JSON.stringify(want)}`);
      const payable = sum((l) => (l.kind.startsWith('payout') ? 0 : l.net_minor));
      if (payable !== Number(b.payable_minor))
        note(`settlement batch ${b.batch_id}: payable ${b.payable_minor} but its postings without payouts make ${payable}`);
      const paid = paidOf.get(b.batch_id) ?? 0;
      if (paid !== Number(b.paid_minor)) note(`settlement batch ${b.batch_id}: paid ${b.paid_minor} but payouts took ${paid} of it`);
      if (b.status !== 'available' && paid !== 0) note(`settlement batch ${b.batch_id} is ${b.status} but payouts took ${paid} of it`);
      const [lo, hi] = Number(b.payable_minor) >= 0 ? [0, Number(b.payable_minor)] : [Number(b.payable_minor), 0];
      if (paid < lo || paid > hi) note(`settlement batch ${b.batch_id}: payouts took ${paid}, outside its payable ${b.payable_minor}`);
      const pending = await pendingOf(db, b.account_id, b.currency, b.batch_id, b.status === 'available');
      if (pending !== Number(b.pending_minor))
        note(
          `settlement batch ${b.batch_id} (${b.status}): its pending part is ${b.pending_minor} but the ledger ${b.status === 'available' ? 'moved' : 'holds'} ${pending}`,
        );
    }
  }
  await checkCovered(db, note);
  return read;
}

/**
 * Each payout's parts against its record and status (a failed or cancelled one has none, the
 * others at most their debit, in their source currency); returns what payouts took of each batch.
 */
async function verifyPayoutParts(db: Kysely<DB>, note: Note): Promise<Map<string, number>> {
  const parts = await db
    .selectFrom('payout_batches as x')
    .innerJoin('settlement_batches as b', 'b.batch_id', 'x.batch_id')
    .select([
      'x.transaction_id',
      'x.batch_id',
      'x.amount_minor',
      'x.currency',
      'b.day',
      'b.currency as batch_currency',
      'b.account_id',
      'x.account_id as payout_account',
    ])
    .orderBy('x.transaction_id')
    .execute();
  const paidOf = new Map<string, number>();
  const byPayout = new Map<string, typeof parts>();
  for (const x of parts) {
    paidOf.set(x.batch_id, (paidOf.get(x.batch_id) ?? 0) + Number(x.amount_minor));
    byPayout.set(x.transaction_id, [...(byPayout.get(x.transaction_id) ?? []), x]);
  }
  const orphans = await db
    .selectFrom('payout_batches as x')
    .leftJoin('settlement_batches as b', 'b.batch_id', 'x.batch_id')
    .select(sql<number>`count(*)`.as('n'))
    .where('b.batch_id', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(orphans.n) > 0) note(`settlement: ${orphans.n} payout parts name no batch`);
  let after = '';
  for (;;) {
    const payouts = await db
      .selectFrom('payouts')
      .select(['transaction_id', 'account_id', 'status', 'source_currency', 'amount_payer_pays', 'fee_amount', 'settlement_batches'])
      .where('transaction_id', '>', after)
      .orderBy('transaction_id')
      .limit(PAGE)
      .execute();
    if (payouts.length === 0) break;
    after = payouts[payouts.length - 1]?.transaction_id ?? after;
    for (const p of payouts) {
      const mine = byPayout.get(p.transaction_id) ?? [];
      const named = JSON.parse(p.settlement_batches) as Array<{ batch_id: string; day: string; amount: number }>;
      const rows = mine.map((x) => ({ batch_id: x.batch_id, day: x.day, amount: Number(x.amount_minor) }));
      const key = (xs: typeof rows) => JSON.stringify([...xs].sort((a, b) => a.batch_id.localeCompare(b.batch_id)));
      if (key(named) !== key(rows)) note(`payout ${p.transaction_id}: its record names ${JSON.stringify(named)} but took ${JSON.stringify(rows)}`);
      if ((p.status === 'FAILED' || p.status === 'CANCELLED') && mine.length > 0)
        note(`payout ${p.transaction_id} is ${p.status} but keeps ${mine.length} batch parts`);
      const total = rows.reduce((a, x) => a + x.amount, 0);
      if (total < 0 || total > Number(p.amount_payer_pays) + Number(p.fee_amount))
        note(`payout ${p.transaction_id}: its batch parts add up to ${total}, outside 0 … its debit ${Number(p.amount_payer_pays) + Number(p.fee_amount)}`);
      for (const x of mine)
        if (x.account_id !== p.account_id || x.payout_account !== p.account_id || x.batch_currency !== p.source_currency || x.currency !== p.source_currency)
          note(`payout ${p.transaction_id} (${p.account_id} ${p.source_currency}) took part of batch ${x.batch_id} (${x.account_id} ${x.batch_currency})`);
    }
  }
  return paidOf;
}

/** What a batch holds in merchant_pending (pending), or what its settlement posting moved to available (available). */
async function pendingOf(db: Kysely<DB>, account_id: string, currency: string, batch_id: string, settled: boolean): Promise<number> {
  let q = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
    .select(sql<number>`coalesce(sum(e.amount_minor), 0)`.as('total'))
    .where('p.account_id', '=', account_id)
    .where('p.currency', '=', currency)
    .where('p.batch_id', '=', batch_id);
  q = settled
    ? q.where('p.reason', '=', 'settlement').where('p.ref', '=', batch_id).where('e.ledger_account', '=', 'merchant_available')
    : q.where('e.ledger_account', '=', 'merchant_pending').where('e.settled', '=', 0);
  return Number((await q.executeTakeFirstOrThrow()).total);
}

/**
 * Per account and currency: no posting written before its last batch's day is outside every
 * batch (one written after its day closed is in the next), and the batches' nets add up to the merchant balance's movement over the postings they hold.
 */
async function checkCovered(db: Kysely<DB>, note: Note): Promise<void> {
  const pairs = await db
    .selectFrom('settlement_batches')
    .select(['account_id', 'currency', sql<number>`max(closes_at)`.as('closed'), sql<number>`sum(net_minor)`.as('net')])
    .groupBy(['account_id', 'currency'])
    .execute();
  for (const p of pairs) {
    const left = await db
      .selectFrom('ledger_postings')
      .select(sql<number>`count(*)`.as('n'))
      .where('account_id', '=', p.account_id)
      .where('currency', '=', p.currency)
      .where('batch_id', 'is', null)
      // One written late (its transaction began before the last close) waits for the next batch: only older ones are lost.
      .where('created_at', '<', Number(p.closed) - DAY_MS)
      .executeTakeFirstOrThrow();
    if (Number(left.n) > 0) note(`settlement: ${left.n} postings of ${p.account_id} ${p.currency} before the day of its last batch are in no batch`);
    const moved = await db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(sql<number>`coalesce(sum(e.amount_minor), 0)`.as('total'))
      .where('p.account_id', '=', p.account_id)
      .where('p.currency', '=', p.currency)
      .where('p.batch_id', 'is not', null)
      .where('p.reason', '!=', 'settlement')
      .where('e.ledger_account', 'in', ['merchant_pending', 'merchant_available'])
      .executeTakeFirstOrThrow();
    if (Number(moved.total) !== Number(p.net))
      note(`settlement: the batches of ${p.account_id} ${p.currency} net ${p.net} but the balance moved ${moved.total} over their postings`);
  }
}
