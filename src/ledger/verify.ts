// `tollgate ledger verify`: proves the books. Every posting sums to zero, every currency
// sums to zero, every materialised balance equals the sum of its entries, and the ledger
// agrees with each payment's held, captured and refunded amounts, with each payout's
// reserved, paid and fee amounts, with each transfer's transferred and reversed amounts, and
// with the settlement batches (settlement-verify.ts).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.js';
import { verifySettlement } from './settlement-verify.js';

export interface VerifyReport {
  ok: boolean;
  postings: number;
  entries: number;
  payments: number;
  payouts: number;
  transfers: number;
  disputes: number;
  /** Settlement batches checked (src/settlement/verify.ts). */
  batches: number;
  problems: string[];
}

/** Problems listed at most (the counts stay exact). */
const MAX_PROBLEMS = 50;
/** Payments reconciled per query. */
const PAGE = 500;

const REFUND_REASONS = ['refund', 'refund_pending', 'refund_failed'];

type Note = (p: string) => void;

export async function verifyLedger(db: Kysely<DB>): Promise<VerifyReport> {
  const problems: string[] = [];
  const note: Note = (p) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const counts = await db
    .selectFrom('ledger_entries')
    .select([sql<number>`count(*)`.as('entries'), sql<number>`count(distinct posting_id)`.as('postings')])
    .executeTakeFirstOrThrow();
  await checkPostings(db, note);
  await checkBalances(db, note);
  const payments = await verifyPayments(db, note);
  const payouts = await verifyPayouts(db, note);
  const transfers = await verifyTransfers(db, note);
  const disputes = await verifyDisputes(db, note);
  const batches = await verifySettlement(db, note);
  return {
    ok: problems.length === 0,
    postings: Number(counts.postings),
    entries: Number(counts.entries),
    payments,
    payouts,
    transfers,
    disputes,
    batches,
    problems,
  };
}

/**
 * The ledger against the disputes table (src/disputes/ledger.ts), a page at a time: what each
 * dispute's postings took from the available balance is nothing for an inquiry, and the amount
 * and the fee for a chargeback, less the amount if it was won. Returns how many it read.
 */
