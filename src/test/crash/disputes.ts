// A dispute wave under kill -9 (docs/contract.md §22; issue 34 "Bad input and faults"). A test
// account with a dispute fee (`pricing dispute`) pays on LANES lanes with the sandbox's dispute
// cards (4000000000000259 fraudulent, 4000000000002685 product not received, 4000000000001976
// an inquiry) and some plain success cards, each authorise under its own Idempotency-Key. The
// gateway runs the worker, so the scheduler's `dispute.sandbox_open` jobs (200 ms after
// capture) open disputes while the round goes on; the clients find them with
// /v1/retrievalDispute by transaction_ids and answer each by a plan chosen when it is found:
// win or lose (0–2 evidence requests, some with a small PDF, then a submit whose text holds
// `winning_evidence` or `losing_evidence`) or accept (evidence, then /v1/acceptDispute), each
// request under its own Idempotency-Key. The process group is SIGKILLed at a random point of
// each round. While it is down: one dispute per payment, the ledger verifies. The keys the
// kill cut off are then released (as if their 60 s lease had run out), so the resends, with
// the SAME key and body, run the handler again; every request is resent until answered. At
// the end, after the sweeper and the decisions: every captured dispute-card payment has
// exactly one dispute (of its card's kind and reason, its captured amount, the account's
// fee), a plain card's none; each dispute ends as its answered requests say (an acknowledged
// accept stays accepted, an acknowledged submit is won or lost by its words), never refused
// after it was done; its evidence rows are exactly the pieces of its acknowledged requests
// (none for a refused one, none twice for a retried one); its events are one
// `dispute.created`, one `dispute.updated` per acknowledged evidence or submit request and one
// `dispute.closed` when closed, whose status is the final one; at most one `dispute_won`
// posting; verifyLedger and `tollgate ledger verify` are clean.
import { randomUUID } from 'node:crypto';
import {
  type DisputeAnswer,
  type DisputeEvidenceRequest,
  type EndpointName,
  type Endpoints,
  NetworkError,
  TollgateApiError,
  type TollgateClient,
} from '../../client/index.js';
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

