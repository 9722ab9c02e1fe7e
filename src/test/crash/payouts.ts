// Payouts under kill -9 (docs/contract.md §17; issue 12 item 5). A test account is funded with a
// known amount (`tollgate balance top-up`, again between rounds) and priced (`pricing
// payout`, so fees are on the books); each round fires many payouts at once through the
// client library, asking for more than the balance: LOCAL ones that complete at once,
// SWIFT ones that complete after TOLLGATE_SANDBOX_SWIFT_DELAY_MS (300 ms here, on the
// gateway's scheduler), the sandbox's failing account (000111111116) and returned one
// (000222222226), SCHEDULED ones (payment_date tomorrow), cancels of acknowledged
// scheduled ones, exact repeats and changed repeats (409) of acknowledged ones, and every
// request whose answer an earlier kill cut off, resent with the SAME request_id and body
// (half of them with the same Idempotency-Key too). The gateway's process group is
// SIGKILLed once a random share of the round is answered. While it is down: available ≥ 0,
// payouts_reserved = the debits (amount_payer_pays + fee_amount) of SCHEDULED and
// PROCESSING payouts, top-ups = available + reserved + the debits of COMPLETED payouts,
// exactly, and the ledger verifies; a sampler also reads available every few milliseconds
// during the load. After the last round every request still unanswered is resent until
// answered and the SWIFT payouts and returns settle. Then: every acknowledged payout
// exists exactly once with the acknowledged transaction_id, no request_id has two payouts,
// nothing the clients never asked for, every answer agrees with the final state, every
// acknowledged cancel CANCELLED, every payout final but the SCHEDULED ones (from the second
// round, half the waiting ones have their dispatch job made due now, racing cancels and the
// kill: those end COMPLETED, or CANCELLED when the cancel came first), one terminal
// event per final payout, the balances add up, no payout job failed, the ledger verifies.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { NetworkError, TollgateApiError, type TollgateClient } from '../../client/index.js';
import { openStore, type Store } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
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

export interface PayoutCrashOptions {
  /** Rounds, each a burst of payouts killed mid-flight. */
  rounds: number;
  /** New payouts per round (besides resends, repeats and cancels). */
  payouts: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const SWIFT_DELAY_MS = 300;
/** Short, so the restarted gateway takes a killed one's claimed check jobs over quickly. */
const LEASE_MS = 2_000;
const LANES = 12;
const REQUEST_TIMEOUT_MS = 10_000;
const SETTLE_TIMEOUT_MS = 60_000;
/** Minor units (USD): the first top-up, and one more before each later round. */
const FIRST_TOP_UP = 100_000;
const ROUND_TOP_UP = 150_000;
const DAY_MS = 86_400_000;

type Kind = 'local' | 'swift' | 'invalid' | 'returned' | 'scheduled';
const KINDS: Array<[Kind, number]> = [
  ['local', 35],
  ['swift', 15],
  ['invalid', 10],
  ['returned', 10],
  ['scheduled', 30],
];

interface Ack {
  transaction_id: string;
  status: string;
  failure_type: string;
}

interface Req {
  request_id: string;
  kind: Kind;
  /** The fields as sent (the client adds merchant_id and account_id and signs). */
  body: Record<string, unknown>;
  /** Idempotency-Key of the last attempt whose answer was lost (reused for half the resends). */
  lost_key?: string;
  /** Every payout answer it got (replays must agree). */
  ack?: Ack;
  /** The row found under its request_id while the gateway was down after its answer was lost. */
  stored_at_kill?: string;
  /** A cancel of it was sent (answered or not). */
  cancelSent?: boolean;
  /** A cancel of it was answered cancel_status 1. */
  cancelled?: boolean;
  /** A cancel of it was answered 1012: its dispatch (made due) came first. */
  tooLate?: boolean;
  /** A SCHEDULED payout whose dispatch job was made due now (it races the round's cancels and kill). */
  madeDue?: boolean;
}

type Carry = { kind: 'payout'; req: Req; resend: boolean } | { kind: 'cancel'; req: Req; by: 'request_id' | 'transaction_id' };
/** One request of a round; `carry` is what goes to the next round when the kill comes first. */
interface Task {
  run(): Promise<void>;
  carry?: Carry;
}

interface Row {
  transaction_id: string;
  request_id: string;
  status: string;
  failure_type: string;
  amount_payer_pays: number;
  fee_amount: number;
}

const ACH = {
  entity_type: 'COMPANY',
  company_name: 'Crash Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: {
    account_name: 'Crash Supplies LLC',
    account_number: '000123456789',
    bank_code: '011000015',
    bank_country_code: 'US',
    account_currency: 'USD',
  },
};