async function verifyDisputes(db: Kysely<DB>, note: Note): Promise<number> {
  let disputes = 0;
  let after = '';
  for (let page = 0; page < 1_000_000; page++) {
    const rows = await db
      .selectFrom('disputes')
      .select(['dispute_id', 'kind', 'status', 'amount_minor', 'fee_minor'])
      .where('dispute_id', '>', after)
      .orderBy('dispute_id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    disputes += rows.length;
    after = rows[rows.length - 1]!.dispute_id;
    const sums = await db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(['p.ref', sql<number>`sum(e.amount_minor)`.as('total')])
      .where('e.ledger_account', '=', 'merchant_available')
      .where('p.reason', 'in', ['dispute', 'dispute_fee', 'dispute_won'])
      .where(
        'p.ref',
        'in',
        rows.map((r) => r.dispute_id),
      )
      .groupBy('p.ref')
      .execute();
    const posted = new Map(sums.map((x) => [x.ref, Number(x.total)]));
    for (const r of rows) {
      const expected = r.kind === 'inquiry' ? 0 : -Number(r.fee_minor) - (r.status === 'won' ? 0 : Number(r.amount_minor));
      const got = posted.get(r.dispute_id) ?? 0;
      if (got !== expected) note(`dispute ${r.dispute_id} (${r.kind}, ${r.status}): available posts ${got}, expected ${expected}`);
    }
  }
  return disputes;
}

/** Each posting sums to zero, has two entries or more, and its entries name its account and currency; each currency sums to zero. */
async function checkPostings(db: Kysely<DB>, note: Note): Promise<void> {
  const sum = sql<number>`sum(amount_minor)`;
  const unbalanced = await db
    .selectFrom('ledger_entries')
    .select(['posting_id', sum.as('total')])
    .groupBy('posting_id')
    .having(sum, '<>', 0)
    .limit(MAX_PROBLEMS)
    .execute();
  for (const u of unbalanced) note(`posting ${u.posting_id} sums to ${u.total}, not 0`);

  const lonely = await db
    .selectFrom('ledger_postings as p')
    .leftJoin('ledger_entries as e', 'e.posting_id', 'p.posting_id')
    .select('p.posting_id')
    .groupBy('p.posting_id')
    .having(sql`count(e.entry_id)`, '<', 2)
    .limit(MAX_PROBLEMS)
    .execute();
  for (const l of lonely) note(`posting ${l.posting_id} has fewer than two entries`);

  const mismatched = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
    .select('e.entry_id')
    .where((eb) => eb.or([eb('e.account_id', '<>', eb.ref('p.account_id')), eb('e.currency', '<>', eb.ref('p.currency'))]))
    .limit(MAX_PROBLEMS)
    .execute();
  for (const m of mismatched) note(`entry ${m.entry_id} names another account or currency than its posting`);

  const currencies = await db
    .selectFrom('ledger_entries')
    .select(['currency', sum.as('total')])
    .groupBy('currency')
    .execute();
  for (const c of currencies) if (Number(c.total) !== 0) note(`currency ${c.currency} sums to ${c.total}, not 0`);
}

/** Materialised balances against the entries, both ways. */
async function checkBalances(db: Kysely<DB>, note: Note): Promise<void> {
  const derived = await db
    .selectFrom('ledger_entries')
    .select(['account_id', 'currency', 'ledger_account', sql<number>`sum(amount_minor)`.as('total')])
    .groupBy(['account_id', 'currency', 'ledger_account'])
    .execute();
  const stored = await db
    .selectFrom('ledger_balances')
    .select(['account_id', 'currency', 'ledger_account', sql<number>`sum(balance_minor)`.as('balance_minor')])
    .groupBy(['account_id', 'currency', 'ledger_account'])
    .execute();
  const key = (r: { account_id: string; currency: string; ledger_account: string }) => `${r.account_id}/${r.currency}/${r.ledger_account}`;
  const storedBy = new Map(stored.map((r) => [key(r), Number(r.balance_minor)]));
  const derivedBy = new Map(derived.map((r) => [key(r), Number(r.total)]));
  for (const [k, v] of derivedBy) if ((storedBy.get(k) ?? 0) !== v) note(`balance ${k} is ${storedBy.get(k) ?? 0} but its entries sum to ${v}`);
  for (const [k, v] of storedBy) if (!derivedBy.has(k) && v !== 0) note(`balance ${k} is ${v} but has no entries`);
}

/**
 * The ledger against the payments table, a page of payments at a time; returns how many
 * payments it read. It reads the raw rows itself, not through src/payments/reader.ts: an
 * audit independent of the code it checks (and payments posts through this folder).
 */
async function verifyPayments(db: Kysely<DB>, note: Note): Promise<number> {
  let payments = 0;
  let after = '';
  for (let page = 0; page < 1_000_000; page++) {
    const rows = await db
      .selectFrom('payments')
      .select(['transaction_id', 'authorised_minor', 'captured_minor', 'refunded_minor'])
      .where('transaction_id', '>', after)
      .orderBy('transaction_id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    payments += rows.length;
    after = rows[rows.length - 1]!.transaction_id;
    const sums = await db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(['e.transaction_id', 'e.ledger_account', 'p.reason', sql<number>`sum(e.amount_minor)`.as('total')])
      .where(
        'e.transaction_id',
        'in',
        rows.map((r) => r.transaction_id),
      )
      .groupBy(['e.transaction_id', 'e.ledger_account', 'p.reason'])
      .execute();
    comparePayments(rows, sums, note);
  }
  return payments;
}

interface PaymentAmounts {
  transaction_id: string;
  authorised_minor: number;
  captured_minor: number;
  refunded_minor: number;
}

/** What a page of payments' postings held, captured and refunded against what each payment says. */
function comparePayments(
  rows: PaymentAmounts[],
  sums: Array<{ transaction_id: string; ledger_account: string; reason: string; total: number }>,
  note: Note,
): void {
  const got = new Map<string, { held: number; captured: number; refunded: number }>();
  for (const s of sums) {
    const g = got.get(s.transaction_id) ?? { held: 0, captured: 0, refunded: 0 };
    const total = Number(s.total);
    if (s.ledger_account === 'customer_holds') g.held += total;
    if (s.ledger_account === 'merchant_pending' && s.reason === 'capture') g.captured += total;
    if (s.ledger_account === 'merchant_available' && REFUND_REASONS.includes(s.reason)) g.refunded -= total;
    got.set(s.transaction_id, g);
  }
  for (const r of rows) {
    const g = got.get(r.transaction_id) ?? { held: 0, captured: 0, refunded: 0 };
    if (g.held !== Number(r.authorised_minor)) note(`payment ${r.transaction_id}: holds post ${g.held}, the payment holds ${r.authorised_minor}`);
    if (g.captured !== Number(r.captured_minor)) note(`payment ${r.transaction_id}: captures post ${g.captured}, the payment captured ${r.captured_minor}`);
    if (g.refunded !== Number(r.refunded_minor)) note(`payment ${r.transaction_id}: refunds post ${g.refunded}, the payment refunded ${r.refunded_minor}`);
  }
}

/**
 * The ledger against the payouts table (src/payouts/ledger.ts), a page of payouts at a time;
 * returns how many payouts it read.
 */
async function verifyPayouts(db: Kysely<DB>, note: Note): Promise<number> {
  let payouts = 0;
  let after = '';
  for (let page = 0; page < 1_000_000; page++) {
    const rows = await db
      .selectFrom('payouts')
      .select(['transaction_id', 'status', 'source_currency', 'payment_currency', 'amount_payer_pays', 'amount_beneficiary_receives', 'fee_amount'])
      .where('transaction_id', '>', after)
      .orderBy('transaction_id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    payouts += rows.length;
    after = rows[rows.length - 1]!.transaction_id;
    const sums = await db
      .selectFrom('ledger_entries')
      .select(['transaction_id', 'ledger_account', 'currency', sql<number>`sum(amount_minor)`.as('total')])
      .where(
        'transaction_id',
        'in',
        rows.map((r) => r.transaction_id),
      )
      .groupBy(['transaction_id', 'ledger_account', 'currency'])
      .execute();
    const posted = new Map(sums.map((x) => [`${x.transaction_id}/${x.ledger_account}/${x.currency}`, Number(x.total)]));
    for (const r of rows) {
      for (const [ledger_account, currency, amount] of payoutPostings(r)) {
        const got = posted.get(`${r.transaction_id}/${ledger_account}/${currency}`) ?? 0;
        if (got !== amount) note(`payout ${r.transaction_id} (${r.status}): ${ledger_account} ${currency} posts ${got}, expected ${amount}`);
      }
    }
  }
  return payouts;
}

/**
 * What a payout in its status must have posted, per (ledger account, currency): funds stay
 * reserved exactly while a payout may still be paid; a completed one paid its fee and the
 * beneficiary.
 */
function payoutPostings(r: {
  status: string;
  source_currency: string;
  payment_currency: string;
  amount_payer_pays: number;
  amount_beneficiary_receives: number;
  fee_amount: number;
}): Array<[string, string, number]> {
  const debit = Number(r.amount_payer_pays) + Number(r.fee_amount);
  const open = r.status === 'SCHEDULED' || r.status === 'PROCESSING';
  const done = r.status === 'COMPLETED';
  return [
    ['payouts_reserved', r.source_currency, open ? debit : 0],
    ['merchant_available', r.source_currency, open || done ? -debit : 0],
    ['fees', r.source_currency, done ? Number(r.fee_amount) : 0],
    ['processor_clearing', r.payment_currency, done ? Number(r.amount_beneficiary_receives) : 0],
  ];
}

/**
 * The ledger against the transfers tables (src/connect/ledger.ts; docs/contract.md §18), a page of
 * transfers at a time. For a transfer of A with R reversed (net N = A − R) from platform P
 * to connected account C: R ≤ A and R is the sum of its reversal rows; its `transfer` and
 * `transfer_reversal` postings move exactly N: P's merchant_available −N and
 * connect_transfers +N, C's connect_transfers −N and merchant_available +N (so
 * connect_transfers sums to zero across both), in the transfer's currency and nowhere else;
 * each reversal moves its own amount back; no such posting names a transfer or reversal
 * that does not exist.
 */
async function verifyTransfers(db: Kysely<DB>, note: Note): Promise<number> {
  await checkTransferReferences(db, note);
  let transfers = 0;
  let after = '';
  for (let page = 0; page < 1_000_000; page++) {
    const rows = await db
      .selectFrom('transfers')
      .select(['id', 'platform_account_id', 'destination', 'currency', 'amount_minor', 'reversed_minor'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    transfers += rows.length;
    after = rows[rows.length - 1]!.id;
    const ids = rows.map((r) => r.id);
    const reversals = await db.selectFrom('transfer_reversals').select(['id', 'transfer_id', 'amount_minor']).where('transfer_id', 'in', ids).execute();
    compareTransfers(rows, reversals, await transferPostings(db, ids), note);
  }
  return transfers;
}

/** No `transfer` or `transfer_reversal` posting names a transfer or reversal that does not exist, and no reversal a missing transfer. */
async function checkTransferReferences(db: Kysely<DB>, note: Note): Promise<void> {
  const orphans = await db
    .selectFrom('ledger_postings as p')
    .leftJoin('transfers as t', 't.id', 'p.ref')
    .leftJoin('transfer_reversals as r', 'r.id', 'p.ref')
    .select(['p.posting_id', 'p.reason', 'p.ref'])
    .where((eb) =>
      eb.or([eb.and([eb('p.reason', '=', 'transfer'), eb('t.id', 'is', null)]), eb.and([eb('p.reason', '=', 'transfer_reversal'), eb('r.id', 'is', null)])]),
    )
    .limit(MAX_PROBLEMS)
    .execute();
  for (const o of orphans) note(`posting ${o.posting_id} (${o.reason}) names ${o.ref || 'nothing'}, which is not a transfer or reversal`);
  // A reversal row whose transfer is gone would escape the per-transfer pages of verifyTransfers.
  const strays = await db
    .selectFrom('transfer_reversals as r')
    .leftJoin('transfers as t', 't.id', 'r.transfer_id')
    .select(['r.id', 'r.transfer_id'])
    .where('t.id', 'is', null)
    .limit(MAX_PROBLEMS)
    .execute();
  for (const r of strays) note(`reversal ${r.id} names transfer ${r.transfer_id}, which does not exist`);
}

const movementKey = (account_id: string, currency: string, ledger_account: string) => `${account_id}/${currency}/${ledger_account}`;

/**
 * What each transfer's own posting and each reversal's postings moved, per (account, currency,
 * ledger account), keyed by transfer id and by reversal id: a transfer's line holds its own
 * posting plus its reversals', a reversal's only its own.
 */
async function transferPostings(db: Kysely<DB>, ids: string[]): Promise<Map<string, Map<string, number>>> {
  const sum = sql<number>`sum(e.amount_minor)`;
  const own = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
    .select(['p.ref as ref', 'e.account_id', 'e.currency', 'e.ledger_account', sum.as('total')])
    .where('p.reason', '=', 'transfer')
    .where('p.ref', 'in', ids)
    .groupBy(['p.ref', 'e.account_id', 'e.currency', 'e.ledger_account'])
    .execute();
  const back = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
    .innerJoin('transfer_reversals as r', 'r.id', 'p.ref')
    .select(['p.ref as ref', 'r.transfer_id', 'e.account_id', 'e.currency', 'e.ledger_account', sum.as('total')])
    .where('p.reason', '=', 'transfer_reversal')
    .where('r.transfer_id', 'in', ids)
    .groupBy(['p.ref', 'r.transfer_id', 'e.account_id', 'e.currency', 'e.ledger_account'])
    .execute();
  const posted = new Map<string, Map<string, number>>();
  const add = (of: string, k: string, amount: number) => {
    const m = posted.get(of) ?? new Map<string, number>();
    m.set(k, (m.get(k) ?? 0) + amount);
    posted.set(of, m);
  };
  for (const x of own) add(x.ref, movementKey(x.account_id, x.currency, x.ledger_account), Number(x.total));
  for (const x of back) {
    add(x.transfer_id, movementKey(x.account_id, x.currency, x.ledger_account), Number(x.total));
    add(x.ref, movementKey(x.account_id, x.currency, x.ledger_account), Number(x.total));
  }
  return posted;
}

interface TransferRow {
  id: string;
  platform_account_id: string;
  destination: string;
  currency: string;
  amount_minor: number;
  reversed_minor: number;
}

/** A page of transfers and their reversals against their rows and what they posted. */
function compareTransfers(
  rows: TransferRow[],
  reversals: Array<{ id: string; transfer_id: string; amount_minor: number }>,
  posted: Map<string, Map<string, number>>,
  note: Note,
): void {
  const reversedRows = new Map<string, number>();
  for (const r of reversals) reversedRows.set(r.transfer_id, (reversedRows.get(r.transfer_id) ?? 0) + Number(r.amount_minor));
  const byTransfer = new Map(rows.map((r) => [r.id, r]));
  for (const r of rows) {
    const amount = Number(r.amount_minor);
    const reversed = Number(r.reversed_minor);
    if (reversed < 0 || reversed > amount) note(`transfer ${r.id}: reversed ${reversed} is outside 0 … ${amount}`);
    const sumRows = reversedRows.get(r.id) ?? 0;
    if (sumRows !== reversed) note(`transfer ${r.id}: its reversals sum to ${sumRows}, the transfer says ${reversed} reversed`);
    compareMovement(`transfer ${r.id}`, posted.get(r.id), r.platform_account_id, r.destination, r.currency, amount - reversed, note);
  }
  for (const v of reversals) {
    const t = byTransfer.get(v.transfer_id)!;
    compareMovement(`reversal ${v.id} of ${t.id}`, posted.get(v.id), t.destination, t.platform_account_id, t.currency, Number(v.amount_minor), note);
  }
}

/** The four lines a movement of n from `from` to `to` posts, and nothing else. */
function compareMovement(what: string, got: Map<string, number> | undefined, from: string, to: string, currency: string, n: number, note: Note): void {
  const want = new Map([
    [movementKey(from, currency, 'merchant_available'), -n],
    [movementKey(from, currency, 'connect_transfers'), n],
    [movementKey(to, currency, 'connect_transfers'), -n],
    [movementKey(to, currency, 'merchant_available'), n],
  ]);
  for (const [k, amount] of want) if ((got?.get(k) ?? 0) !== amount) note(`${what}: ${k} posts ${got?.get(k) ?? 0}, expected ${amount}`);
  for (const [k, amount] of got ?? []) if (!want.has(k) && amount !== 0) note(`${what}: ${k} posts ${amount}, expected nothing`);
}