export interface DisputeCrashOptions {
  /** Rounds, each killed at a random point. */
  rounds: number;
  /** New payments per round (dispute requests come on top). */
  payments: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const LANES = 10;
/** A round's new payments are spread over this long. */
const PAY_SPREAD_MS = 1_200;
const REQUEST_TIMEOUT_MS = 10_000;
const YEAR = String(new Date().getUTCFullYear() + 3);
/** The account's dispute fee (USD). */
const FEE = '15.00';
const FEE_MINOR = 1500;
/** The sandbox's dispute cards (docs/contract.md §22) and what each opens. */
const DISPUTE_CARDS: Record<string, { kind: 'chargeback' | 'inquiry'; reason: string; masked: string }> = {
  '4000000000000259': { kind: 'chargeback', reason: 'fraudulent', masked: '400000******0259' },
  '4000000000002685': { kind: 'chargeback', reason: 'product_not_received', masked: '400000******2685' },
  '4000000000001976': { kind: 'inquiry', reason: 'fraudulent', masked: '400000******1976' },
};
const PLAIN_CARD = '4242424242424242';
/** A small PDF (its first bytes are what the gateway reads). */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n').toString('base64');
const FINAL = new Set(['won', 'lost', 'accepted']);

type Kind = 'pay' | 'evidence' | 'submit' | 'accept';
type Fate = 'win' | 'lose' | 'accept';

interface Req {
  kind: Kind;
  key: string;
  endpoint: 'authorise' | 'disputeEvidence' | 'acceptDispute';
  body: Record<string, unknown>;
  /** Evidence pieces the request carries (text fields and files). */
  pieces: number;
  dispute?: string;
  card?: string;
  /** Answered with success: what it said. */
  ack?: { status: string; transaction_id?: string; evidence?: number };
  /** Answered with a refusal (4xx): its result and field. */
  refused?: string;
  /** A kill cut it off once. */
  cut?: boolean;
  /** Resends after a kill. */
  resends: number;
}

interface Plan {
  dispute_id: string;
  transaction_id: string;
  kind: string;
  fate: Fate;
  steps: Req[];
  /** The step to send next (steps.length: done). */
  next: number;
  busy: boolean;
}

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

interface DisputeDbRow {
  dispute_id: string;
  transaction_id: string;
  kind: string;
  reason: string;
  status: string;
  amount_minor: number;
  fee_minor: number;
  submitted_at: number | null;
}

async function readDisputes(st: Store, account_id: string) {
  const disputes = (await st.db.selectFrom('disputes').selectAll().where('account_id', '=', account_id).execute()).map(
    (d): DisputeDbRow => ({
      dispute_id: d.dispute_id,
      transaction_id: d.transaction_id,
      kind: d.kind,
      reason: d.reason,
      status: String(d.status),
      amount_minor: Number(d.amount_minor),
      fee_minor: Number(d.fee_minor),
      submitted_at: d.submitted_at === null ? null : Number(d.submitted_at),
    }),
  );
  const evidence = await st.db.selectFrom('dispute_evidence').select(['dispute_id', 'evidence_id']).execute();
  const events = await st.db.selectFrom('events').select(['object_id', 'event_type', 'payload']).where('event_type', 'like', 'dispute.%').execute();
  const won = await st.db.selectFrom('ledger_postings').select(['ref', 'reason']).where('reason', 'in', ['dispute', 'dispute_fee', 'dispute_won']).execute();
  return { disputes, evidence, events, postings: won };
}

async function readPayments(st: Store, account_id: string) {
  const payments = await st.db
    .selectFrom('payments')
    .select(['transaction_id', 'order_no', 'status', 'card_masked', 'captured_minor'])
    .where('account_id', '=', account_id)
    .execute();
  const open = await st.db
    .selectFrom('processor_attempts')
    .select(['object_id', 'operation', 'status', 'checks', 'next_check_at', 'last_error'])
    .where('account_id', '=', account_id)
    .where('status', 'in', ['sent', 'unknown', 'pending'])
    .execute();
  return {
    payments: payments.map((p) => ({ ...p, status: String(p.status), captured_minor: Number(p.captured_minor) })),
    openAttempts: open.length,
    open: open.map(
      (a) =>
        `${a.operation} ${a.object_id} ${a.status} (${a.checks} checks, next in ${Math.round((Number(a.next_check_at) - Date.now()) / 1000)} s${a.last_error ? `: ${a.last_error}` : ''})`,
    ),
  };
}

/** [] when no payment has two disputes and none has a dispute it should not (a plain card, or not captured). */
function disputeProblems(disputes: DisputeDbRow[]): string[] {
  const byTx = new Map<string, string[]>();
  for (const d of disputes) byTx.set(d.transaction_id, [...(byTx.get(d.transaction_id) ?? []), d.dispute_id]);
  return [...byTx.entries()].filter(([, ids]) => ids.length > 1).map(([tx, ids]) => `payment ${tx} has ${ids.length} disputes: ${ids.join(', ')}`);
}

export async function disputeCrash(engine: Engine, o: DisputeCrashOptions): Promise<void> {
  o.log(`\n# a dispute wave during kill -9 on ${engine}: ${o.rounds} rounds of ${o.payments} payments, and their disputes answered`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashdp');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_WORKER: '1',
      TOLLGATE_SANDBOX_DISPUTE_DELAY_MS: '200',
      // A payment a kill left at the processor is due to the sweeper 2 s after it was sent.
      TOLLGATE_PROCESSOR_TIMEOUT_MS: '2000',
    });
    const m = createMerchant(env, 'crash-disputes');
    const account = m.account_id;
    const fee = cli(env, ['pricing', 'dispute', '--account', account, '--currency', 'USD', '--fee', FEE]);
    if (fee.status !== 0) throw new Error(`tollgate pricing dispute: ${(fee.stderr || fee.stdout).trim().slice(0, 300)}`);
    gw = await startGateway(env);
    store = openStore(fresh.url);
    const st = store;
    const client: TollgateClient = gatewayClient(gw.url, m, { retry: { max_retries: 0 }, timeout_ms: REQUEST_TIMEOUT_MS });
    const violations: string[] = [];
    const violation = (v: string) => {
      if (violations.length < 50) violations.push(v);
    };