function pickKind(): Kind {
  let x = Math.random() * 100;
  for (const [k, w] of KINDS) {
    x -= w;
    if (x < 0) return k;
  }
  return 'local';
}

/** 10.00 to 84.99 USD: above the largest fee (SWIFT, PAYER charge: 0.5% + 2.00 + 5.00), so fee_paid_by BENEFICIARY always leaves something to pay. */
function payoutBody(kind: Kind, n: number, tomorrow: string): Record<string, unknown> {
  const account_number = kind === 'invalid' ? '000111111116' : kind === 'returned' ? '000222222226' : '000123456789';
  const swift = kind === 'swift';
  return {
    request_id: randomUUID(),
    beneficiary: { ...ACH, bank_details: { ...ACH.bank_details, account_number, ...(swift ? { swift_code: 'CHASUS33' } : {}) } },
    payment_currency: 'USD',
    payment_method: swift ? 'SWIFT' : 'LOCAL',
    ...(swift ? { swift_charge_option: n % 2 ? 'PAYER' : 'SHARED' } : {}),
    reason: 'crash test',
    reference: `CR-${n}`,
    source_currency: 'USD',
    payment_amount: `${10 + Math.floor(Math.random() * 75)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`,
    ...(n % 4 === 1 ? { fee_paid_by: 'BENEFICIARY' } : {}),
    ...(kind === 'scheduled' ? { payment_date: tomorrow } : {}),
  };
}

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 409 "still being processed": the Idempotency-Key of an attempt the kill cut off is leased (60 s) to that attempt. */
const busyKey = (r: NonNullable<Outcome>) => r.status === 409 && 'refused' in r && r.refused.message.includes('still being processed');

type Outcome = { status: number; answer: Record<string, any> } | { status: number; refused: TollgateApiError } | null;

async function send(c: TollgateClient, path: string, body: Record<string, unknown>, violations: string[], idempotency_key?: string): Promise<Outcome> {
  try {
    const r = await c.post(path, body, idempotency_key ? { idempotency_key } : {});
    return { status: r.http_status, answer: r.answer };
  } catch (e) {
    if (e instanceof TollgateApiError) return { status: e.http_status, refused: e };
    if (!(e instanceof NetworkError)) violations.push(`${path}: ${(e as Error).name}: ${(e as Error).message.slice(0, 200)}`);
    return null;
  }
}

async function payoutRows(store: Store, account_id: string): Promise<Row[]> {
  const rows = await store.db
    .selectFrom('payouts')
    .select(['transaction_id', 'request_id', 'status', 'failure_type', 'amount_payer_pays', 'fee_amount'])
    .where('account_id', '=', account_id)
    .execute();
  return rows.map((r) => ({ ...r, amount_payer_pays: Number(r.amount_payer_pays), fee_amount: Number(r.fee_amount) }));
}

async function usdBalance(store: Store, account_id: string): Promise<{ available: number; reserved: number }> {
  const rows = await store.db
    .selectFrom('ledger_balances')
    .select(['ledger_account', sql<number>`sum(balance_minor)`.as('total')])
    .where('account_id', '=', account_id)
    .where('currency', '=', 'USD')
    .where('ledger_account', 'in', ['merchant_available', 'payouts_reserved'])
    .groupBy('ledger_account')
    .execute();
  const of = (a: string) => Number(rows.find((r) => r.ledger_account === a)?.total ?? 0);
  return { available: of('merchant_available'), reserved: of('payouts_reserved') };
}

