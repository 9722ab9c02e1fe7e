// `npm run test:faults [-- --engine sqlite|postgres] [-- --fault cut|readonly|full] [-- --quick] [-- --no-build]`
// (issue 17): storage faults under mixed load from 8 concurrent clients (load.ts: authorise
// through the client library, captures, refunds, payouts, generic-interface payments and
// balance reads), each request retried with its Idempotency-Key every ≤100 ms until answered.
//   PostgreSQL: `cut` (every connection dropped and refused for 3 s by a TCP proxy between
//   the gateway and the server, then accepted again) and `readonly` (the database made
//   read-only and the gateway's sessions terminated, then made writable and terminated
//   again), with the gateway in its cluster mode (one worker per core, at least 2).
//   SQLite: `full` (the data folder on an 8 MiB tmpfs the test mounts, filled by the load
//   until writes are refused, kept full 2 s, then remounted at 256 MiB).
// Each asserts: the gateway's processes are the same before and after (no exit, no
// restart); every request got an HTTP answer (no refused or dropped connection, no
// timeout); every 5xx is a 503 with Retry-After and the fault's result code (0503 database
// unavailable, 0507 storage unavailable; generic routes api_error/database_unavailable or
// storage_unavailable), and none came before the fault or for a request sent later than
// 1 s after it ended; the first authorise answered 200 within 1 s of the restore (a ninth
// client sends a new payment every ≤100 ms from the fault on, so the measure does not
// depend on the load's retried keys); /healthz 200 throughout, /readyz back to 200 (and
// 503 while PostgreSQL is unreachable); the fault logged per episode, not per request;
// every request answered in the end, no retry refused because the key is still held by
// the attempt the fault cut off (409), each answer the same when sent again under its
// Idempotency-Key; every acknowledged payment, capture, refund and payout in the database
// exactly once and as answered (queried directly); `tollgate ledger verify` clean; on
// SQLite `PRAGMA integrity_check` ok. Reports per fault and cycle the seconds of 503, the
// requests answered otherwise during the fault, the recovery time, and lost (= 0).
// Ends with "N passed, N failed"; exit code 1 when anything failed.
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  buildDist,
  cli,
  createMerchant,
  type Engine,
  type FreshDatabase,
  freePort,
  type GatewayProcess,
  gatewayEnv,
  PG_URL,
  pgReachable,
  processTree,
  startGateway,
} from '../process.js';
import { cutFault, type FaultName, fullFault, type Injector, readonlyFault, SkipFault } from './inject.js';
import { type Attempt, Load, type Op, WRITES } from './load.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', multiple: true },
    /** `cut`, `readonly` (PostgreSQL) or `full` (SQLite): only these faults (all by default; repeatable). */
    fault: { type: 'string', multiple: true },
    'no-build': { type: 'boolean' },
    quick: { type: 'boolean' },
  },
});
const QUICK = args.quick === true;
/** Fault-and-restore cycles per fault, on one gateway and database. */
const CYCLES = QUICK ? 1 : 2;
const CLIENTS = 8;
const WARM_MS = 2_000;
const AFTER_MS = QUICK ? 2_500 : 3_000;
const CUT_MS = 3_000;
const READONLY_MS = 3_000;
const FULL_HOLD_MS = 2_000;
const FULL_FILL_TIMEOUT_MS = 12_000;
/** Clients retry every ≤100 ms; the gateway must answer a payment within 1 s of the restore. */
const RETRY_MS = 100;
const RECOVERY_MS = 1_000;
const REQUEST_TIMEOUT_MS = 10_000;
const DRAIN_MS = 15_000;
/** Write requests replayed under their key after the run: all that met the fault, and this many others. */
const REPLAY_SAMPLE = 150;
/** The replays' own time limit (a gateway that stopped answering would otherwise hold the run). */
const REPLAY_MS = 30_000;
const CI = process.env.CI === 'true' || process.env.CI === '1';
const FAULTS: Record<FaultName, Engine> = { cut: 'postgres', readonly: 'postgres', full: 'sqlite' };

const results = { passed: 0, failed: 0 };
const log = (line: string) => process.stdout.write(`${line}\n`);
function check(name: string, ok: boolean, detail = ''): void {
  if (ok) results.passed++;
  else results.failed++;
  log(`${ok ? 'ok' : 'not ok'} - ${name}${detail ? ` (${detail})` : ''}`);
}

