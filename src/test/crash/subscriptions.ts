// Subscription deductions under kill -9 (docs/contract.md §16; issue 11 item 7): every deduction
// attempt is a scheduler job (`subscription.charge`, key `sub:<recurring_id>:<n>:<k>`) whose
// charge is a processor attempt holding the claim `deduction:<recurring_id>:<n>:<k>`, so a
// gateway killed in the middle of a batch of charges must neither lose nor double one. Each round creates a batch of daily subscriptions through the
// API (billing_cycle 3: two deductions, the first at the promotional price, the second at
// contract_amount; one in ten with 4000000000000341, whose merchant-initiated charges
// decline), makes every waiting first-attempt job of the account due now (the handler
// checks the subscription's next_n/retry_count, not the time; the date cannot be moved
// through the API), so the new subscriptions' first and the last round's second deductions
// run as one batch, cancels a few subscriptions through POST /v1/cancelsubscription while
// it runs, and SIGKILLs the gateway's whole process group once some but not all of the
// batch's payments are in (even rounds kill the restarted one a second time, while it takes
// the dead one's jobs over after the short scheduler lease). After the last restart every
// job made due must be done, and then: each subscription has exactly the deductions it was
// made due for (one payment per attempt (n, k) named in its details, order numbers
// <first order_no>-R1..R<charge_seq> each once, charged_count the captured ones, the amount
// of each deduction by the plan), a declining card has exactly one declined payment and its
// retry job waiting a day later (PastDue), a cancelled subscription charged nothing after
// its cancel, subscription.charged/subscription.failed exactly once per captured/declined
// deduction, each captured deduction has one capture posting for its amount, no job failed,
// and the ledger verifies (verifyLedger each round, `tollgate ledger verify` at the end).
import type { Kysely } from 'kysely';
import { signBody } from '../../client/index.js';
import type { DB } from '../../db/schema.js';
import { openStore, type Store } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import {
  cli,
  createMerchant,
  type Engine,
  type FreshDatabase,
  freePort,
  freshDatabase,
  type GatewayProcess,
  gatewayClient,
  gatewayEnv,
  startGateway,
} from '../process.js';