    const pays: Req[] = [];
    const plans = new Map<string, Plan>();
    /** transaction_id → its plan's dispute, once found. */
    const found = new Map<string, string>();
    const totals = { jobsReleased: 0, answers: 0, lost: 0, resent: 0, busy: 0, released: 0, kills: 0, midFlight: 0, polls: 0, declined: 0 };
    let n = 0;
    const t0 = Date.now();

    type Outcome<K extends EndpointName> = { ok: Endpoints[K]['answer']; replayed: boolean } | { refused: TollgateApiError } | null;
    async function call<K extends EndpointName>(endpoint: K, body: Endpoints[K]['request'], key?: string): Promise<Outcome<K>> {
      try {
        const r = await client.call(endpoint, body, key ? { idempotency_key: key } : {});
        return { ok: r.answer, replayed: r.replayed };
      } catch (e) {
        if (e instanceof TollgateApiError) return { refused: e };
        if (!(e instanceof NetworkError)) violation(`${endpoint}: ${(e as Error).name}: ${(e as Error).message.slice(0, 200)}`);
        return null;
      }
    }

    const newPay = (): Req => {
      const plain = Math.random() < 0.25;
      const card = plain ? PLAIN_CARD : pick(Object.keys(DISPUTE_CARDS));
      const req: Req = {
        kind: 'pay',
        key: randomUUID(),
        endpoint: 'authorise',
        card,
        pieces: 0,
        resends: 0,
        body: {
          order_no: `D${n++}-${randomUUID().slice(0, 8)}`,
          currency: 'USD',
          amount: `${1 + Math.floor(Math.random() * 300)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`,
          card,
          expiration_month: '12',
          expiration_year: YEAR,
          security_code: '123',
        },
      };
      pays.push(req);
      return req;
    };

    /** A plan for a dispute just found: 0–2 evidence requests, then a submit (win, lose) or an accept. */
    const planFor = (dispute_id: string, transaction_id: string, kind: string): Plan => {
      const fate: Fate = pick(['win', 'win', 'lose', 'lose', 'accept'] as const);
      const word = fate === 'win' ? 'winning_evidence' : fate === 'lose' ? 'losing_evidence' : 'no defence';
      const steps: Req[] = [];
      const evidenceReq = (fields: Partial<DisputeEvidenceRequest>, kind: Kind): Req => {
        const body = { dispute_id, ...fields } as Record<string, unknown>;
        const pieces =
          Object.entries(fields).filter(([f, v]) => f !== 'submit' && f !== 'files' && typeof v === 'string' && v !== '').length + (fields.files?.length ?? 0);
        return { kind, key: randomUUID(), endpoint: 'disputeEvidence', body, pieces, dispute: dispute_id, resends: 0 };
      };
      const withPdf = () =>
        Math.random() < 0.35 ? { files: [{ field: 'receipt' as const, file_name: `receipt-${steps.length}.pdf`, content_base64: PDF }] } : {};
      const extra = Math.floor(Math.random() * 3);
      let worded = false;
      for (let i = 0; i < extra; i++) {
        const text = Math.random() < 0.7;
        const files = withPdf();
        if (!text && !files.files) {
          steps.push(evidenceReq({ customer_communication: `mail ${i} with the shopper: ${word}` }, 'evidence'));
          worded = true;
        } else {
          steps.push(evidenceReq({ ...(text ? { uncategorized_text: `note ${i}: ${word}` } : {}), ...files }, 'evidence'));
          worded ||= text;
        }
      }
      if (fate === 'accept')
        steps.push({ kind: 'accept', key: randomUUID(), endpoint: 'acceptDispute', body: { dispute_id }, pieces: 0, dispute: dispute_id, resends: 0 });
      else if (worded && Math.random() < 0.4)
        steps.push(evidenceReq({ submit: '1' }, 'submit')); // the words were given before: a bare submit
      else steps.push(evidenceReq({ product_description: `what was sold, and why: ${word}`, ...withPdf(), submit: '1' }, 'submit'));
      return { dispute_id, transaction_id, kind, fate, steps, next: 0, busy: false };
    };