/** The books against the payouts: [] when available ≥ 0, reserved = open debits and top-ups = available + reserved + completed debits. */
async function booksProblems(store: Store, account_id: string, funded: number): Promise<{ problems: string[]; line: string }> {
  const rows = await payoutRows(store, account_id);
  const { available, reserved } = await usdBalance(store, account_id);
  const debit = (r: Row) => r.amount_payer_pays + r.fee_amount;
  const open = rows.filter((r) => r.status === 'SCHEDULED' || r.status === 'PROCESSING').reduce((s, r) => s + debit(r), 0);
  const paid = rows.filter((r) => r.status === 'COMPLETED').reduce((s, r) => s + debit(r), 0);
  const problems: string[] = [];
  if (available < 0) problems.push(`available ${available} is below zero`);
  if (reserved !== open) problems.push(`payouts_reserved ${reserved}, but SCHEDULED and PROCESSING payouts hold ${open}`);
  if (available + reserved + paid !== funded)
    problems.push(`available ${available} + reserved ${reserved} + completed ${paid} = ${available + reserved + paid}, topped up ${funded}`);
  const usd = (m: number) => (m / 100).toFixed(2);
  return { problems, line: `available ${usd(available)}, reserved ${usd(reserved)}, completed debits ${usd(paid)}, topped up ${usd(funded)}` };
}