export interface SubscriptionCrashOptions {
  /** Rounds, each a batch of deductions killed mid-flight (even rounds twice). */
  rounds: number;
  /** Subscriptions created per round. */
  subscriptions: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const CHARGE_KIND = 'subscription.charge';
/** Short, so the restarted gateway takes the dead one's claimed jobs over quickly. */
const LEASE_MS = 2_000;
const REQUEST_TIMEOUT_MS = 15_000;
/** Creation requests at once. */
const CREATE_CONCURRENCY = 8;
/** Cancels sent while each round's batch runs. */
const CANCELS_PER_ROUND = 8;
/** How long the restarted gateway gets to finish every job made due. */
const SETTLE_TIMEOUT_MS = 90_000;
/** How long a kill waits for its moment before it kills anyway (counted as not mid-flight). */
const KILL_WAIT_MS = 30_000;
const DAY_MS = 86_400_000;
const YEAR = String(new Date().getUTCFullYear() + 3);
const GOOD_CARD = '4242424242424242';
/** The shopper-present payment succeeds; every merchant-initiated charge declines 1002. */
const MIT_DECLINE_CARD = '4000000000000341';
/** The plan: 3 charges counting the first payment, so deductions 1 and 2; the first at the promotional price. */
const BILLING_CYCLE = 3;
const PROMOTION_CYCLE = 2;
const PROMO = { amount: '9.99', minor: 999 };
const CONTRACT = { amount: '19.50', minor: 1950 };

interface Sub {
  recurring_id: string;
  contract_name: string;
  order_no: string;
  first_transaction_id: string;
  declining: boolean;
  /** The attempts (`n:k`) made due so far. */
  due: Set<string>;
  /** A cancel was sent (answered or not). */
  cancelSent: boolean;
  /** The gateway answered the cancel with cancel_status 1. */
  cancelAcked: boolean;
}

interface SubRow {
  recurring_id: string;
  status: string;
  next_n: number;
  retry_count: number;
  charge_seq: number;
  charged_count: number;
  updated_at: number;
}

interface PayRow {
  result_code: string;
  transaction_id: string;
  order_no: string;
  status: string;
  amount_minor: number;
  created_at: number;
  recurring_id: string;
  n: number;
  k: number;
}

/** What the database says, read after a round settled. */
interface State {
  subs: Map<string, SubRow>;
  payments: PayRow[];
  /** event type → object_id → count (subscription events of the account). */
  events: Map<string, Map<string, number>>;
  jobs: Array<{ job_key: string; status: string; due_at: number }>;
  /** transaction_id → [non-fee posting reasons, merchant_pending sum of its capture postings]. */
  postings: Map<string, { reasons: string[]; captured: number }>;
}

const jobKey = (recurring_id: string, n: number, k: number) => `sub:${recurring_id}:${n}:${k}`;
const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function recurringCount(db: Kysely<DB>, account_id: string): Promise<number> {
  const r = await db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', account_id)
    .where('kind', '=', 'recurring')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Deduction payments still at the processor (recorded `processing`, no answer settled yet). */
async function processingCount(db: Kysely<DB>, account_id: string): Promise<number> {
  const r = await db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', account_id)
    .where('kind', '=', 'recurring')
    .where('status', '=', 'processing')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** How many of `keys` are done, and how many not (due or running). */
async function jobProgress(db: Kysely<DB>, keys: string[]): Promise<{ done: number; open: number; failed: string[] }> {
  let done = 0;
  let open = 0;
  const failed: string[] = [];
  for (let i = 0; i < keys.length; i += 500) {
    const rows = await db
      .selectFrom('scheduled_jobs')
      .select(['job_key', 'status', 'last_error'])
      .where('job_key', 'in', keys.slice(i, i + 500))
      .execute();
    for (const r of rows) {
      if (r.status === 'done') done++;
      else if (r.status === 'failed') failed.push(`${r.job_key}: ${r.last_error}`);
      else open++;
    }
    open += keys.slice(i, i + 500).length - rows.length;
  }
  return { done, open, failed };
}

async function readState(db: Kysely<DB>, account_id: string): Promise<State> {
  const subs = new Map<string, SubRow>();
  for (const r of await db
    .selectFrom('subscriptions')
    .select(['recurring_id', 'status', 'next_n', 'retry_count', 'charge_seq', 'charged_count', 'updated_at'])
    .where('account_id', '=', account_id)
    .execute())
    subs.set(r.recurring_id, { ...r, updated_at: Number(r.updated_at) });
  const payments: PayRow[] = [];
  for (const p of await db
    .selectFrom('payments')
    .select(['transaction_id', 'order_no', 'status', 'result_code', 'amount_minor', 'created_at', 'details'])
    .where('account_id', '=', account_id)
    .where('kind', '=', 'recurring')
    .execute()) {
    let d: Record<string, unknown> = {};
    try {
      d = JSON.parse(p.details) as Record<string, unknown>;
    } catch {
      // counted below as a payment without its attempt
    }
    payments.push({
      transaction_id: p.transaction_id,
      order_no: p.order_no,
      status: p.status,
      result_code: p.result_code,
      amount_minor: Number(p.amount_minor),
      created_at: Number(p.created_at),
      recurring_id: String(d.recurring_id ?? ''),
      n: Number(d.deduction ?? -1),
      k: Number(d.retry ?? -1),
    });
  }
  const events = new Map<string, Map<string, number>>();
  for (const e of await db
    .selectFrom('events')
    .select(['event_type', 'object_id'])
    .where('account_id', '=', account_id)
    .where('event_type', 'like', 'subscription.%')
    .execute()) {
    const byObject = events.get(e.event_type) ?? new Map<string, number>();
    byObject.set(e.object_id, (byObject.get(e.object_id) ?? 0) + 1);
    events.set(e.event_type, byObject);
  }
  const jobs = (
    await db.selectFrom('scheduled_jobs').select(['job_key', 'status', 'due_at']).where('kind', '=', CHARGE_KIND).where('account_id', '=', account_id).execute()
  ).map((j) => ({ ...j, due_at: Number(j.due_at) }));
  const postings = new Map<string, { reasons: string[]; captured: number }>();
  const recurringTx = new Set(payments.map((p) => p.transaction_id));
  const captureIds = new Set<string>();
  for (const p of await db
    .selectFrom('ledger_postings')
    .innerJoin('payments', 'payments.transaction_id', 'ledger_postings.transaction_id')
    .select(['ledger_postings.transaction_id as transaction_id', 'ledger_postings.posting_id as posting_id', 'ledger_postings.reason as reason'])
    .where('payments.account_id', '=', account_id)
    .where('payments.kind', '=', 'recurring')
    .execute()) {
    if (!recurringTx.has(p.transaction_id ?? '')) continue;
    const x = postings.get(p.transaction_id ?? '') ?? { reasons: [], captured: 0 };
    if (p.reason !== 'fee') x.reasons.push(p.reason);
    if (p.reason === 'capture') captureIds.add(p.posting_id);
    postings.set(p.transaction_id ?? '', x);
  }
  for (const e of await db
    .selectFrom('ledger_entries')
    .innerJoin('payments', 'payments.transaction_id', 'ledger_entries.transaction_id')
    .select(['ledger_entries.transaction_id as transaction_id', 'ledger_entries.posting_id as posting_id', 'ledger_entries.amount_minor as amount_minor'])
    .where('payments.account_id', '=', account_id)
    .where('payments.kind', '=', 'recurring')
    .where('ledger_entries.ledger_account', '=', 'merchant_pending')
    .execute()) {
    if (!captureIds.has(e.posting_id)) continue;
    const x = postings.get(e.transaction_id ?? '');
    if (x) x.captured += Number(e.amount_minor);
  }
  return { subs, payments, events, jobs, postings };
}

/** A deduction the kill left at the in-process sandbox, which forgot it: failed 1007 by the sweeper. */
const lostAtKill = (p: PayRow): boolean => p.status === 'declined' && p.result_code === '1007';

/** A subscription's problems against what it was made due for ([] when it is right). */
function judge(s: Sub, st: State, now_ms: number): string[] {
  const out: string[] = [];
  const row = st.subs.get(s.recurring_id);
  if (!row) return ['no subscription row'];
  const mine = st.payments.filter((p) => p.recurring_id === s.recurring_id);
  const attempts = new Map<string, number>();
  for (const p of mine) attempts.set(`${p.n}:${p.k}`, (attempts.get(`${p.n}:${p.k}`) ?? 0) + 1);
  const doubled = [...attempts.entries()].filter(([, c]) => c > 1).map(([a, c]) => `attempt ${a} paid ${c} times`);
  out.push(...doubled);
  const strangers = [...attempts.keys()].filter((a) => !s.due.has(a));
  if (strangers.length) out.push(`payments for attempts never made due: ${strangers.join(', ')}`);
  // Order numbers: R1..R<charge_seq>, each once, and one payment per number.
  const seqs = mine.map((p) => p.order_no).sort();
  const want = Array.from({ length: row.charge_seq }, (_, i) => `${s.order_no}-R${i + 1}`).sort();
  if (seqs.join() !== want.join()) out.push(`order numbers [${seqs.join(', ')}] but charge_seq ${row.charge_seq}`);
  const captured = mine.filter((p) => p.status === 'captured');
  if (row.charged_count !== captured.length) out.push(`charged_count ${row.charged_count} but ${captured.length} captured deductions`);
  for (const p of mine) {
    const amount = p.n + 1 <= PROMOTION_CYCLE ? PROMO.minor : CONTRACT.minor;
    if (p.amount_minor !== amount) out.push(`${p.order_no} (deduction ${p.n}) charged ${p.amount_minor}, the plan says ${amount}`);
    const want = s.declining ? 'declined' : 'captured';
    // The in-process sandbox forgets with the killed process: a charge whose answer the kill
    // lost is "not found" when the sweeper asks, and fails 1007 (a retry follows, PastDue).
    if (p.status !== want && !lostAtKill(p)) out.push(`${p.order_no} is ${p.status} (${p.result_code}), expected ${want}`);
  }
  const cancelled = st.events.get('subscription.cancelled')?.get(s.first_transaction_id) ?? 0;
  if (row.status === 'Inactived') {
    // Only a cancel ends these plans early: everything charged happened before it.
    if (!s.cancelSent) out.push('Inactived without a cancel');
    if (cancelled !== 1) out.push(`${cancelled} subscription.cancelled events`);
    const afterCancel = mine.filter((p) => p.created_at > row.updated_at);
    if (afterCancel.length) out.push(`charged after its cancel: ${afterCancel.map((p) => p.order_no).join(', ')}`);
    return out;
  }
  // A cancel answered 1 ended it, unless its last deduction had completed it first (already ended).
  if (s.cancelAcked && row.status !== 'Completed') out.push(`cancel answered cancel_status 1, yet ${row.status}`);
  if (cancelled !== 0) out.push(`${row.status} with ${cancelled} subscription.cancelled events`);
  // Not cancelled: every attempt made due ran exactly once.
  const missing = [...s.due].filter((a) => !attempts.has(a));
  if (missing.length) out.push(`attempts made due without a payment: ${missing.join(', ')}`);
  if (s.declining) {
    if (s.due.size > 0) {
      const retry = st.jobs.find((j) => j.job_key === jobKey(s.recurring_id, 1, 1));
      if (row.status !== 'PastDue' || row.retry_count !== 1 || row.next_n !== 1)
        out.push(`${row.status}, next_n ${row.next_n}, retry_count ${row.retry_count} after one decline`);
      if (retry?.status !== 'due' || retry.due_at < now_ms + DAY_MS / 2)
        out.push(`retry job ${retry ? `${retry.status}, due ${new Date(retry.due_at).toISOString()}` : 'missing'}`);
    }
    return out;
  }
  if (mine.some(lostAtKill)) {
    if (row.status !== 'PastDue' || row.retry_count !== 1)
      out.push(`${row.status}, retry_count ${row.retry_count} after a deduction lost at the kill (expected PastDue, 1)`);
    return out;
  }
  const paid = s.due.size;
  const status = paid >= BILLING_CYCLE - 1 ? 'Completed' : 'Active';
  if (row.status !== status || (status === 'Active' && row.next_n !== paid + 1))
    out.push(`${row.status} with next_n ${row.next_n} after ${paid} deductions (expected ${status}${status === 'Active' ? `, next_n ${paid + 1}` : ''})`);
  return out;
}

async function http(url: string, body: Record<string, unknown>): Promise<{ status: number; body: string } | null> {
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: r.status, body: await r.text() };
  } catch {
    return null; // cut off by the kill
  }
}

/** POST /v1/cancelsubscription, signed; true when answered cancel_status 1, null when cut off. */
async function cancel(base: string, m: CreatedMerchant, s: Sub): Promise<boolean | null> {
  const body = signBody({ merchant_id: m.merchant_id, account_id: m.account_id, recurring_id: s.recurring_id, contract_name: s.contract_name }, m.secret_key);
  const r = await http(`${base}/v1/cancelsubscription`, body);
  if (!r) return null;
  if (r.status !== 200) throw new Error(`cancelsubscription answered HTTP ${r.status}: ${r.body.slice(0, 300)}`);
  return (JSON.parse(r.body) as { cancel_status: string }).cancel_status === '1';
}

export async function subscriptionCrash(engine: Engine, o: SubscriptionCrashOptions): Promise<void> {
  o.log(`\n# subscription deductions during kill -9 on ${engine}: ${o.rounds} rounds of ${o.subscriptions} new subscriptions, scheduler lease ${LEASE_MS} ms`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashsub');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_SCHEDULER_LEASE_MS: String(LEASE_MS),
      // A deduction the kill left at the processor is the sweeper's once this passes (docs/attempts.md).
      TOLLGATE_PROCESSOR_TIMEOUT_MS: '2000',
    });
    const m = createMerchant(env, 'crash-subscriptions');
    gw = await startGateway(env);
    store = openStore(fresh.url);
    const db = store.db;
    const client = gatewayClient(gw.url, m, { timeout_ms: REQUEST_TIMEOUT_MS });
    const subs: Sub[] = [];
    const totals = { kills: 0, midFlight: 0, batches: 0, jobsRun: 0, cancelsAcked: 0, cancelsCut: 0, created_ms: 0, settle_ms: 0 };
    const t0 = Date.now();

