// Payouts (issue 12): signed `POST /v1/payout` bodies under autocannon against a running
// gateway, each with a fresh request_id (UUID), LOCAL USD→USD over ACH, which the sandbox
// completes inside the request; then the outcome is read back from the database.
//
// 1. payout: one funded test account (far more than the run can spend) with payout pricing
//    (1% + 0.25 USD, fee_paid_by PAYER), amounts 1.00–50.00, a new beneficiary account
//    number each payout (every payout saves a beneficiary: the heavier path), CONNECTIONS
//    (16) connections for the run's duration after a warm-up. Verified: every answer is
//    HTTP 200 and COMPLETED; the COMPLETED payouts in the database are exactly the 200
//    answers (plus any request still in flight when autocannon stopped, found by its
//    request_id); available = funded − Σ(amount_payer_pays + fee_amount), both from the
//    answers and from the table, ≥ 0, nothing left reserved.
// 2. payout, balance runs out: another account funded for about half of what the first run
//    managed in this variant's (shorter) duration, every payout the same 10.00 (cost 10.35
//    with the fee), so exactly floor(funded / 10.35) complete and the rest are FAILED
//    INSUFFICIENT_FUNDS (HTTP 200); what is left is funded mod 10.35 (set to 10.34).
// Then verifyLedger over the whole database (the other scenarios' payments included).
//
// In `npm run bench` (bench/run.ts) on the gateway the other scenarios ran on; alone, on a
// fresh database and its own gateway (built first unless --no-build):
//   node --import tsx bench/payouts.ts [--duration 5] [--connections 16] [--quick]
// (DATABASE_URL=postgres://… for PostgreSQL: a fresh database on that server, dropped after).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { NotFoundError, signBody } from '../src/client/index.js';
import { openStore, type Store } from '../src/db/store.js';
import { accountBalances } from '../src/ledger/balances.js';
import { verifyLedger } from '../src/ledger/verify.js';
import type { CreatedMerchant } from '../src/merchants/service.js';
import { setPayoutPricing, topUp } from '../src/payouts/admin.js';
import {
  buildDist,
  createMerchant,
  type Engine,
  type FreshDatabase,
  freePort,
  freshDatabase,
  type GatewayProcess,
  gatewayClient,
  gatewayEnv,
  peakRssMiB,
  resetPeakRss,
  startGateway,
} from '../src/test/process.js';
import { cpuMeter } from './driver.js';

export const PAYOUT_PATH = '/v1/payout';
/** Fee configured on both accounts: 1% (half up) + 0.25 USD per LOCAL USD payout, paid by the payer. */
const FEE = { percent: '1', fixed: '0.25' };
/** Main run: far more than any run spends (100,000,000.00 USD). */
const MAIN_FUNDED_MINOR = 10_000_000_000;
/** Contention run: every payout 10.00, costing 10.35 with the fee. */
const CONTENTION_AMOUNT_MINOR = 1000;
const CONTENTION_COST_MINOR = CONTENTION_AMOUNT_MINOR + Math.floor((CONTENTION_AMOUNT_MINOR * 100 + 5000) / 10_000) + 25;
const SAMPLES = 5;
/** The payouts table is taken as settled once unchanged for this long after a run. */
const SETTLE_MS = 1_000;

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const usd = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/** One row of the report table, the fields run.ts's `Measured` has, plus the outcome. */
export interface PayoutRun {
  name: string;
  describe: string;
  connections: number;
  duration_s: number;
  /** HTTP answers a second (autocannon's average); in the first variant every one is a completed payout. */
  req_per_s: number;
  /** Payouts COMPLETED a second while measured (200 answers saying COMPLETED / duration). */
  payouts_per_s: number;
  p50_ms: number;
  p99_ms: number;
  p99_9_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  peak_rss_mib: number | null;
  gateway_cpu_pct: number;
  runner_cpu_pct: number;
  funded_minor: number;
  /** Every answer (warm-up included), by HTTP status and payout status / failure type. */
  answers: {
    http_200: number;
    completed: number;
    failed: Record<string, number>;
    other: Record<string, number>;
    /** Σ(amount_payer_pays + fee_amount) over the COMPLETED answers. */
    completed_cost_minor: number;
    /** Sent but not answered when autocannon stopped (in flight at the stop). */
    unanswered: number;
    samples: string[];
  };
  /** Seconds into the measured run of the last COMPLETED answer (the contention variant: when the money ran out). */
  last_completed_s?: number;
  verified: {
    /** COMPLETED / FAILED / … rows of the account in the payouts table, and their cost. */
    db: Record<string, { count: number; cost_minor: number }>;
    /** Of the unanswered request_ids, how many the gateway wrote anyway (and COMPLETED). */
    unanswered_written: number;
    unanswered_completed: number;
    available_minor: number;
    reserved_minor: number;
    expected_available_minor: number;
    /** Contention: floor(funded / cost); the main run: the COMPLETED answers. */
    expected_completed: number;
    problems: string[];
    ok: boolean;
  };
}