interface Spec {
  fault: FaultName;
  title: string;
  engine: Engine;
  /** Result codes (acquiring) and error codes (generic) a 503 may carry during this fault. */
  codes: string[];
  /** The code the fault must produce at least once. */
  must: string;
  /** /readyz must turn 503 during the fault. */
  readyDrops: boolean;
  make(): Promise<Injector>;
}

const SPECS: Spec[] = [
  {
    fault: 'cut',
    title: 'PostgreSQL connections cut and restored',
    engine: 'postgres',
    codes: ['0503', 'api_error/database_unavailable', 'api_error/overloaded'],
    must: '0503',
    readyDrops: true,
    make: () => cutFault(CUT_MS),
  },
  {
    fault: 'readonly',
    title: 'PostgreSQL read-only',
    engine: 'postgres',
    codes: ['0507', '0503', 'api_error/storage_unavailable', 'api_error/database_unavailable', 'api_error/overloaded'],
    must: '0507',
    readyDrops: false,
    make: () => readonlyFault(READONLY_MS),
  },
  {
    fault: 'full',
    title: 'SQLite disk full',
    engine: 'sqlite',
    codes: ['0507', '0503', 'api_error/storage_unavailable', 'api_error/database_unavailable', 'api_error/overloaded'],
    must: '0507',
    readyDrops: false,
    make: () => fullFault({ size: '8m', room: '256m', hold_ms: FULL_HOLD_MS, fill_timeout_ms: FULL_FILL_TIMEOUT_MS }),
  },
];

interface Cycle {
  begin: number;
  fault: number;
  restore: number;
  end: number;
}