    /** Records an answer; false when the request is still without one (sent again later). */
    const record = (req: Req, r: Outcome<EndpointName>, where: string): boolean => {
      if (!r) return false;
      const what = `${where} ${req.kind} ${req.dispute ?? req.body.order_no}`;
      if ('refused' in r) {
        const e = r.refused;
        // The key is still leased by a run the kill cut off: ask again later.
        if (e.http_status === 409 && e.error_field === 'Idempotency-Key') {
          totals.busy++;
          return false;
        }
        if (e.http_status >= 500) {
          violation(`${what}: HTTP ${e.http_status} ${e.message.slice(0, 200)}`);
          return false;
        }
        totals.answers++;
        if (req.ack) violation(`${what}: refused (${e.return_message} ${e.error_field}) after it was answered ${req.ack.status}`);
        req.refused = `${e.http_status} ${e.return_message} ${e.error_field}: ${e.error_message.slice(0, 160)}`;
        violation(`${what}${req.cut ? ' (resent after a kill)' : ''}: refused ${req.refused}`);
        return true;
      }
      totals.answers++;
      if (req.kind === 'pay') {
        const a = r.ok as Endpoints['authorise']['answer'];
        const ok = a.result_info === '0000:Success';
        if (!ok) totals.declined++;
        if (!ok && !req.cut) violation(`${what}: ${a.result_info} without a kill`);
        if (req.ack?.transaction_id && ok && req.ack.transaction_id !== a.transaction_id)
          violation(`${what}: answered ${a.transaction_id}, earlier ${req.ack.transaction_id}`);
        req.ack = { status: ok ? 'success' : a.result_info, transaction_id: a.transaction_id };
        return true;
      }
      const d = r.ok as DisputeAnswer;
      if (d.dispute_id !== req.dispute) violation(`${what}: answered dispute ${d.dispute_id}`);
      const want =
        req.kind === 'accept' ? ['accepted'] : req.kind === 'submit' ? ['under_review', 'won', 'lost'] : ['needs_response', 'warning_needs_response'];
      if (!want.includes(d.status)) violation(`${what}: answered ${d.status}`);
      if (req.refused) violation(`${what}: answered ${d.status} after it was refused (${req.refused})`);
      req.ack = { status: d.status, evidence: d.evidence.length };
      return true;
    };