export interface PayoutsReport {
  engine: Engine;
  runs: PayoutRun[];
  ledger: { ok: boolean; payments: number; payouts: number; postings: number; problems: string[]; verify_s: number };
  /** Wall time of the whole scenario: accounts, both runs, settling, verification. */
  runtime_s: number;
  skipped?: string;
}

const ACH = { account_name: 'Bench Supplier LLC', bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' };

function payoutBody(m: CreatedMerchant, request_id: string, n: number, amount_minor: number): Record<string, unknown> {
  // A 12-digit account number per payout, starting with 7: never one of the sandbox's failing numbers (000111111116, 000222222226).
  const account_number = `7${String(n % 100_000_000_000).padStart(11, '0')}`;
  return {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    request_id,
    beneficiary: {
      entity_type: 'COMPANY',
      company_name: `Bench Supplier ${n}`,
      address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
      bank_details: { ...ACH, account_number },
    },
    payment_currency: 'USD',
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: `BENCH-${n}`,
    source_currency: 'USD',
    payment_amount: usd(amount_minor),
  };
}

interface Tally {
  sent: Set<string>;
  answers: PayoutRun['answers'];
  /** performance.now() of the last COMPLETED answer. */
  last_completed_at: number;
}

function newTally(): Tally {
  return {
    sent: new Set(),
    answers: { http_200: 0, completed: 0, failed: {}, other: {}, completed_cost_minor: 0, unanswered: 0, samples: [] },
    last_completed_at: 0,
  };
}

function record(t: Tally, status: number, body: string): void {
  const a = t.answers;
  let rec: Record<string, unknown> = {};
  try {
    rec = JSON.parse(body) as Record<string, unknown>;
  } catch {
    // not JSON: counted below by its HTTP status
  }
  if (typeof rec.request_id === 'string') t.sent.delete(rec.request_id);
  if (status !== 200) {
    a.other[`HTTP ${status}`] = (a.other[`HTTP ${status}`] ?? 0) + 1;
    if (a.samples.length < SAMPLES) a.samples.push(`HTTP ${status}: ${body.slice(0, 200)}`);
    return;
  }
  a.http_200++;
  if (rec.status === 'COMPLETED') {
    a.completed++;
    a.completed_cost_minor += Number(rec.amount_payer_pays) + Number(rec.fee_amount);
    t.last_completed_at = performance.now();
  } else if (rec.status === 'FAILED') {
    const k = String(rec.failure_type || '(none)');
    a.failed[k] = (a.failed[k] ?? 0) + 1;
  } else {
    const k = `status ${String(rec.status)}`;
    a.other[k] = (a.other[k] ?? 0) + 1;
    if (a.samples.length < SAMPLES) a.samples.push(`${k}: ${body.slice(0, 200)}`);
  }
}

function drive(
  url: string,
  m: CreatedMerchant,
  t: Tally,
  o: { connections: number; duration_s: number; amount: () => number; counter: { n: number } },
): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: o.connections,
    duration: o.duration_s,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: PAYOUT_PATH,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req: any) => {
          const request_id = randomUUID();
          t.sent.add(request_id);
          return { ...req, body: JSON.stringify(signBody(payoutBody(m, request_id, o.counter.n++, o.amount()), m.secret_key)) };
        },
        onResponse: (status: number, body: unknown) => record(t, status, String(body)),
      } as any,
    ],
  });
}