export async function payoutCrash(engine: Engine, o: PayoutCrashOptions): Promise<void> {
  o.log(
    `\n# payouts during kill -9 on ${engine}: ${o.rounds} rounds of ${o.payouts} new payouts, SWIFT delay ${SWIFT_DELAY_MS} ms, scheduler lease ${LEASE_MS} ms`,
  );
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashpay');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_SCHEDULER_LEASE_MS: String(LEASE_MS),
      TOLLGATE_SANDBOX_SWIFT_DELAY_MS: String(SWIFT_DELAY_MS),
    });
    const m = createMerchant(env, 'crash-payouts');
    const account = m.account_id;
    const operator = (args: string[]) => {
      const r = cli(env, args);
      if (r.status !== 0) throw new Error(`tollgate ${args.join(' ')}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`);
    };
    let funded = 0;
    const topUp = (minor: number) => {
      operator(['balance', 'top-up', '--account', account, '--currency', 'USD', '--amount', (minor / 100).toFixed(2)]);
      funded += minor;
    };
    topUp(FIRST_TOP_UP);
    operator(['pricing', 'payout', '--account', account, '--currency', 'USD', '--method', 'LOCAL', '--percent', '1', '--fixed', '0.25']);
    operator([
      'pricing',
      'payout',
      '--account',
      account,
      '--currency',
      'USD',
      '--method',
      'SWIFT',
      '--percent',
      '0.5',
      '--fixed',
      '2.00',
      '--swift-payer',
      '5.00',
    ]);
    gw = await startGateway(env);
    store = openStore(fresh.url);
    const st = store;
    const client = gatewayClient(gw.url, m, { retry: { max_retries: 0 }, timeout_ms: REQUEST_TIMEOUT_MS });
    const tomorrow = new Date(Date.now() + DAY_MS).toISOString().slice(0, 10);

    const book = new Map<string, Req>();
    const violations: string[] = [];
    /** Requests to send (again) in the next round: unanswered payouts, and cancels. */
    let carried: Carry[] = [];
    const totals = {
      answers: 0,
      lost: 0,
      resent: 0,
      repeats: 0,
      conflicts: 0,
      cancelsAcked: 0,
      cancelsLost: 0,
      cancelsTooLate: 0,
      kills: 0,
      midFlight: 0,
      keyBusy: 0,
      madeDue: 0,
    };
    /** What the payouts asked for (payment amounts; the debits add fees), in minor units. */
    const asked = () => [...book.values()].reduce((sum, r) => sum + Math.round(Number(r.body.payment_amount) * 100), 0);
    let minAvailable = Number.POSITIVE_INFINITY;
    let samples = 0;
    let n = 0;
    const t0 = Date.now();

    const recordPayout = (req: Req, r: NonNullable<Outcome>, where: string) => {
      if (r.status >= 500) violations.push(`${where} ${req.request_id}: HTTP ${r.status}`);
      if (!('answer' in r)) {
        violations.push(`${where} ${req.request_id} (${req.kind}): refused HTTP ${r.status} ${r.refused.message.slice(0, 200)}`);
        return;
      }
      totals.answers++;
      const a = r.answer;
      if (a.request_id !== req.request_id || a.account_id !== account)
        violations.push(`${where} ${req.request_id}: answered request ${a.request_id} of ${a.account_id}`);
      if (req.ack && req.ack.transaction_id !== a.transaction_id)
        violations.push(`${where} ${req.request_id}: answered ${a.transaction_id}, earlier ${req.ack.transaction_id} (two payouts for one request_id?)`);
      if (req.stored_at_kill && req.stored_at_kill !== a.transaction_id)
        violations.push(`${where} ${req.request_id}: stored as ${req.stored_at_kill} when the answer was lost, resent and answered ${a.transaction_id}`);
      if (!req.ack) req.ack = { transaction_id: a.transaction_id, status: a.status, failure_type: a.failure_type };
    };

    for (let round = 1; round <= o.rounds; round++) {
      // The round's work: what the last kill cut off first, then new payouts mixed with repeats and cancels.
      const tasks: Task[] = [];
      const next: Carry[] = [];
      let answeredNow = 0;
      let inflight = 0;
      const stop = { now: false };
      const payoutTask = (req: Req, resend: boolean): Task => ({
        carry: { kind: 'payout', req, resend },
        run: async () => {
          const key = resend && req.lost_key && Math.random() < 0.5 ? req.lost_key : randomUUID();
          inflight++;
          const r = await send(client, '/v1/payout', req.body, violations, key);
          inflight--;
          if (resend) totals.resent++;
          if (r && busyKey(r)) {
            // The killed attempt still holds its Idempotency-Key (a lease): retry later, with a new key.
            totals.keyBusy++;
            req.lost_key = undefined;
            next.push({ kind: 'payout', req, resend: true });
            return;
          }
          if (!r) {
            totals.lost++;
            req.lost_key = key;
            next.push({ kind: 'payout', req, resend: true });
            return;
          }
          answeredNow++;
          recordPayout(req, r, resend ? 'resend' : 'payout');
        },
      });
      const cancelTask = (req: Req, by: 'request_id' | 'transaction_id'): Task => ({
        carry: { kind: 'cancel', req, by },
        run: async () => {
          req.cancelSent = true;
          inflight++;
          const r = await send(
            client,
            '/v1/cancelpayout',
            by === 'request_id' ? { request_id: req.request_id } : { transaction_id: req.ack?.transaction_id },
            violations,
          );
          inflight--;
          if (!r) {
            totals.cancelsLost++;
            next.push({ kind: 'cancel', req, by });
            return;
          }
          answeredNow++;
          if (!('answer' in r)) return void violations.push(`cancel ${req.request_id}: HTTP ${r.status} ${r.refused.message.slice(0, 200)}`);
          if (req.madeDue && r.answer.cancel_status === '0' && String(r.answer.error_message).startsWith('1012') && r.answer.status !== 'SCHEDULED') {
            req.tooLate = true;
            totals.cancelsTooLate++;
            return;
          }
          if (r.answer.cancel_status !== '1' || r.answer.status !== 'CANCELLED')
            return void violations.push(
              `cancel of SCHEDULED ${req.request_id}: cancel_status ${r.answer.cancel_status} ${r.answer.status} ${r.answer.error_message}`,
            );
          if (r.answer.transaction_id !== req.ack?.transaction_id) violations.push(`cancel ${req.request_id}: answered ${r.answer.transaction_id}`);
          req.cancelled = true;
          totals.cancelsAcked++;
        },
      });
      for (const c of carried) tasks.push(c.kind === 'payout' ? payoutTask(c.req, c.resend) : cancelTask(c.req, c.by));
      // From the second round on, half the waiting SCHEDULED payouts are due now (their dispatch
      // jobs moved; the date cannot be moved through the API): dispatched by the gateway's
      // scheduler during the load, racing the cancels below and the kill.
      if (round > 1) {
        const waiting = [...book.values()].filter((r) => r.ack?.status === 'SCHEDULED' && !r.cancelSent && !r.madeDue && Math.random() < 0.5);
        const keys = waiting.map((r) => `payout:${r.ack?.transaction_id}:dispatch`);
        const now = Date.now();
        const moved = keys.length
          ? await st.transaction((tx) =>
              tx.updateTable('scheduled_jobs').set({ due_at: now }).where('job_key', 'in', keys).where('status', '=', 'due').returning('job_key').execute(),
            )
          : [];
        const movedKeys = new Set(moved.map((j) => j.job_key));
        for (const r of waiting) if (movedKeys.has(`payout:${r.ack?.transaction_id}:dispatch`)) r.madeDue = true;
        totals.madeDue += moved.length;
        // Cancels of some of them race their dispatch.
        for (const r of waiting.filter((x) => x.madeDue).slice(0, 6)) tasks.push(cancelTask(r, Math.random() < 0.5 ? 'request_id' : 'transaction_id'));
      }
      const acked = () => [...book.values()].filter((r) => r.ack);
      for (let i = 0; i < o.payouts; i++) {
        const kind = pickKind();
        const req: Req = { request_id: '', kind, body: payoutBody(kind, n++, tomorrow) };
        req.request_id = req.body.request_id as string;
        book.set(req.request_id, req);
        tasks.push(payoutTask(req, false));
        const dice = Math.random();
        const done = acked();
        if (dice < 0.1 && done.length) {
          // An exact repeat: the same payout, never a second one.
          const old = done[Math.floor(Math.random() * done.length)] as Req;
          tasks.push({
            run: async () => {
              const r = await send(client, '/v1/payout', old.body, violations);
              if (!r) return;
              totals.repeats++;
              recordPayout(old, r, 'repeat');
            },
          });
        } else if (dice < 0.15 && done.length) {
          // The same request_id with another body: 409, nothing changes.
          const old = done[Math.floor(Math.random() * done.length)] as Req;
          tasks.push({
            run: async () => {
              const r = await send(client, '/v1/payout', { ...old.body, reference: `${String(old.body.reference)}-changed` }, violations);
              if (!r) return;
              if (r.status === 409) totals.conflicts++;
              else
                violations.push(
                  `changed repeat of ${old.request_id}: HTTP ${r.status}${'answer' in r ? ` ${r.answer.transaction_id} ${r.answer.status}` : ''}`,
                );
            },
          });
        } else if (dice < 0.3) {
          // A cancel of an acknowledged SCHEDULED payout (some twice).
          const open = done.filter((r) => r.ack?.status === 'SCHEDULED' && !r.cancelled);
          if (open.length) {
            const target = open[Math.floor(Math.random() * open.length)] as Req;
            tasks.push(cancelTask(target, Math.random() < 0.5 ? 'request_id' : 'transaction_id'));
          }
        }
      }
      carried = [];

      // Shuffle lightly (resends stay early) and run on LANES lanes until the kill.
      const resends = carried.length;
      const queue = [...tasks.slice(0, resends), ...tasks.slice(resends).sort(() => Math.random() - 0.5)];
      let qi = 0;
      const lanes = Array.from({ length: LANES }, async () => {
        while (qi < queue.length && !stop.now) await (queue[qi++] as Task).run();
      });
      const sampler = (async () => {
        while (!stop.now) {
          const { available } = await usdBalance(st, account);
          minAvailable = Math.min(minAvailable, available);
          samples++;
          await later(15);
        }
      })();
      const target = Math.max(1, Math.floor(queue.length * (0.2 + Math.random() * 0.5)));
      const deadline = Date.now() + 30_000;
      while (answeredNow < target && qi < queue.length && Date.now() < deadline) await later(2);
      const inflightAtKill = inflight;
      await (gw as GatewayProcess).crash();
      totals.kills++;
      stop.now = true;
      await Promise.all(lanes);
      await sampler;
      const mid = inflightAtKill > 0 && answeredNow > 0;
      if (mid) totals.midFlight++;
      const unsent = queue.length - qi;

      // The gateway is down: the books as the kill left them.
      const books = await booksProblems(st, account, funded);
      const ledger = await verifyLedger(st.db);
      o.check(
        `round ${round}: killed with ${inflightAtKill} requests in flight${mid ? ' (mid-flight)' : ''}; ${books.line}; ledger verifies (${ledger.postings} postings)`,
        books.problems.length === 0 && ledger.ok,
        [...books.problems, ...ledger.problems.slice(0, 3)].join('; '),
      );
      // What a lost payout left behind, to compare with its resend's answer.
      const rows = new Map((await payoutRows(st, account)).map((r) => [r.request_id, r.transaction_id]));
      for (const c of next) if (c.kind === 'payout') c.req.stored_at_kill = rows.get(c.req.request_id);
      o.log(
        `  round ${round}: ${answeredNow} answers, ${next.length} cut off, ${unsent} not sent yet; ${rows.size} payouts stored; ${(asked() / 100).toFixed(2)} USD asked so far, ${(funded / 100).toFixed(2)} topped up`,
      );
      // What was cut off is resent next round; what never started is sent then (repeats are dropped).
      carried = [...next, ...queue.slice(qi).flatMap((t) => (t.carry ? [t.carry] : []))];
      if (round < o.rounds) topUp(ROUND_TOP_UP);
      gw = await startGateway(env);
    }

    // Recovery: every payout without an answer is resent (same request_id and body) until answered.
    const recovery = gatewayClient(gw.url, m, { timeout_ms: REQUEST_TIMEOUT_MS });
    const pending = [...book.values()].filter((r) => !r.ack);
    for (let i = 0; i < pending.length; i += LANES)
      await Promise.all(
        pending.slice(i, i + LANES).map(async (req) => {
          let r = await send(recovery, '/v1/payout', req.body, violations, req.lost_key);
          totals.resent++;
          if (r && busyKey(r)) {
            totals.keyBusy++;
            r = await send(recovery, '/v1/payout', req.body, violations);
          }
          if (!r) return void violations.push(`resend ${req.request_id}: no answer from a running gateway`);
          recordPayout(req, r, 'resend');
        }),
      );
    for (const c of carried)
      if (c.kind === 'cancel') {
        c.req.cancelSent = true;
        const r = await send(
          recovery,
          '/v1/cancelpayout',
          c.by === 'request_id' ? { request_id: c.req.request_id } : { transaction_id: c.req.ack?.transaction_id },
          violations,
        );
        if (r && 'answer' in r && r.answer.cancel_status === '1') {
          c.req.cancelled = true;
          totals.cancelsAcked++;
        } else if (c.req.madeDue && r && 'answer' in r && String(r.answer.error_message).startsWith('1012')) {
          c.req.tooLate = true;
          totals.cancelsTooLate++;
        } else
          violations.push(
            `resent cancel of ${c.req.request_id}: ${r ? ('answer' in r ? `cancel_status ${r.answer.cancel_status}` : `HTTP ${r.status}`) : 'no answer'}`,
          );
      }

    // Settle: SWIFT payouts and returns finish on the gateway's scheduler.
    const ts = Date.now();
    let rows = await payoutRows(st, account);
    const due = new Set([...book.values()].filter((r) => r.madeDue).map((r) => r.ack?.transaction_id));
    while (rows.some((r) => r.status === 'PROCESSING' || (r.status === 'SCHEDULED' && due.has(r.transaction_id))) && Date.now() - ts < SETTLE_TIMEOUT_MS) {
      await later(200);
      rows = await payoutRows(st, account);
    }
    const settle_s = (Date.now() - ts) / 1000;
    await (gw as GatewayProcess).stop();
    gw = null;

    const byRequest = new Map<string, Row[]>();
    for (const r of rows) byRequest.set(r.request_id, [...(byRequest.get(r.request_id) ?? []), r]);
    const acks = [...book.values()].filter((r) => r.ack);
    const missing = acks.filter((r) => (byRequest.get(r.request_id) ?? []).length === 0).map((r) => r.request_id);
    const wrongTx = acks.filter((r) => byRequest.get(r.request_id)?.[0]?.transaction_id !== r.ack?.transaction_id && !missing.includes(r.request_id));
    o.check(
      `every acknowledged payout exists with its transaction_id (${acks.length})`,
      missing.length + wrongTx.length === 0,
      [...missing, ...wrongTx.map((r) => r.request_id)].slice(0, 5).join(', '),
    );
    const twice = [...byRequest.entries()].filter(([, l]) => l.length > 1).map(([id]) => id);
    o.check('no request_id has two payouts', twice.length === 0, twice.slice(0, 5).join(', '));
    const strangers = rows.filter((r) => !book.has(r.request_id)).map((r) => r.transaction_id);
    o.check('no payout the clients never asked for', strangers.length === 0, strangers.slice(0, 5).join(', '));
    const unanswered = [...book.values()].filter((r) => !r.ack).map((r) => r.request_id);
    o.check(`every payout sent was answered after the resends (${book.size})`, unanswered.length === 0, unanswered.slice(0, 5).join(', '));
    o.check('no 5xx, no refusal of a valid body, and no contradicting answer', violations.length === 0, violations.slice(0, 5).join('; '));

    // Each payout's end, by what was asked and what was answered.
    const wrongEnd: string[] = [];
    const today = new Date().toISOString().slice(0, 10);
    for (const req of acks) {
      const row = byRequest.get(req.request_id)?.[0];
      if (!row || !req.ack) continue;
      const end = `${row.status}${row.failure_type ? ` ${row.failure_type}` : ''}`;
      const poor = row.status === 'FAILED' && row.failure_type === 'INSUFFICIENT_FUNDS';
      const allowed: Record<Kind, boolean> = {
        local: row.status === 'COMPLETED' || poor,
        swift: row.status === 'COMPLETED' || poor,
        invalid: row.status === 'FAILED' && (row.failure_type === 'INVALID_ACCOUNT' || poor),
        returned: row.status === 'FAILED' && (row.failure_type === 'RETURNED' || poor),
        // Made due (or past midnight UTC) a scheduled payout is dispatched and completes, unless a cancel came first.
        scheduled: req.madeDue
          ? row.status === 'COMPLETED' || row.status === 'CANCELLED' || poor
          : row.status === 'SCHEDULED' || row.status === 'CANCELLED' || poor || (tomorrow <= today && row.status === 'COMPLETED'),
      };
      if (!allowed[req.kind]) wrongEnd.push(`${req.kind} ${req.request_id} ended ${end}`);
      const a = req.ack;
      const agrees =
        a.status === row.status ||
        (a.status === 'PROCESSING' && (row.status === 'COMPLETED' || row.status === 'FAILED')) ||
        (a.status === 'SCHEDULED' && row.status !== 'FAILED');
      if (!agrees || (a.status === 'FAILED' && a.failure_type !== row.failure_type))
        wrongEnd.push(`${req.request_id} answered ${a.status} ${a.failure_type}, ended ${end}`);
      if (req.cancelled && row.status !== 'CANCELLED') wrongEnd.push(`${req.request_id}: cancel answered 1, ended ${end}`);
      if (req.tooLate && row.status === 'CANCELLED') wrongEnd.push(`${req.request_id}: cancel answered 1012 (dispatched), ended ${end}`);
      if (row.status === 'CANCELLED' && !req.cancelSent) wrongEnd.push(`${req.request_id} CANCELLED without a cancel`);
    }
    const dueRows = new Set(acks.filter((r) => r.madeDue).map((r) => r.ack?.transaction_id));
    const open = rows.filter((r) => r.status === 'PROCESSING' || (r.status === 'SCHEDULED' && dueRows.has(r.transaction_id))).map((r) => r.transaction_id);
    o.check(
      `every payout is final but the SCHEDULED ones not made due (${settle_s.toFixed(1)} s to settle)`,
      open.length === 0,
      `${open.length} still PROCESSING or SCHEDULED after their dispatch was made due: ${open.slice(0, 3).join(', ')}`,
    );
    o.check('each payout ended as its kind and its answer say; acknowledged cancels CANCELLED', wrongEnd.length === 0, wrongEnd.slice(0, 5).join('; '));

    // One terminal event per final payout, none for an open one.
    const events = await st.db
      .selectFrom('events')
      .select(['object_id', 'event_type'])
      .where('account_id', '=', account)
      .where('event_type', 'like', 'payout.%')
      .execute();
    const eventsOf = new Map<string, string[]>();
    for (const e of events) eventsOf.set(e.object_id, [...(eventsOf.get(e.object_id) ?? []), e.event_type]);
    const want: Record<string, string> = { COMPLETED: 'payout.completed', FAILED: 'payout.failed', CANCELLED: 'payout.cancelled' };
    const badEvents = rows
      .filter((r) => (eventsOf.get(r.transaction_id) ?? []).join() !== (want[r.status] ?? ''))
      .map((r) => `${r.transaction_id} ${r.status}: [${(eventsOf.get(r.transaction_id) ?? []).join(', ')}]`);
    o.check(
      `one terminal event per final payout, none for a SCHEDULED one (${events.length} events)`,
      badEvents.length === 0,
      badEvents.slice(0, 3).join('; '),
    );

    const books = await booksProblems(st, account, funded);
    o.check(
      `the books after settling: ${books.line}; available never below zero (lowest of ${samples} samples during the load: ${(minAvailable / 100).toFixed(2)})`,
      books.problems.length === 0 && minAvailable >= 0,
      [...books.problems, ...(minAvailable < 0 ? [`available sampled at ${minAvailable}`] : [])].join('; '),
    );
    o.check(`more was asked than funded (${(asked() / 100).toFixed(2)} vs ${(funded / 100).toFixed(2)} USD)`, asked() > funded);
    const failedJobs = await st.db
      .selectFrom('scheduled_jobs')
      .select(['job_key', 'status', 'last_error'])
      .where('kind', 'like', 'payout.%')
      .where('status', 'in', ['failed', 'running'])
      .execute();
    o.check(
      'no payout job failed or left running',
      failedJobs.length === 0,
      failedJobs
        .slice(0, 3)
        .map((j) => `${j.job_key} ${j.status}: ${j.last_error}`)
        .join('; '),
    );
    const verified = await verifyLedger(st.db);
    o.check(`the ledger verifies (${verified.postings} postings, ${verified.payouts} payouts)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(`at least one kill landed mid-flight (${totals.midFlight} of ${totals.kills})`, totals.midFlight > 0);
    const count = (s: string) => rows.filter((x) => x.status === s).length;
    o.log(
      `  payout totals: ${rows.length} payouts (${count('COMPLETED')} COMPLETED, ${count('FAILED')} FAILED of which ${rows.filter((x) => x.failure_type === 'INSUFFICIENT_FUNDS').length} INSUFFICIENT_FUNDS, ${count('SCHEDULED')} SCHEDULED, ${count('CANCELLED')} CANCELLED); ${totals.answers} payout answers, ${totals.lost} cut off and ${totals.resent} resent (${totals.keyBusy} found their Idempotency-Key still leased to the killed attempt and went again with a new one), ${totals.repeats} repeats, ${totals.conflicts} conflicts (409), ${totals.cancelsAcked} cancels acknowledged, ${totals.cancelsTooLate} too late for a dispatch made due (${totals.cancelsLost} cut off); ${totals.madeDue} SCHEDULED payouts made due mid-run; ${totals.kills} kills (${totals.midFlight} mid-flight); ${(asked() / 100).toFixed(2)} USD asked, ${(funded / 100).toFixed(2)} topped up; ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    await fresh.drop();
  }
}