    // ---- the lanes: resends first, then the next step of a found dispute, a poll, a new payment.
    interface RoundState {
      stop: boolean;
      paysLeft: number;
      carried: Req[];
      cutNow: Req[];
      inflight: number;
      inflightDisputes: number;
      answered: number;
      lastPoll: number;
      polling: boolean;
      /** Payments are spread over PAY_SPREAD_MS from here, so disputes open while the round goes on. */
      started: number;
      paysSent: number;
      paysPlanned: number;
    }
    const planOf = (req: Req) => (req.dispute ? plans.get(req.dispute) : undefined);
    const poll = async (s: RoundState): Promise<void> => {
      const wanted = pays
        .filter((p) => p.ack?.status === 'success' && p.card !== PLAIN_CARD && !found.has(p.ack.transaction_id as string))
        .map((p) => p.ack?.transaction_id as string)
        .slice(0, 100);
      s.lastPoll = Date.now();
      if (wanted.length === 0) return;
      s.polling = true;
      const r = await call('retrieveDisputes', { transaction_ids: wanted });
      s.polling = false;
      if (!r) return;
      if ('refused' in r) {
        if (r.refused.http_status >= 500 || r.refused.http_status !== 409) violation(`retrievalDispute: ${r.refused.message.slice(0, 200)}`);
        return;
      }
      totals.polls++;
      for (const d of r.ok.disputes) {
        if (d.query_result !== '1') continue;
        const had = found.get(d.transaction_id);
        if (had && had !== d.dispute_id) violation(`payment ${d.transaction_id}: disputes ${had} and ${d.dispute_id}`);
        if (had) continue;
        found.set(d.transaction_id, d.dispute_id);
        plans.set(d.dispute_id, planFor(d.dispute_id, d.transaction_id, d.kind));
      }
    };
    const send = async (s: RoundState, req: Req, resend: boolean): Promise<void> => {
      const dispute = req.kind !== 'pay';
      s.inflight++;
      if (dispute) s.inflightDisputes++;
      const r = await call(req.endpoint, req.body as never, req.key);
      s.inflight--;
      if (dispute) s.inflightDisputes--;
      if (resend) {
        totals.resent++;
        req.resends++;
      }
      const plan = planOf(req);
      if (record(req, r, resend ? 'resend' : 'first')) {
        s.answered++;
        if (plan) {
          plan.next++;
          if (req.refused) plan.next = plan.steps.length; // the rest of its plan would be refused too
          plan.busy = false;
        }
        return;
      }
      if (!r) totals.lost++;
      req.cut ||= r === null;
      if (!s.stop) await later(100); // a key still leased: try again shortly
      (s.stop ? s.cutNow : s.carried).push(req);
    };
    const lane = async (s: RoundState): Promise<void> => {
      while (!s.stop) {
        const resend = s.carried.shift();
        if (resend) {
          await send(s, resend, true);
          continue;
        }
        const plan = [...plans.values()].find((p) => !p.busy && p.next < p.steps.length);
        if (plan) {
          plan.busy = true;
          await send(s, plan.steps[plan.next] as Req, false);
          continue;
        }
        if (!s.polling && Date.now() - s.lastPoll > 150) {
          await poll(s);
          await later(1); // a poll with nothing to ask for sends nothing: never spin without yielding to timers
          continue;
        }
        if (s.paysLeft > 0 && s.paysSent < s.paysPlanned * Math.min(1, (Date.now() - s.started) / PAY_SPREAD_MS)) {
          s.paysLeft--;
          s.paysSent++;
          await send(s, newPay(), false);
          continue;
        }
        await later(20);
      }
    };
    const fresh_round = (carried: Req[], paysLeft: number): RoundState => ({
      stop: false,
      paysLeft,
      carried,
      cutNow: [],
      inflight: 0,
      inflightDisputes: 0,
      answered: 0,
      lastPoll: 0,
      polling: false,
      started: Date.now(),
      paysSent: 0,
      paysPlanned: paysLeft,
    });

    let carried: Req[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const s = fresh_round(carried, o.payments);
      const lanes = Array.from({ length: LANES }, () => lane(s));
      // The kill lands 0.3–1.5 s after the round's first answer (a cold start answers slowly),
      // while a dispute request is in flight if one comes within 2 s more.
      const warm = Date.now() + 15_000;
      while (s.answered === 0 && Date.now() < warm) await later(5);
      const killAt = Date.now() + 300 + Math.random() * 1200;
      while (Date.now() < killAt) await later(5);
      const orBy = Date.now() + 2_000;
      while (s.inflightDisputes === 0 && Date.now() < orBy) await later(1);
      const inflight = s.inflight;
      const inflightDisputes = s.inflightDisputes;
      s.stop = true;
      await (gw as GatewayProcess).crash();
      totals.kills++;
      await Promise.all(lanes);
      if (inflightDisputes > 0) totals.midFlight++;
      // Unsent steps of busy plans (a lane stopped before sending) are free again.
      for (const p of plans.values()) p.busy = s.cutNow.some((r) => r.dispute === p.dispute_id);

      // The gateway is down: the books as the kill left them.
      const books = await readDisputes(st, account);
      const problems = disputeProblems(books.disputes);
      const ledger = await verifyLedger(st.db);
      o.check(
        `round ${round}: killed with ${inflight} requests in flight (${inflightDisputes} dispute requests); ${books.disputes.length} disputes, ${books.evidence.length} evidence rows; one dispute per payment; ledger verifies (${ledger.postings} postings)`,
        problems.length === 0 && ledger.ok,
        [...problems, ...ledger.problems].slice(0, 5).join('; '),
      );
      // Their keys' leases (60 s) made due: the resends run the handler again under the same key.
      const released = await st.transaction((tx) =>
        tx.updateTable('idempotency_keys').set({ locked_until: 0 }).where('status', '=', 'started').returning('id').execute(),
      );
      totals.released += released.length;
      // The dispute jobs the kill caught running: their leases (60 s) made due too, so the restarted gateway runs them again at once.
      const jobs = await st.transaction((tx) =>
        tx
          .updateTable('scheduled_jobs')
          .set({ lease_until: 0 })
          .where('status', '=', 'running')
          .where('kind', 'like', 'dispute.%')
          .returning('job_key')
          .execute(),
      );
      totals.jobsReleased += jobs.length;
      o.log(
        `  round ${round}: ${s.answered} answers, ${s.cutNow.length} cut off; ${plans.size} disputes found; ${released.length} Idempotency-Keys and ${jobs.length} running dispute jobs released`,
      );
      carried = [...s.cutNow, ...s.carried];
      gw = await startGateway(env);
    }