    for (let round = 1; round <= o.rounds; round++) {
      // 1. New subscriptions through the API (the gateway is up: no kill here).
      const tc = Date.now();
      const fresh_subs: Sub[] = [];
      for (let i = 0; i < o.subscriptions; i += CREATE_CONCURRENCY) {
        const batch = Array.from({ length: Math.min(CREATE_CONCURRENCY, o.subscriptions - i) }, async (_, j) => {
          const x = i + j;
          const declining = x % 10 === 3;
          const order_no = `SUB-${round}-${x}`;
          const contract_name = `plan-${round}-${x}`;
          const a = await client.authorise({
            order_no,
            currency: 'USD',
            amount: PROMO.amount,
            card: declining ? MIT_DECLINE_CARD : GOOD_CARD,
            expiration_month: '12',
            expiration_year: YEAR,
            security_code: '123',
            subscription: {
              contract_name,
              interval: 'day',
              interval_count: '1',
              billing_cycle: BILLING_CYCLE,
              promotion_cycle: PROMOTION_CYCLE,
              contract_amount: CONTRACT.amount,
              contract: 'crash test',
              price_id: 'price_crash',
            },
          });
          if (a.result_info !== '0000:Success' || !a.recurring_id) throw new Error(`creating ${order_no}: ${a.result_info}, recurring_id '${a.recurring_id}'`);
          fresh_subs.push({
            recurring_id: a.recurring_id,
            contract_name,
            order_no,
            first_transaction_id: a.transaction_id,
            declining,
            due: new Set(),
            cancelSent: false,
            cancelAcked: false,
          });
        });
        await Promise.all(batch);
      }
      subs.push(...fresh_subs);
      totals.created_ms += Date.now() - tc;

      // 2. Every waiting first attempt of the account due now: this round's first deductions
      // and the last round's second ones, one batch. Retries (k > 0) stay a day away.
      const now = Date.now();
      const moved = await store.transaction(async (tx) =>
        tx
          .updateTable('scheduled_jobs')
          .set({ due_at: now })
          .where('kind', '=', CHARGE_KIND)
          .where('account_id', '=', m.account_id)
          .where('status', '=', 'due')
          .where('job_key', 'like', 'sub:%:0')
          .returning('job_key')
          .execute(),
      );
      const keys = moved.map((r) => r.job_key);
      const byId = new Map(subs.map((s) => [s.recurring_id, s]));
      const strangers: string[] = [];
      for (const key of keys) {
        const [, id = '', n = '', k = ''] = key.split(':');
        const s = byId.get(id);
        if (s) s.due.add(`${n}:${k}`);
        else strangers.push(key);
      }
      if (strangers.length) o.check(`round ${round}: every waiting deduction job belongs to a subscription made here`, false, strangers.slice(0, 3).join(', '));
      totals.batches++;
      totals.jobsRun += keys.length;
      const before = await recurringCount(db, m.account_id);

      // 3. A few cancels of subscriptions in this batch, sent once its first payments are in,
      // so they race the deductions (some cut off by the kill).
      const base = gw.url;
      const movedNow = new Set(keys.map((k) => k.split(':')[1]));
      const cancelling = subs
        .filter((s) => !s.cancelSent && movedNow.has(s.recurring_id))
        .sort(() => Math.random() - 0.5)
        .slice(0, CANCELS_PER_ROUND);
      const cancels = (async () => {
        const deadline = Date.now() + KILL_WAIT_MS;
        while ((await recurringCount(db, m.account_id)) === before && Date.now() < deadline) await later(2);
        await Promise.all(
          cancelling.map(async (s) => {
            await later(Math.random() * 60);
            s.cancelSent = true;
            const r = await cancel(base, m, s);
            if (r === true) s.cancelAcked = true;
            if (r === null) totals.cancelsCut++;
            else if (r) totals.cancelsAcked++;
          }),
        );
      })();

      // 4. Kill once some of the batch's payments are in (a random share of it).
      const killWhen = async (label: string, target: number) => {
        const deadline = Date.now() + KILL_WAIT_MS;
        let seen = await recurringCount(db, m.account_id);
        while (seen < target && Date.now() < deadline) {
          await later(2);
          seen = await recurringCount(db, m.account_id);
        }
        await (gw as GatewayProcess).crash();
        totals.kills++;
        const atKill = await jobProgress(db, keys);
        const mid = atKill.done > 0 && atKill.open > 0;
        if (mid) totals.midFlight++;
        const count = await recurringCount(db, m.account_id);
        o.log(
          `  round ${round}: ${label} killed with ${count - before} deduction payments in, ${atKill.done} of ${keys.length} jobs done${mid ? ' (mid-flight)' : ''}`,
        );
        return count;
      };
      const expected = keys.length - cancelling.length; // at least this many payments (a cancel may stop one)
      const share = 0.05 + Math.random() * 0.6;
      let count = await killWhen('the batch:', before + Math.max(1, Math.floor(expected * share)));
      await cancels;
      gw = await startGateway(env);
      if (round % 2 === 0) {
        // Again while the restarted gateway takes the batch over.
        const left = before + expected - count;
        if (left > 1) {
          count = await killWhen('the takeover:', count + Math.max(1, Math.floor(left * (0.1 + Math.random() * 0.5))));
          gw = await startGateway(env);
        }
      }

      // 5. The restarted gateway finishes the batch (claimed jobs after their lease lapses).
      const ts = Date.now();
      let progress = await jobProgress(db, keys);
      while (progress.open > 0 && progress.failed.length === 0 && Date.now() - ts < SETTLE_TIMEOUT_MS) {
        await later(100);
        progress = await jobProgress(db, keys);
      }
      o.check(
        `round ${round}: every job made due is done after the restart (${keys.length}, ${((Date.now() - ts) / 1000).toFixed(1)} s)`,
        progress.open === 0 && progress.failed.length === 0,
        progress.failed.length ? `failed: ${progress.failed.slice(0, 3).join('; ')}` : `${progress.open} still open`,
      );
      // A job is done once its charge is at the processor; a charge whose answer the kill lost
      // (or that a cancel overtook) is settled by the sweeper asking again with its attempt id.
      let atProcessor = await processingCount(db, m.account_id);
      const swept = atProcessor;
      while (atProcessor > 0 && Date.now() - ts < SETTLE_TIMEOUT_MS) {
        await later(250);
        atProcessor = await processingCount(db, m.account_id);
      }
      totals.settle_ms += Date.now() - ts;
      o.check(
        `round ${round}: every deduction left at the processor is settled by the sweeper (${swept})`,
        atProcessor === 0,
        `${atProcessor} still processing after ${SETTLE_TIMEOUT_MS / 1000} s`,
      );

      // 6. Every subscription has exactly what it was made due for.
      const st = await readState(db, m.account_id);
      const wrong = subs.map((s) => [s, judge(s, st, now)] as const).filter(([, p]) => p.length > 0);
      o.check(
        `round ${round}: each of ${subs.length} subscriptions has exactly the deductions made due (${st.payments.length} deduction payments)`,
        wrong.length === 0,
        wrong
          .slice(0, 3)
          .map(([s, p]) => `${s.recurring_id} (${s.order_no}${s.declining ? ', declining card' : ''}): ${p.slice(0, 3).join('; ')}`)
          .join(' | '),
      );
      const known = new Set(subs.map((s) => s.recurring_id));
      const orphans = st.payments.filter((p) => !known.has(p.recurring_id)).map((p) => p.order_no);
      o.check(`round ${round}: every deduction payment names one of these subscriptions`, orphans.length === 0, orphans.slice(0, 3).join(', '));
      const once = (type: string, want: (p: PayRow) => boolean) => {
        const byObject = st.events.get(type) ?? new Map<string, number>();
        const pays = new Set(st.payments.map((p) => p.transaction_id));
        const bad = st.payments
          .filter((p) => (byObject.get(p.transaction_id) ?? 0) !== (want(p) ? 1 : 0))
          .map((p) => `${p.order_no} ×${byObject.get(p.transaction_id) ?? 0}`);
        const elsewhere = [...byObject.keys()].filter((id) => !pays.has(id));
        return { bad, elsewhere, total: [...byObject.values()].reduce((a, b) => a + b, 0) };
      };
      const charged = once('subscription.charged', (p) => p.status === 'captured');
      const failed = once('subscription.failed', (p) => p.status === 'declined');
      o.check(
        `round ${round}: subscription.charged once per captured deduction, subscription.failed once per declined one (${charged.total} and ${failed.total})`,
        charged.bad.length + charged.elsewhere.length + failed.bad.length + failed.elsewhere.length === 0,
        [...charged.bad, ...failed.bad, ...charged.elsewhere.map((id) => `charged event on ${id}`), ...failed.elsewhere.map((id) => `failed event on ${id}`)]
          .slice(0, 4)
          .join(', '),
      );
      const offBooks = st.payments
        .filter((p) => {
          const x = st.postings.get(p.transaction_id);
          if (p.status === 'captured') return x?.reasons.join() !== 'capture' || x.captured !== p.amount_minor;
          return x !== undefined && x.reasons.length > 0;
        })
        .map((p) => `${p.order_no} (${p.status}): ${JSON.stringify(st.postings.get(p.transaction_id) ?? null)}`);
      o.check(
        `round ${round}: each captured deduction has one capture posting for its amount, a declined one none`,
        offBooks.length === 0,
        offBooks.slice(0, 3).join(', '),
      );
      const verified = await verifyLedger(db);
      o.check(`round ${round}: the ledger verifies (${verified.postings} postings)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    }

    const failedJobs = (await db.selectFrom('scheduled_jobs').select(['job_key', 'last_error']).where('status', '=', 'failed').execute()).map(
      (j) => `${j.job_key}: ${j.last_error}`,
    );
    o.check('no scheduler job ended failed', failedJobs.length === 0, failedJobs.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(`at least one kill landed mid-flight (${totals.midFlight} of ${totals.kills})`, totals.midFlight > 0);
    const st = await readState(db, m.account_id);
    const count = (status: string) => [...st.subs.values()].filter((s) => s.status === status).length;
    o.log(
      `  subscription totals: ${subs.length} subscriptions, ${totals.batches} batches with ${totals.jobsRun} deduction jobs, ${totals.kills} kills (${totals.midFlight} mid-flight); ${st.payments.length} deduction payments checked (${st.payments.filter((p) => p.status === 'captured').length} captured, ${st.payments.filter((p) => p.status === 'declined').length} declined); ${totals.cancelsAcked} cancels answered, ${totals.cancelsCut} cut off; now ${count('Active')} Active, ${count('PastDue')} PastDue, ${count('Completed')} Completed, ${count('Inactived')} Inactived; creating took ${(totals.created_ms / 1000).toFixed(1)} s, settling ${(totals.settle_ms / 1000).toFixed(1)} s, ${Math.round((Date.now() - t0) / 1000)} s in all`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    if (process.env.TOLLGATE_CRASH_KEEP_DB) o.log(`  kept the database: ${fresh.url}`);
    else await fresh.drop();
  }
}