/**
 * Waits until the account's payouts stop changing: autocannon stops at the deadline without
 * waiting for the requests in flight, which the gateway still finishes (and commits).
 */
async function settle(store: Store, account_id: string): Promise<number> {
  const t0 = performance.now();
  let last = '';
  let since = performance.now();
  while (performance.now() - t0 < 30_000) {
    const r = await store.db
      .selectFrom('payouts')
      .select([sql<number>`count(*)`.as('n'), sql<number>`max(updated_at)`.as('at')])
      .where('account_id', '=', account_id)
      .executeTakeFirstOrThrow();
    const now = `${r.n}/${r.at}`;
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= SETTLE_MS) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return round((performance.now() - t0) / 1000, 2);
}

async function outcome(store: Store, account_id: string, unanswered: string[]) {
  await settle(store, account_id);
  const db = store.db;
  const rows = await db
    .selectFrom('payouts')
    .select(['status', 'failure_type', sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(amount_payer_pays + fee_amount), 0)`.as('cost')])
    .where('account_id', '=', account_id)
    .groupBy(['status', 'failure_type'])
    .execute();
  const byStatus: Record<string, { count: number; cost_minor: number }> = {};
  for (const r of rows) {
    const k = r.failure_type ? `${r.status} ${r.failure_type}` : r.status;
    byStatus[k] = { count: Number(r.n), cost_minor: Number(r.cost) };
  }
  let written = 0;
  let completed = 0;
  for (let i = 0; i < unanswered.length; i += 500) {
    const found = await db
      .selectFrom('payouts')
      .select('status')
      .where('account_id', '=', account_id)
      .where('request_id', 'in', unanswered.slice(i, i + 500))
      .execute();
    written += found.length;
    completed += found.filter((f) => f.status === 'COMPLETED').length;
  }
  const bal = (await accountBalances(db, account_id)).find((b) => b.currency === 'USD');
  return { byStatus, written, completed, available: bal?.available_minor ?? 0, reserved: bal?.payouts_reserved_minor ?? 0 };
}

async function fundedMerchant(env: NodeJS.ProcessEnv, store: Store, name: string, funded_minor: number): Promise<CreatedMerchant> {
  const m = createMerchant(env, name);
  const now = Date.now();
  await setPayoutPricing(store, { account_id: m.account_id, currency: 'USD', method: 'LOCAL', percent: FEE.percent, fixed: FEE.fixed }, now);
  await topUp(store, { account_id: m.account_id, currency: 'USD', amount: usd(funded_minor) }, now);
  return m;
}

/** Runs both variants against the running gateway `gw` (database `db`, environment `env` for the operator CLI). */
export async function benchPayouts(o: {
  gw: GatewayProcess;
  env: NodeJS.ProcessEnv;
  db: FreshDatabase;
  quick: boolean;
  duration_s: number;
  warmup_s: number;
  connections: number;
  log: (line: string) => void;
}): Promise<PayoutsReport> {
  const started = performance.now();
  const store = openStore(o.db.url, { poolSize: 2 });
  try {
    const runs: PayoutRun[] = [];
    const counter = { n: 0 };

    // ---- 1. one account with enough money: every payout completes ----
    const main = await fundedMerchant(o.env, store, 'bench payouts', MAIN_FUNDED_MINOR);
    const probe = await gatewayClient(o.gw.url, main)
      .post(PAYOUT_PATH, {})
      .then(
        () => null,
        (e: unknown) => e,
      );
    if (probe instanceof NotFoundError) {
      const skipped = `endpoint not available (404 from ${PAYOUT_PATH})`;
      o.log(`  payout: SKIPPED, ${skipped}`);
      return { engine: o.db.engine, runs, ledger: { ok: true, payments: 0, payouts: 0, postings: 0, problems: [], verify_s: 0 }, runtime_s: 0, skipped };
    }
    const mainTally = newTally();
    // 1.00–50.00, spread over the cents so the fee's rounding varies.
    const varied = () => 100 + Math.floor(Math.random() * 4901);
    if (o.warmup_s > 0) await drive(o.gw.url, main, mainTally, { connections: o.connections, duration_s: o.warmup_s, amount: varied, counter });
    const beforeMeasured = mainTally.answers.completed;
    resetPeakRss(o.gw.pid);
    let cpu = cpuMeter(o.gw.pid);
    let r = await drive(o.gw.url, main, mainTally, { connections: o.connections, duration_s: o.duration_s, amount: varied, counter });
    const mainRow = row(
      'payout',
      `POST /v1/payout, LOCAL USD→USD (ACH), completed in the request; fresh request_id and beneficiary each, 1.00–50.00 + fee 1% + 0.25; one funded account, ${o.connections} connections`,
      r,
      o,
      cpu(),
      peakRssMiB(o.gw.pid),
      MAIN_FUNDED_MINOR,
      mainTally,
      mainTally.answers.completed - beforeMeasured,
    );
    const mainUnanswered = [...mainTally.sent];
    mainRow.answers.unanswered = mainUnanswered.length;
    const mo = await outcome(store, main.account_id, mainUnanswered);
    mainRow.verified = check(mainRow, mo, 'main');
    runs.push(mainRow);
    logRun(o.log, mainRow);

    // ---- 2. the money runs out about halfway ----
    const contention_s = o.quick ? 3 : 10;
    const affordable = Math.max(50, Math.round((mainRow.payouts_per_s * contention_s) / 2));
    const funded = affordable * CONTENTION_COST_MINOR + (CONTENTION_COST_MINOR - 1);
    const poor = await fundedMerchant(o.env, store, 'bench payouts contention', funded);
    const poorTally = newTally();
    resetPeakRss(o.gw.pid);
    cpu = cpuMeter(o.gw.pid);
    const t0 = performance.now();
    r = await drive(o.gw.url, poor, poorTally, { connections: o.connections, duration_s: contention_s, amount: () => CONTENTION_AMOUNT_MINOR, counter });
    const poorRow = row(
      'payout, balance runs out',
      `the same payouts (10.00 each, 10.35 with the fee) from one account funded for ${affordable.toLocaleString('en')} of them (about half the run): the rest FAILED INSUFFICIENT_FUNDS, ${o.connections} connections`,
      r,
      o,
      cpu(),
      peakRssMiB(o.gw.pid),
      funded,
      poorTally,
      poorTally.answers.completed,
      contention_s,
    );
    poorRow.last_completed_s = poorTally.last_completed_at > 0 ? round((poorTally.last_completed_at - t0) / 1000, 2) : 0;
    const poorUnanswered = [...poorTally.sent];
    poorRow.answers.unanswered = poorUnanswered.length;
    const po = await outcome(store, poor.account_id, poorUnanswered);
    poorRow.verified = check(poorRow, po, 'contention', affordable);
    runs.push(poorRow);
    logRun(o.log, poorRow);

    const v0 = performance.now();
    const ledger = await verifyLedger(store.db);
    const verify_s = round((performance.now() - v0) / 1000, 2);
    const runtime_s = round((performance.now() - started) / 1000);
    o.log(
      `  verifyLedger: ${ledger.ok ? 'ok' : 'NOT ok'} (${ledger.payments.toLocaleString('en')} payments, ${ledger.payouts.toLocaleString('en')} payouts, ${ledger.postings.toLocaleString('en')} postings, ${verify_s} s)${ledger.ok ? '' : `: ${ledger.problems.slice(0, 3).join('; ')}`}; payouts scenario ${runtime_s} s in all`,
    );
    return {
      engine: o.db.engine,
      runs,
      ledger: {
        ok: ledger.ok,
        payments: ledger.payments,
        payouts: ledger.payouts,
        postings: ledger.postings,
        problems: ledger.problems.slice(0, 10),
        verify_s,
      },
      runtime_s,
    };
  } finally {
    await store.close();
  }
}

function row(
  name: string,
  describe: string,
  r: autocannon.Result,
  o: { connections: number; duration_s: number },
  cpu: { gateway_cpu_pct: number; runner_cpu_pct: number },
  peak: number,
  funded_minor: number,
  t: Tally,
  completedMeasured: number,
  duration_s = o.duration_s,
): PayoutRun {
  return {
    name,
    describe,
    connections: o.connections,
    duration_s,
    req_per_s: round(r.requests.average, 0),
    payouts_per_s: round(completedMeasured / duration_s, 0),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    p99_9_ms: (r.latency as unknown as Record<string, number>).p99_9 ?? r.latency.p99,
    requests: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    peak_rss_mib: round(peak, 0),
    ...cpu,
    funded_minor,
    answers: t.answers,
    verified: {
      db: {},
      unanswered_written: 0,
      unanswered_completed: 0,
      available_minor: 0,
      reserved_minor: 0,
      expected_available_minor: 0,
      expected_completed: 0,
      problems: [],
      ok: false,
    },
  };
}

function check(run: PayoutRun, got: Awaited<ReturnType<typeof outcome>>, variant: 'main' | 'contention', affordable = 0): PayoutRun['verified'] {
  const a = run.answers;
  const problems: string[] = [];
  const dbCompleted = got.byStatus.COMPLETED ?? { count: 0, cost_minor: 0 };
  const dbTotal = Object.values(got.byStatus).reduce((s, x) => s + x.count, 0);
  const expected_completed = variant === 'main' ? a.completed : affordable;
  const expected_available = run.funded_minor - dbCompleted.cost_minor;
  if (Object.keys(a.other).length > 0) problems.push(`answers other than HTTP 200 COMPLETED/FAILED: ${JSON.stringify(a.other)}`);
  if (variant === 'main' && a.http_200 !== a.completed)
    problems.push(`${a.http_200 - a.completed} HTTP 200 answers not COMPLETED: ${JSON.stringify(a.failed)}`);
  if (variant === 'contention') {
    const failedOther = Object.keys(a.failed).filter((k) => k !== 'INSUFFICIENT_FUNDS');
    if (failedOther.length > 0) problems.push(`failures other than INSUFFICIENT_FUNDS: ${JSON.stringify(a.failed)}`);
    if (dbCompleted.count !== affordable) problems.push(`${dbCompleted.count} COMPLETED in the table, ${affordable} affordable`);
    if ((a.failed.INSUFFICIENT_FUNDS ?? 0) === 0) problems.push('the balance never ran out');
  }
  // Every COMPLETED row is a COMPLETED answer, or a request autocannon stopped waiting for.
  if (dbCompleted.count !== a.completed + got.completed)
    problems.push(`${dbCompleted.count} COMPLETED in the table, ${a.completed} COMPLETED answers + ${got.completed} completed while in flight at the stop`);
  if (dbTotal !== a.http_200 + got.written)
    problems.push(`${dbTotal} payouts in the table, ${a.http_200} HTTP 200 answers + ${got.written} written while in flight`);
  if (got.completed === 0 && dbCompleted.cost_minor !== a.completed_cost_minor)
    problems.push(`Σ cost: ${dbCompleted.cost_minor} in the table, ${a.completed_cost_minor} in the answers`);
  if (got.available !== expected_available)
    problems.push(`available ${got.available}, expected funded − Σ(amount_payer_pays + fee_amount) = ${expected_available}`);
  if (got.available < 0) problems.push(`available ${got.available} < 0`);
  if (got.reserved !== 0) problems.push(`${got.reserved} still reserved`);
  if (variant === 'contention' && got.available !== CONTENTION_COST_MINOR - 1)
    problems.push(`available ${got.available}, expected ${CONTENTION_COST_MINOR - 1} (funded mod cost)`);
  return {
    db: got.byStatus,
    unanswered_written: got.written,
    unanswered_completed: got.completed,
    available_minor: got.available,
    reserved_minor: got.reserved,
    expected_available_minor: expected_available,
    expected_completed,
    problems,
    ok: problems.length === 0,
  };
}

function logRun(log: (line: string) => void, r: PayoutRun): void {
  const a = r.answers;
  const v = r.verified;
  const failed = Object.entries(a.failed)
    .map(([k, n]) => `${n} FAILED ${k}`)
    .join(', ');
  log(
    `  ${r.name}: ${r.payouts_per_s} payouts/s completed (${r.req_per_s} answers/s), p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, p99.9 ${r.p99_9_ms} ms, non-2xx ${r.non_2xx}, errors ${r.errors}; peak RSS ${r.peak_rss_mib} MiB; gateway CPU ${r.gateway_cpu_pct}%, runner CPU ${r.runner_cpu_pct}%`,
  );
  log(
    `    answers (warm-up included): ${a.completed} COMPLETED${failed ? `, ${failed}` : ''}${Object.keys(a.other).length ? `, other ${JSON.stringify(a.other)}` : ''}; ${a.unanswered} in flight at the stop (${v.unanswered_written} written)${r.last_completed_s !== undefined ? `; last COMPLETED at ${r.last_completed_s} s of ${r.duration_s}` : ''}`,
  );
  log(
    `    verified ${v.ok ? 'ok' : 'NOT ok'}: table ${JSON.stringify(Object.fromEntries(Object.entries(v.db).map(([k, x]) => [k, x.count])))}, available ${usd(v.available_minor)} = funded ${usd(r.funded_minor)} − ${usd(r.funded_minor - v.expected_available_minor)}, reserved ${usd(v.reserved_minor)}${v.ok ? '' : `; ${v.problems.join('; ')}`}`,
  );
  for (const s of a.samples) log(`    unexpected: ${s}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      quick: { type: 'boolean' },
      'no-build': { type: 'boolean' },
      workers: { type: 'string' },
    },
  });
  const quick = values.quick === true;
  const url = process.env.DATABASE_URL ?? '';
  const engine: Engine = /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
  const workers = Number(values.workers ?? process.env.TOLLGATE_WORKERS ?? (engine === 'postgres' ? os.cpus().length : 1));
  if (!values['no-build']) buildDist();
  const db = await freshDatabase(engine, 'bench_payout', engine === 'postgres' ? url : undefined);
  let gw: GatewayProcess | null = null;
  try {
    const env = gatewayEnv(db, await freePort(), { TOLLGATE_WORKERS: String(workers) });
    gw = await startGateway(env);
    const log = (l: string) => process.stdout.write(`${l}\n`);
    log(`engine ${engine}, ${workers} gateway process(es)${quick ? ', QUICK' : ''}`);
    const r = await benchPayouts({
      gw,
      env,
      db,
      quick,
      duration_s: Number(values.duration ?? (quick ? 5 : 20)),
      warmup_s: quick ? 1 : 3,
      connections: Number(values.connections ?? 16),
      log,
    });
    process.stdout.write(`${JSON.stringify(r)}\n`);
    if (!r.ledger.ok || r.runs.some((x) => !x.verified.ok)) process.exitCode = 1;
  } finally {
    if (gw) await gw.crash();
    await db.drop();
  }
}