    // ---- recovery, no more kills: resend everything unanswered, find every dispute, finish every plan.
    const expectDisputes = async () => {
      const { payments } = await readPayments(st, account);
      return payments.filter((p) => p.captured_minor > 0 && Object.values(DISPUTE_CARDS).some((c) => c.masked === p.card_masked));
    };
    {
      const s = fresh_round(carried, 0);
      const lanes = Array.from({ length: LANES }, () => lane(s));
      const by = Date.now() + 30_000;
      for (;;) {
        await later(100);
        const unanswered = [...pays, ...[...plans.values()].flatMap((p) => p.steps)].some((r) => !r.ack && !r.refused && (r.kind === 'pay' || r.cut));
        const plansLeft = [...plans.values()].some((p) => p.next < p.steps.length);
        const disputed = await expectDisputes();
        const unfound = disputed.filter((p) => !found.has(p.transaction_id));
        if ((!unanswered && !plansLeft && unfound.length === 0 && s.carried.length === 0 && s.inflight === 0) || Date.now() > by) break;
      }
      s.stop = true;
      await Promise.all(lanes);
    }
    const unanswered = [...pays, ...[...plans.values()].flatMap((p) => p.steps.slice(0, p.next))].filter((r) => !r.ack && !r.refused);
    const unfinished = [...plans.values()].filter((p) => p.next < p.steps.length);
    o.check(
      `every request sent was answered and every dispute found was answered by its plan (${pays.length} payments, ${plans.size} disputes)`,
      unanswered.length === 0 && unfinished.length === 0,
      [
        ...unanswered.map((r) => `${r.kind} ${r.dispute ?? r.body.order_no} unanswered`),
        ...unfinished.map((p) => `${p.dispute_id} at step ${p.next} of ${p.steps.length}`),
      ]
        .slice(0, 5)
        .join(', '),
    );

    // What a kill left at the processor is settled by the sweeper; every submitted dispute is
    // decided. 60 s as the other parts: an attempt the kill left open is asked about at its
    // deadline, and again after 5, 10, 20 s while the processor does not answer in time.
    let settled = await readPayments(st, account);
    let books = await readDisputes(st, account);
    const decideBy = Date.now() + 60_000;
    while (
      (settled.openAttempts > 0 || settled.payments.some((p) => p.status === 'processing') || books.disputes.some((d) => d.status === 'under_review')) &&
      Date.now() < decideBy
    ) {
      await later(250);
      settled = await readPayments(st, account);
      books = await readDisputes(st, account);
    }
    o.check(
      'every payment a kill left at the processor is settled, every submitted dispute decided',
      settled.openAttempts === 0 && !settled.payments.some((p) => p.status === 'processing') && !books.disputes.some((d) => d.status === 'under_review'),
      `${settled.openAttempts} attempts open, ${settled.payments.filter((p) => p.status === 'processing').length} payments processing, ${books.disputes.filter((d) => d.status === 'under_review').length} disputes under review after 60 s; ${settled.open.slice(0, 3).join('; ')}`,
    );
    // Disputes still to open (a capture acknowledged late) would open after the stop: none may be missing.
    const disputed = await expectDisputes();
    await (gw as GatewayProcess).stop();
    gw = null;
    books = await readDisputes(st, account);