/** /healthz and /readyz every 100 ms. */
class Probes {
  readonly samples: Array<{ t: number; path: string; status: number; error: string | null }> = [];
  private stopped = false;
  private done: Promise<void> = Promise.resolve();
  start(url: string): void {
    this.done = (async () => {
      while (!this.stopped) {
        await Promise.all(
          ['/healthz', '/readyz'].map(async (p) => {
            try {
              const r = await fetch(`${url}${p}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
              await r.arrayBuffer();
              this.samples.push({ t: Date.now(), path: p, status: r.status, error: null });
            } catch (e) {
              this.samples.push({ t: Date.now(), path: p, status: 0, error: String((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name) });
            }
          }),
        );
        await sleep(100);
      }
    })();
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

const s1 = (ms: number) => (ms / 1000).toFixed(1);
function tally(list: string[], max = 6): string {
  const m = new Map<string, number>();
  for (const x of list) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
}
const label = (a: Attempt) => `${a.kind} ${a.status}${a.code ? ` ${a.code}` : ''}${a.error ? ` ${a.error}` : ''}`;

interface DbRows {
  payments: Array<{ transaction_id: string; order_no: string; amount_minor: number; captured_minor: number; refunded_minor: number }>;
  refunds: Array<{ refund_reference_id: string; transaction_id: string }>;
  payouts: Array<{ transaction_id: string; request_id: string }>;
  /** Idempotency-Keys still `started` (their request never stored an answer) after the run. */
  started_keys: number;
  /** Processor attempts still open (the sweeper's to settle). */
  open_attempts: number;
}

async function readRows(db: FreshDatabase, account_id: string): Promise<DbRows> {
  const queries = {
    payments: 'SELECT transaction_id, order_no, amount_minor, captured_minor, refunded_minor FROM payments WHERE account_id = ?',
    refunds: 'SELECT refund_reference_id, transaction_id FROM refunds WHERE account_id = ?',
    payouts: 'SELECT transaction_id, request_id FROM payouts WHERE account_id = ?',
    started: "SELECT count(*) AS n FROM idempotency_keys WHERE status = 'started' AND scope LIKE ?",
    open: "SELECT count(*) AS n FROM processor_attempts WHERE account_id = ? AND status IN ('sent', 'unknown', 'pending')",
  };
  const scope = `%:${account_id}`;
  const num = <T extends Record<string, unknown>>(rows: T[]) =>
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k.endsWith('_minor') ? Number(v) : v])) as T);
  if (db.engine === 'sqlite') {
    const raw = new Database(db.file as string, { readonly: true });
    try {
      return {
        payments: num(raw.prepare(queries.payments).all(account_id) as DbRows['payments']),
        refunds: raw.prepare(queries.refunds).all(account_id) as DbRows['refunds'],
        payouts: raw.prepare(queries.payouts).all(account_id) as DbRows['payouts'],
        started_keys: Number((raw.prepare(queries.started).get(scope) as { n: number }).n),
        open_attempts: Number((raw.prepare(queries.open).get(account_id) as { n: number }).n),
      };
    } finally {
      raw.close();
    }
  }
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const q = async (s: string, v = account_id) => (await c.query(s.replace('?', '$1'), [v])).rows;
    return {
      payments: num(await q(queries.payments)),
      refunds: await q(queries.refunds),
      payouts: await q(queries.payouts),
      started_keys: Number((await q(queries.started, scope))[0]?.n ?? 0),
      open_attempts: Number((await q(queries.open))[0]?.n ?? 0),
    };
  } finally {
    await c.end();
  }
}

function integrityCheck(file: string): string {
  const raw = new Database(file, { readonly: true });
  try {
    return (raw.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
  } finally {
    raw.close();
  }
}

/** The fault's checks over what the load and the probes saw. Returns the lines of the report. */
function judgeAnswers(spec: Spec, load: Load, cycles: Cycle[], probes: Probes): string[] {
  const name = `${spec.title}`;
  /** `t` against the fault of cycle `of` (by default the cycle `t` falls in). */
  const at = (t: number, of?: Cycle) => {
    const c = of ?? cycles.find((x) => t < x.end) ?? (cycles[cycles.length - 1] as Cycle);
    return t < c.fault
      ? `${s1(c.fault - t)} s before the fault`
      : t <= c.restore
        ? `${s1(t - c.fault)} s into the fault`
        : `${s1(t - c.restore)} s after the restore`;
  };
  const all = load.attempts;
  const noAnswer = all.filter((a) => a.status === 0);
  check(
    `${name}: every request got an HTTP answer (${all.length} attempts; no refused or dropped connection, no timeout)`,
    noAnswer.length === 0,
    noAnswer.length ? `${noAnswer.length} without: ${tally(noAnswer.map(label))}; first ${at(noAnswer[0]?.start as number)}` : '',
  );
  const bad5xx = all.filter((a) => a.status >= 500 && !(a.status === 503 && a.retry_after && spec.codes.includes(a.code)));
  const kinds = [...new Map(bad5xx.map((a) => [label(a), a])).values()].slice(0, 3);
  check(
    `${name}: every 5xx is a 503 with Retry-After and a code of the fault (${spec.codes.join(', ')})`,
    bad5xx.length === 0,
    bad5xx.length
      ? `${bad5xx.length} others: ${tally(bad5xx.map((a) => `${label(a)}${a.retry_after ? '' : ' no Retry-After'}`))}; e.g. ${kinds
          .map((a) => `${label(a)} ${at(a.end)}: ${a.body ?? ''}`)
          .join(' / ')}`
      : '',
  );
  const codes503 = all.filter((a) => a.status === 503).map((a) => a.code);
  const seen5xx = all.filter((a) => a.status >= 500).map((a) => `${a.status} ${a.code}`);
  check(`${name}: writes refused with ${spec.must} during the fault`, codes503.includes(spec.must), `5xx seen: ${tally(seen5xx) || 'none'}`);
  const lines: string[] = [];
  let first = true;
  for (const c of cycles) {
    const inCycle = all.filter((a) => a.start >= c.begin && a.start < c.end);
    const early = inCycle.filter((a) => a.status >= 500 && a.end < c.fault);
    const late = inCycle.filter((a) => a.status >= 500 && a.start > c.restore + RECOVERY_MS);
    const of503 = inCycle.filter((a) => a.status === 503);
    const first503 = of503.reduce((m, a) => Math.min(m, a.end), Number.POSITIVE_INFINITY);
    const last503 = of503.reduce<Attempt | null>((m, a) => (m === null || a.end > m.end ? a : m), null);
    const span = last503 ? last503.end - first503 : 0;
    const slowest = of503.reduce((m, a) => Math.max(m, a.end - a.start), 0);
    const during = inCycle.filter((a) => a.end >= c.fault && a.end <= c.restore);
    const otherwise = during.filter((a) => a.status !== 503);
    const auth = inCycle.filter((a) => a.kind === 'authorise' && a.status === 200 && a.end >= c.restore).sort((a, b) => a.end - b.end)[0];
    const recovery = auth ? auth.end - c.restore : Number.POSITIVE_INFINITY;
    const retried = inCycle.filter((a) => a.retry && a.status < 500 && !a.busy && a.end >= c.restore).sort((a, b) => a.end - b.end)[0];
    const tag = cycles.length > 1 ? ` (cycle ${cycles.indexOf(c) + 1})` : '';
    check(`${name}${tag}: no 5xx before the fault`, early.length === 0, early.length ? tally(early.map(label)) : '');
    check(
      `${name}${tag}: no 5xx for a request sent later than ${RECOVERY_MS} ms after the restore`,
      late.length === 0,
      late.length ? `${late.length}: ${tally(late.map(label))}, the last sent ${s1(late.reduce((m, a) => Math.max(m, a.start), 0) - c.restore)} s after` : '',
    );
    check(
      `${name}${tag}: the first authorise answered 200 within ${RECOVERY_MS} ms of the restore`,
      recovery <= RECOVERY_MS,
      Number.isFinite(recovery) ? `${recovery} ms` : 'none answered 200 after the restore',
    );
    lines.push(
      `${first ? '' : '\n'}  ${spec.title}${tag}: fault held ${s1(c.restore - c.fault)} s; ${of503.length} answers 503 over ${s1(span)} s (${tally(of503.map((a) => a.code)) || 'none'}` +
        `${last503 ? `; the last ${at(last503.end, c)}, sent ${at(last503.start, c)}; slowest ${slowest} ms` : ''}); ` +
        `${otherwise.length} answered otherwise during the fault (${tally(otherwise.map(label)) || 'none'}); ` +
        `first authorise 200 ${Number.isFinite(recovery) ? `${recovery} ms` : 'never'} after the restore, first retried request answered ${retried ? `${retried.end - c.restore} ms` : 'never'} after it`,
    );
    first = false;
  }
  const health = probes.samples.filter((p) => p.path === '/healthz');
  const unhealthy = health.filter((p) => p.status !== 200);
  check(
    `${name}: /healthz 200 throughout (${health.length} probes)`,
    health.length > 0 && unhealthy.length === 0,
    tally(unhealthy.map((p) => `${p.status} ${p.error ?? ''}`)),
  );
  const ready = probes.samples.filter((p) => p.path === '/readyz');
  const readyDown = ready.filter((p) => p.status !== 200);
  const lastReady = ready[ready.length - 1];
  const downDuring = cycles.every((c) => ready.some((p) => p.status === 503 && p.t >= c.fault && p.t <= c.restore + RECOVERY_MS));
  check(
    `${name}: /readyz ${spec.readyDrops ? '503 while the database is unreachable, and ' : ''}200 again by itself`,
    lastReady?.status === 200 && (!spec.readyDrops || downDuring) && readyDown.every((p) => p.status === 503),
    `${readyDown.length} of ${ready.length} probes not 200 (${tally(readyDown.map((p) => `${p.status} ${p.error ?? ''}`)) || 'none'}); last ${lastReady?.status}`,
  );
  return lines;
}

/** Final answers against replays and the database. Returns lost (acknowledged but not stored as answered). */
async function judgeOutcome(spec: Spec, load: Load, rows: DbRows): Promise<{ lost: number; line: string }> {
  const name = spec.title;
  const done = load.ops.filter((o) => o.final);
  const unresolved = load.ops.filter((o) => !o.final && !o.abandoned);
  const abandoned = load.ops.filter((o) => o.abandoned);
  check(
    `${name}: every request answered in the end (${load.ops.length - abandoned.length} requests, ${load.ops.filter((o) => o.faulted).length} of them retried)`,
    unresolved.length === 0,
    unresolved.length ? `${unresolved.length} still unanswered after ${DRAIN_MS} ms of retries: ${tally(unresolved.map((o) => o.kind))}` : '',
  );
  check(
    `${name}: no refusal of a valid request and no unreadable answer`,
    load.problems.size === 0,
    [...load.problems.entries()]
      .slice(0, 4)
      .map(([k, v]) => `${k} ×${v.n}: ${v.examples[0]}`)
      .join('; '),
  );
  const busy = load.attempts.filter((a) => a.busy);
  check(
    `${name}: no retry found its Idempotency-Key still held by an attempt the fault cut off (409 "still being processed")`,
    busy.length === 0,
    busy.length
      ? `${busy.length} such answers: ${tally(busy.map((a) => a.kind))}; ${rows.started_keys} keys still 'started' in idempotency_keys after the run`
      : '',
  );

  // The database, queried directly.
  const byOrder = new Map<string, DbRows['payments']>();
  const byTx = new Map<string, DbRows['payments'][number]>();
  for (const p of rows.payments) {
    byOrder.set(p.order_no, [...(byOrder.get(p.order_no) ?? []), p]);
    byTx.set(p.transaction_id, p);
  }
  const missing: string[] = [];
  const wrong: string[] = [];
  const twice: string[] = [];
  let acked = 0;
  for (const o of done.filter((x) => x.kind === 'authorise')) {
    const stored = byOrder.get(o.ref) ?? [];
    if (stored.length > 1) twice.push(o.ref);
    const a = o.final?.answer ?? {};
    if (o.final?.status !== 200 || !a.transaction_id) continue;
    if (o.final.code === '0000') acked++;
    if (stored.length === 0) {
      if (o.final.code === '0000') missing.push(`authorise ${o.ref}`);
      else wrong.push(`authorise ${o.ref} answered ${o.final.code} but not stored`);
    } else if (stored[0]?.transaction_id !== a.transaction_id || (o.final.code === '0000' && stored[0]?.amount_minor !== o.minor))
      wrong.push(`authorise ${o.ref}: answered ${a.transaction_id}, stored ${stored[0]?.transaction_id} ${stored[0]?.amount_minor}`);
  }
  for (const o of load.ops.filter((x) => x.kind === 'authorise' && !x.final)) if ((byOrder.get(o.ref) ?? []).length > 1) twice.push(o.ref);
  const generic = done.filter((x) => x.kind === 'payment' && x.final?.status === 200);
  for (const o of generic) {
    const tx = String(o.final?.answer.id ?? '').replace(/^pay_/, '');
    const p = byTx.get(tx);
    if (!p) missing.push(`payment ${o.final?.answer.id}`);
    else if (p.amount_minor !== o.minor) wrong.push(`payment ${tx}: amount ${p.amount_minor}, sent ${o.minor}`);
  }
  const genericIds = new Set(generic.map((o) => String(o.final?.answer.id).replace(/^pay_/, '')));
  // A generic payment's id comes from its Idempotency-Key's row, so one stored for a request
  // still unanswered cannot be told apart: only more of them than such requests is wrong.
  const genericUnknown = rows.payments.filter((p) => p.order_no.startsWith('pay_') && !genericIds.has(p.transaction_id));
  const genericPending = unresolved.filter((o) => o.kind === 'payment').length;
  const genericTwice = genericUnknown.length > genericPending ? genericUnknown : [];
  let captures = 0;
  for (const o of done.filter((x) => x.kind === 'capture')) {
    const p = byTx.get(o.ref);
    const status = o.final?.answer.capture_orders?.[0]?.capture_status;
    const ok = status === '1';
    if (ok) captures++;
    const want = ok ? o.minor : 0;
    if (!p) missing.push(`capture ${o.ref}`);
    // `2`: at the processor when answered (its write cut off by the fault); the sweeper settled it either way.
    else if (status === '2' ? p.captured_minor !== 0 && p.captured_minor !== o.minor : p.captured_minor !== want)
      wrong.push(`capture ${o.ref}: answered ${ok ? 'captured' : `${o.final?.code} capture_status ${status}`}, stored captured ${p.captured_minor}`);
  }
  const refundsOf = new Map<string, string[]>();
  for (const r of rows.refunds) refundsOf.set(r.transaction_id, [...(refundsOf.get(r.transaction_id) ?? []), r.refund_reference_id]);
  const answeredRefunds = new Map<string, string[]>();
  for (const o of load.ops.filter((x) => x.kind === 'refund')) {
    const ref = o.final?.answer.refund_orders?.[0]?.refund_reference_id;
    if (ref) answeredRefunds.set(o.ref, [...(answeredRefunds.get(o.ref) ?? []), ref]);
  }
  let refunds = 0;
  for (const [tx, refs] of answeredRefunds) {
    refunds += refs.length;
    const stored = refundsOf.get(tx) ?? [];
    for (const r of refs) if (!stored.includes(r)) missing.push(`refund ${r}`);
  }
  for (const [tx, stored] of refundsOf) {
    const answered = answeredRefunds.get(tx) ?? [];
    const sent = load.ops.filter((x) => x.kind === 'refund' && x.ref === tx).length;
    if (stored.length > sent) twice.push(`${tx}: ${stored.length} refunds stored for ${sent} requests`);
    else if (stored.length > answered.length && load.ops.every((x) => x.kind !== 'refund' || x.ref !== tx || x.final))
      wrong.push(`${tx}: ${stored.length} refunds stored, ${answered.length} answered with a reference`);
  }
  const payoutsOf = new Map<string, string[]>();
  for (const p of rows.payouts) payoutsOf.set(p.request_id, [...(payoutsOf.get(p.request_id) ?? []), p.transaction_id]);
  let payouts = 0;
  for (const o of load.ops.filter((x) => x.kind === 'payout')) {
    const stored = payoutsOf.get(o.ref) ?? [];
    if (stored.length > 1) twice.push(`payout ${o.ref}`);
    const tx = o.final?.status === 200 ? o.final.answer.transaction_id : undefined;
    if (!tx) continue;
    payouts++;
    if (stored.length === 0) missing.push(`payout ${o.ref}`);
    else if (stored[0] !== tx) wrong.push(`payout ${o.ref}: answered ${tx}, stored ${stored[0]}`);
  }
  const sentOrders = new Set(load.ops.filter((o) => o.kind === 'authorise').map((o) => o.ref));
  const strangers = rows.payments.filter((p) => !p.order_no.startsWith('pay_') && !sentOrders.has(p.order_no)).map((p) => p.order_no);
  check(
    `${name}: every acknowledged write is in the database (${acked} payments approved, ${generic.length} generic payments, ${captures} captures, ${refunds} refunds, ${payouts} payouts)`,
    missing.length === 0,
    missing.slice(0, 5).join(', '),
  );
  check(`${name}: stored as answered (ids, amounts, captured, refunds)`, wrong.length === 0, wrong.slice(0, 4).join('; '));
  check(
    `${name}: nothing stored twice and nothing the clients never asked for`,
    twice.length + strangers.length + genericTwice.length === 0,
    [
      ...twice.slice(0, 3),
      ...strangers.slice(0, 3).map((s) => `unknown order ${s}`),
      ...genericTwice
        .slice(0, 3)
        .map((p) => `generic payment ${p.transaction_id} stored, ${genericUnknown.length} such for ${genericPending} unanswered requests`),
    ].join(', '),
  );
  return {
    lost: missing.length,
    line: `  ${name}: ${load.ops.length - abandoned.length} requests (${tally(
      load.ops.map((o) => o.kind),
      7,
    )}), ${load.attempts.length} attempts; ${acked} payments acknowledged, lost = ${missing.length}, stored twice = ${twice.length}, never answered = ${unresolved.length}; recovery probes refused and not sent again: ${abandoned.length} (${abandoned.filter((o) => (byOrder.get(o.ref) ?? []).length > 0).length} of them stored anyway)`,
  };
}

/** Each sampled write sent again with its Idempotency-Key (and each approved authorise once more under a new key): the same answer. */
async function judgeReplays(spec: Spec, load: Load): Promise<string> {
  const writes = load.ops.filter((o) => o.final && o.final.status === 200 && WRITES.includes(o.kind));
  const faulted = writes.filter((o) => o.faulted);
  const others = writes.filter((o) => !o.faulted).sort(() => Math.random() - 0.5);
  const sample = [...faulted.slice(0, 400), ...others.slice(0, REPLAY_SAMPLE)];
  const approved = sample.filter((o) => o.kind === 'authorise' && o.final?.code === '0000');
  const differ: string[] = [];
  const noAnswer: string[] = [];
  type Lane = ReturnType<Load['replayClient']>;
  const deadline = Date.now() + REPLAY_MS;
  const replay = async (lane: Lane, op: Op, want: string, accept?: (code: string, sig: string) => boolean) => {
    for (let i = 0; i < 20 && Date.now() < deadline; i++) {
      const { final } = await load.attempt(op, lane.c, lane.probe);
      if (final) {
        if (final.sig !== want && !accept?.(final.code, final.sig)) differ.push(`${op.kind} ${op.ref}: first ${want}, again ${final.sig}`);
        return;
      }
      await sleep(RETRY_MS);
    }
    noAnswer.push(`${op.kind} ${op.ref}`);
  };
  const jobs: Array<(lane: Lane) => Promise<void>> = sample.map((op) => (lane) => replay(lane, op, op.final?.sig as string));
  for (const op of approved) {
    const again: Op = { ...op, key: `${op.key}-again`, final: undefined };
    const tx = String(op.final?.answer.transaction_id);
    jobs.push((lane) => replay(lane, again, op.final?.sig as string, (code, sig) => code === '1011' || sig.startsWith(`${tx}|0000`)));
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const lane = load.replayClient();
      while (next < jobs.length) await (jobs[next++] as (lane: Lane) => Promise<void>)(lane);
    }),
  );
  check(
    `${spec.title}: each answer repeated when sent again (${sample.length} under their Idempotency-Key, ${faulted.length} of them retried through the fault; ${approved.length} approvals under a new key)`,
    differ.length === 0 && noAnswer.length === 0,
    [...differ.slice(0, 3), ...noAnswer.slice(0, 3).map((x) => `no answer: ${x}`)].join('; '),
  );
  return `  replays: ${sample.length} under their key, ${approved.length} approvals under a new key; ${differ.length} differed`;
}

async function runFault(spec: Spec): Promise<void> {
  log(`\n# ${spec.title} on ${spec.engine}: ${CYCLES} cycle(s), ${CLIENTS} clients retrying every ≤${RETRY_MS} ms`);
  let inj: Injector;
  try {
    inj = await spec.make();
  } catch (e) {
    if (!(e instanceof SkipFault)) throw e;
    log(`SKIPPED: ${spec.title} fault (${e.message})`);
    if (CI) check(`${spec.title}: the fault could be set up (CI)`, false, e.message);
    return;
  }
  let gw: GatewayProcess | null = null;
  let load: Load | null = null;
  const probes = new Probes();
  try {
    const port = await freePort();
    // The gateway's own process count on PostgreSQL (one worker per core), at least two workers.
    const workers: Record<string, string> = spec.engine === 'postgres' && os.availableParallelism() < 2 ? { TOLLGATE_WORKERS: '2' } : {};
    const direct = gatewayEnv(inj.db, port, { TOLLGATE_API_RATE_LIMIT: '100000', TOLLGATE_PROCESSOR_TIMEOUT_MS: '2000', ...workers });
    const env: NodeJS.ProcessEnv = { ...direct, DATABASE_URL: inj.gateway_url };
    const m = createMerchant(direct, 'faults');
    const operator = (a: string[]) => {
      const r = cli(direct, a);
      if (r.status !== 0) throw new Error(`tollgate ${a.join(' ')}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`);
      return r.stdout;
    };
    const api_key = (JSON.parse(operator(['apikey', 'create', '--account', m.account_id, '--json']).trim().split('\n').pop() as string) as { secret: string })
      .secret;
    operator(['balance', 'top-up', '--account', m.account_id, '--currency', 'USD', '--amount', '100000.00']);
    operator(['pricing', 'payout', '--account', m.account_id, '--currency', 'USD', '--method', 'LOCAL', '--percent', '1', '--fixed', '0.25']);
    gw = await startGateway(env, { capture_output: true });
    const g = gw;
    // Every worker up (readyz answered by the first one): the primary and its workers.
    const processes = spec.engine === 'sqlite' ? 1 : 1 + Number(env.TOLLGATE_WORKERS || os.availableParallelism());
    for (const until = Date.now() + 20_000; processTree(g.pid).length < processes && Date.now() < until; ) await sleep(100);
    await sleep(300);
    const pidsBefore = processTree(g.pid).sort((a, b) => a - b);
    let exitedAt = 0;
    void g.exited.then(() => {
      exitedAt = Date.now();
    });
    probes.start(g.url);
    load = new Load({ url: g.url, m, api_key, funded: true, request_timeout_ms: REQUEST_TIMEOUT_MS, retry_ms: RETRY_MS });
    const cycles: Cycle[] = [];
    let begin = Date.now();
    load.start(CLIENTS);
    for (let i = 1; i <= CYCLES; i++) {
      await sleep(WARM_MS);
      // New payments every ≤100 ms from now until one is answered 200 after the restore.
      let restore = 0;
      const probing = (load as Load).probe(
        (last) => restore > 0 && (Date.now() > restore + AFTER_MS || (last !== null && last.status === 200 && last.end >= restore)),
      );
      const fault = await inj.hold(load, i, begin);
      await inj.restore();
      restore = Date.now();
      await sleep(AFTER_MS);
      await probing;
      cycles.push({ begin, fault, restore, end: Date.now() });
      begin = Date.now();
    }
    await load.stop(DRAIN_MS);
    (cycles[cycles.length - 1] as Cycle).end = Number.POSITIVE_INFINITY;
    const replayLine = await judgeReplays(spec, load);
    await probes.stop();
    const pidsAfter = processTree(g.pid).sort((a, b) => a - b);
    const restarted = g.output().match(/worker \d+ exited[^\n]*/g) ?? [];
    check(
      `${spec.title}: the gateway's processes are the same before and after (${pidsBefore.length}: ${pidsBefore.join(', ')})`,
      exitedAt === 0 && restarted.length === 0 && pidsAfter.join() === pidsBefore.join(),
      exitedAt ? 'the gateway exited' : `after: ${pidsAfter.join(', ')}${restarted.length ? `; ${restarted.slice(0, 2).join('; ')}` : ''}`,
    );
    const lines = judgeAnswers(spec, load, cycles, probes);
    const toldLines = g
      .output()
      .split('\n')
      .filter((l) => /answering 503 until|storage is back/.test(l));
    const told = toldLines.length;
    check(
      `${spec.title}: the operator is told per episode, not per request (${told} log lines about it)`,
      told <= 4 * pidsBefore.length * CYCLES + 4,
      `${told} lines for ${pidsBefore.length} processes and ${CYCLES} cycle(s), e.g. ${toldLines
        .slice(0, 3)
        .map((l) => l.slice(0, 300))
        .join(' / ')}`,
    );
    // An authorisation whose payment write the fault cut off was answered 0006 from its
    // attempt (docs/attempts.md): the sweeper writes and settles it once the call's deadline
    // (2 s here) has passed. Everything is judged after that.
    const settleBy = Date.now() + 60_000;
    let open = (await readRows(inj.db, m.account_id)).open_attempts;
    while (open > 0 && Date.now() < settleBy) {
      await new Promise((r) => setTimeout(r, 500));
      open = (await readRows(inj.db, m.account_id)).open_attempts;
    }
    check(`${spec.title}: every processor attempt the fault left open is settled by the sweeper`, open === 0, `${open} still open after 60 s`);
    await g.stop();
    const code = await g.exited;
    gw = null;
    check(`${spec.title}: the gateway stops cleanly afterwards (SIGTERM)`, code === 0, `exit ${code}`);

    const rows = await readRows(inj.db, m.account_id);
    const outcome = await judgeOutcome(spec, load, rows);
    const r = cli(direct, ['ledger', 'verify']);
    check(`${spec.title}: tollgate ledger verify`, r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    if (spec.engine === 'sqlite') {
      const integrity = integrityCheck(inj.db.file as string);
      check(`${spec.title}: PRAGMA integrity_check`, integrity === 'ok', integrity.slice(0, 300));
    }
    for (const l of lines) log(l);
    log(outcome.line);
    log(replayLine);
    log(`  ${inj.notes()}`);
  } finally {
    await load?.stop(0);
    await probes.stop();
    if (gw) await gw.crash();
    await inj.dispose();
  }
}

async function main(): Promise<void> {
  if (!args['no-build']) buildDist();
  const engines = (args.engine ?? ['sqlite', 'postgres']) as Engine[];
  const wanted = args.fault ?? Object.keys(FAULTS);
  const unknown = [...wanted.filter((f) => !(f in FAULTS)), ...engines.filter((e) => e !== 'sqlite' && e !== 'postgres')];
  if (unknown.length) check(`--fault is cut, readonly or full and --engine sqlite or postgres (got ${unknown.join(', ')})`, false);
  let specs = SPECS.filter((s) => engines.includes(s.engine) && wanted.includes(s.fault));
  if (specs.some((s) => s.engine === 'postgres') && !(await pgReachable())) {
    if (CI) check(`PostgreSQL reachable at ${PG_URL}`, false);
    else log(`skip - PostgreSQL faults: no server at ${PG_URL} (set TOLLGATE_TEST_PG_URL)`);
    specs = specs.filter((s) => s.engine !== 'postgres');
  }
  for (const spec of specs) {
    const t0 = Date.now();
    try {
      await runFault(spec);
    } catch (e) {
      check(`${spec.title} on ${spec.engine} ran to the end`, false, (e as Error).stack?.slice(0, 800) ?? String(e));
    }
    log(`  (${s1(Date.now() - t0)} s)`);
  }
  log(`\n${results.passed} passed, ${results.failed} failed`);
  process.exit(results.failed > 0 ? 1 : 0);
}

await main();