    // One dispute per captured dispute-card payment, of its card's kind and reason, amount and fee; none for a plain card.
    const byTx = new Map<string, DisputeDbRow[]>();
    for (const d of books.disputes) byTx.set(d.transaction_id, [...(byTx.get(d.transaction_id) ?? []), d]);
    const paymentOf = new Map(settled.payments.map((p) => [p.transaction_id, p]));
    const disputedTx = new Set(disputed.map((p) => p.transaction_id));
    const wrong: string[] = [];
    for (const p of disputed) {
      const ds = byTx.get(p.transaction_id) ?? [];
      const card = Object.values(DISPUTE_CARDS).find((c) => c.masked === p.card_masked);
      if (ds.length !== 1) wrong.push(`payment ${p.transaction_id} (${p.card_masked}) has ${ds.length} disputes`);
      const d = ds[0];
      if (d && card && (d.kind !== card.kind || d.reason !== card.reason))
        wrong.push(`${d.dispute_id}: ${d.kind} ${d.reason}, card ${card.kind} ${card.reason}`);
      if (d && d.amount_minor !== p.captured_minor) wrong.push(`${d.dispute_id}: amount ${d.amount_minor}, captured ${p.captured_minor}`);
      if (d && d.fee_minor !== FEE_MINOR) wrong.push(`${d.dispute_id}: fee ${d.fee_minor}, the account's ${FEE_MINOR}`);
    }
    for (const d of books.disputes) {
      const p = paymentOf.get(d.transaction_id);
      if (!p || !disputedTx.has(p.transaction_id))
        wrong.push(
          `${d.dispute_id} of payment ${d.transaction_id} (${p ? `${p.card_masked} ${p.status}` : 'not this account'}) that is no captured dispute-card payment`,
        );
    }
    o.check(
      `every captured dispute-card payment has exactly one dispute of its card's kind, its amount and the account's fee, and no other payment has one (${disputed.length} payments, ${books.disputes.length} disputes)`,
      disputed.length > 0 && wrong.length === 0,
      disputed.length === 0 ? 'no dispute-card payment was captured' : wrong.slice(0, 5).join('; '),
    );

    // Each dispute's end, evidence and events against what its clients were answered.
    const evidenceRows = new Map<string, number>();
    for (const e of books.evidence) evidenceRows.set(e.dispute_id, (evidenceRows.get(e.dispute_id) ?? 0) + 1);
    const events = new Map<string, { created: number; updated: number; closed: number; closedStatus: string[] }>();
    for (const ev of books.events) {
      const c = events.get(ev.object_id) ?? { created: 0, updated: 0, closed: 0, closedStatus: [] };
      if (ev.event_type === 'dispute.created') c.created++;
      else if (ev.event_type === 'dispute.updated') c.updated++;
      else if (ev.event_type === 'dispute.closed') {
        c.closed++;
        c.closedStatus.push(String((JSON.parse(ev.payload) as { data?: { status?: string } }).data?.status));
      }
      events.set(ev.object_id, c);
    }
    const wonPostings = new Map<string, number>();
    for (const p of books.postings) if (p.reason === 'dispute_won') wonPostings.set(p.ref, (wonPostings.get(p.ref) ?? 0) + 1);
    const states: string[] = [];
    const evidenceWrong: string[] = [];
    const eventsWrong: string[] = [];
    const rows = new Map(books.disputes.map((d) => [d.dispute_id, d]));
    let retried = 0;
    for (const plan of plans.values()) {
      const d = rows.get(plan.dispute_id);
      if (!d) {
        states.push(`${plan.dispute_id} answered by retrievalDispute is not stored`);
        continue;
      }
      const acked = plan.steps.filter((r) => r.ack);
      retried += plan.steps.filter((r) => r.cut).length;
      const last = plan.steps[plan.steps.length - 1] as Req;
      const want = last.ack ? (last.kind === 'accept' ? 'accepted' : plan.fate === 'win' ? 'won' : 'lost') : null;
      if (want && d.status !== want) states.push(`${d.dispute_id}: ${last.kind} (${plan.fate}) acknowledged, now ${d.status}`);
      if (!want && FINAL.has(d.status)) states.push(`${d.dispute_id}: ${d.status}, its ${last.kind} was not acknowledged (${last.refused ?? 'no answer'})`);
      const pieces = acked.reduce((a, r) => a + r.pieces, 0);
      const got = evidenceRows.get(d.dispute_id) ?? 0;
      if (got !== pieces) {
        const refused = plan.steps.filter((r) => r.refused).map((r) => `${r.kind} refused ${r.refused}`);
        const cut = plan.steps.filter((r) => r.cut).map((r) => `${r.kind} of ${r.pieces} cut off and resent ${r.resends}×`);
        evidenceWrong.push(`${d.dispute_id}: ${got} evidence rows, ${pieces} pieces acknowledged (${[...cut, ...refused].join(', ') || 'no kill'})`);
      }
      const c = events.get(d.dispute_id) ?? { created: 0, updated: 0, closed: 0, closedStatus: [] };
      const updates = acked.filter((r) => r.kind === 'evidence' || r.kind === 'submit').length;
      const closed = FINAL.has(d.status) ? 1 : 0;
      if (c.created !== 1 || c.updated !== updates || c.closed !== closed || (closed && c.closedStatus[0] !== d.status))
        eventsWrong.push(
          `${d.dispute_id} (${d.status}): ${c.created} created, ${c.updated} updated, ${c.closed} closed [${c.closedStatus.join(', ')}]; want 1, ${updates}, ${closed}`,
        );
      const wonN = wonPostings.get(d.dispute_id) ?? 0;
      if (wonN !== (d.status === 'won' && d.kind === 'chargeback' ? 1 : 0))
        states.push(`${d.dispute_id} (${d.kind}, ${d.status}): ${wonN} dispute_won postings`);
    }
    for (const d of books.disputes) if (!plans.has(d.dispute_id)) states.push(`${d.dispute_id} never found by retrievalDispute`);
    o.check(
      `each dispute ends as its acknowledged requests say: accepted stays accepted, a submit is won or lost by its words, one final state, one dispute_won at most (${plans.size} disputes)`,
      states.length === 0,
      states.slice(0, 5).join('; '),
    );
    o.check(
      `each dispute's evidence rows are the pieces of its acknowledged requests, none for a refused one, none twice for a retried one (${books.evidence.length} rows, ${retried} dispute requests resent after a kill)`,
      evidenceWrong.length === 0,
      evidenceWrong.slice(0, 5).join('; '),
    );
    o.check(
      `each dispute's events: one dispute.created, one dispute.updated per acknowledged evidence or submit, one dispute.closed with its final status (${books.events.length} events)`,
      eventsWrong.length === 0,
      eventsWrong.slice(0, 5).join('; '),
    );
    const jobsLeft = await st.db
      .selectFrom('scheduled_jobs')
      .select(['job_key', 'status', 'last_error'])
      .where('kind', 'like', 'dispute.sandbox%')
      .where('status', '!=', 'done')
      .execute();
    o.check(
      'every dispute job (open, decide) is done, none failed or left running',
      jobsLeft.length === 0,
      jobsLeft
        .slice(0, 3)
        .map((j) => `${j.job_key} ${j.status} ${j.last_error}`)
        .join('; '),
    );
    o.check('no 5xx, no refusal and no contradicting answer', violations.length === 0, violations.slice(0, 5).join('; '));
    const verified = await verifyLedger(st.db);
    o.check(`the ledger verifies (${verified.postings} postings, ${verified.disputes} disputes)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(`at least one kill landed with dispute requests in flight (${totals.midFlight} of ${totals.kills})`, totals.midFlight > 0);
    const statuses = new Map<string, number>();
    for (const d of books.disputes) statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
    o.log(
      `  dispute totals: ${pays.length} payments (${totals.declined} not approved after a kill), ${books.disputes.length} disputes (${[...statuses].map(([k, v]) => `${v} ${k}`).join(', ')}), ${books.evidence.length} evidence rows; ${totals.answers} answers, ${totals.polls} searches, ${totals.lost} cut off and ${totals.resent} resent (${totals.released} keys and ${totals.jobsReleased} running jobs released, ${totals.busy} found busy); ${totals.kills} kills (${totals.midFlight} with dispute requests in flight); ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    await fresh.drop();
  }
}
