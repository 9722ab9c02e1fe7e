// The two processes of the deductions scenario (bench/deductions.ts), each printing one JSON
// line. Both open the gateway's runtime (src/runtime.ts) on the given database.
//
//   seed --url U --dir D --count N   one test merchant; ONE real first payment with a monthly
//        subscription through the API (in process, app.inject: risk, sandbox processor, card
//        vaulted under the runtime keyring, subscription and its first deduction's job); then
//        N - 1 more first payments cloned from it, each written with the domain code in
//        batched transactions: the payment row, its ledger postings (postPaymentChange) and
//        its subscription with its first deduction's job (createSubscription → enqueueCharge).
//        Every payment is made as of 31 days ago, so all N first deductions fall due at one
//        instant, at or before now. PostgreSQL: ANALYZE after.
//   run --url U --count N            a fresh process, as a worker would be: createScheduler,
//        then scheduler.runDue(now, BATCH) until a batch claims nothing, timed; memory
//        sampled every 100 ms (RSS, heap) against the jobs done so far, peak RSS (VmHWM,
//        reset just before the run) and heap before/after (after a full GC). Then it proves
//        the outcome: N recurring payments `<first order_no>-R1`, every subscription charged
//        once and waiting for deduction 2, no job failed, `verifyLedger` ok.
//
// Run with `node --import tsx --expose-gc bench/deductions-child.ts …`.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createScheduler } from '../src/cli/background.js';
import { loadSettings, type Settings } from '../src/config/index.js';
import { randomToken, timeOrderedId } from '../src/crypto/ids.js';
import { insertRows } from '../src/db/prepared.js';
import { postPaymentChange } from '../src/ledger/postings.js';
import { verifyLedger } from '../src/ledger/verify.js';
import type { PaymentRow } from '../src/payments/tables.js';
import { createRuntime } from '../src/runtime.js';
import { BATCH } from '../src/scheduler/jobs.js';
import { CHARGE_KIND, planOf } from '../src/subscriptions/deductions.js';
import { deductionTime } from '../src/subscriptions/schedule.js';
import { createSubscription } from '../src/subscriptions/service.js';
import type { SubscriptionRow } from '../src/subscriptions/tables.js';
import { MASTER_KEY } from '../src/test/process.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string' }, dir: { type: 'string' }, count: { type: 'string' } },
});
const MODE = positionals[0];
const COUNT = Number(values.count ?? 10_000);
const DAY_MS = 86_400_000;
/** First payments written per transaction while seeding, and transactions in flight at once. */
const SEED_BATCH = 250;
const SEED_PARALLEL = 4;
const SAMPLE_MS = 100;
/** A full collection and a live-heap reading after every this many deductions (the same spacing for every run size). */
const PROBE_EVERY = 500;
const MiB = 1024 * 1024;

function settingsFor(): Settings {
  if (!values.url) throw new Error('--url is required');
  return {
    ...loadSettings({}),
    database_url: values.url,
    data_dir: values.dir ?? fs.mkdtempSync('/tmp/tollgate-deductions-'),
    master_key: MASTER_KEY,
    log_level: 'warn',
    demo_merchant: false,
    worker_enabled: false,
  };
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function seed(): Promise<Record<string, unknown>> {
  if (!(COUNT >= 1)) throw new Error('--count must be at least 1');
  const t0 = performance.now();
  // Business time of the sale: 31 days ago, so the first monthly deduction is due by now.
  const sold_at = Date.now() - 31 * DAY_MS;
  // The HTTP application and the client only here: the run process, a worker, does not load them
  // (and starts in a second less under tsx: issue 36 item 9).
  const [{ buildApp }, { TollgateClient }, { INJECT_ORIGIN, injectFetch }, { paymentFields }] = await Promise.all([
    import('../src/http/app.js'),
    import('../src/client/index.js'),
    import('../src/test/harness.js'),
    import('./scenarios.js'),
  ]);
  const rt = await createRuntime(settingsFor(), { now: () => sold_at, metricsDefaults: false });
  const app = await buildApp(rt.deps);
  try {
    const m = await rt.merchants.createMerchant({ name: 'bench subscriptions', mode: 'test', allow_ips: ['127.0.0.1/32'] }, sold_at);
    const client = new TollgateClient({
      base_url: INJECT_ORIGIN,
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      secret: m.secret_key,
      webhook_secret: m.webhook_secret,
      fetch: injectFetch(app),
      retry: { max_retries: 0 },
    });
    const tag = `SUB${sold_at.toString(36)}`;
    const first = await client.authorise({ ...paymentFields(`${tag}-0`), amount: '9.99', subscription: { contract_name: 'bench-plan-0', interval: 'month' } });
    if (first.result_info !== '0000:Success' || !first.recurring_id) throw new Error(`the real first payment was not approved: ${first.result_info}`);
    const template = (await rt.store.db
      .selectFrom('payments')
      .selectAll()
      .where('transaction_id', '=', first.transaction_id)
      .executeTakeFirstOrThrow()) as PaymentRow;
    const sub = (await rt.store.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('recurring_id', '=', first.recurring_id)
      .executeTakeFirstOrThrow()) as SubscriptionRow;
    const plan = planOf(sub);
    const details = JSON.parse(template.details) as Record<string, unknown>;
    const answer = JSON.parse(template.answer) as Record<string, unknown>;

    // The other first payments: the template's row with its own ids, postings and subscription.
    const clone = (i: number) => {
      const transaction_id = timeOrderedId(sold_at);
      const order_no = `${tag}-${i}`;
      const recurring_id = `rec_${randomToken(18)}`;
      const contract_name = `bench-plan-${i}`;
      const row: PaymentRow = {
        ...template,
        transaction_id,
        order_no,
        request_hash: randomToken(24),
        details: JSON.stringify({ ...details, subscription: { ...(details.subscription as object), contract_name }, recurring_id }),
        answer: JSON.stringify({ ...answer, order_no, transaction_id, contract_name, recurring_id }),
      };
      return { row, prepared: { recurring_id, contract_name, contract: '', price_id: '', plan } };
    };
    let next = 1;
    await Promise.all(
      Array.from({ length: SEED_PARALLEL }, async () => {
        while (next < COUNT) {
          const from = next;
          const to = Math.min(COUNT, from + SEED_BATCH);
          next = to;
          const items = Array.from({ length: to - from }, (_, k) => clone(from + k));
          await rt.store.transaction(async (tx) => {
            await insertRows(
              tx,
              'payments',
              items.map((x) => x.row),
            );
            for (const x of items) {
              await postPaymentChange(tx, null, x.row, sold_at);
              await createSubscription(tx, x.prepared, x.row, sold_at);
            }
          });
        }
      }),
    );
    if (rt.store.engine === 'postgres') await sql`ANALYZE`.execute(rt.store.db);
    const due = await rt.store.db
      .selectFrom('scheduled_jobs')
      .select([sql<number>`count(*)`.as('n'), sql<number>`min(due_at)`.as('min'), sql<number>`max(due_at)`.as('max')])
      .where('kind', '=', CHARGE_KIND)
      .where('status', '=', 'due')
      .executeTakeFirstOrThrow();
    if (Number(due.n) !== COUNT || Number(due.min) !== Number(due.max) || Number(due.max) > Date.now())
      throw new Error(`seeded ${due.n} charge jobs due ${due.min}..${due.max}; expected ${COUNT} due at one instant before now`);
    return {
      count: COUNT,
      seed_s: round((performance.now() - t0) / 1000, 2),
      due_at: new Date(deductionTime(plan, 1)).toISOString(),
      account_id: m.account_id,
    };
  } finally {
    await app.close();
    await rt.store.close();
  }
}

function procStatusKiB(field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

interface Sample {
  /** Seconds into the run (forced collections excluded), deductions done, RSS and heap in use (garbage included). */
  t_s: number;
  done: number;
  rss_mib: number;
  heap_mib: number;
}

interface Probe {
  /** Deductions done when the probe ran (between batches: nothing in flight). */
  done: number;
  /** Heap in use after a full collection: what the process holds. */
  live_heap_mib: number;
  rss_mib: number;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc');
  g();
  g();
}

function memory() {
  const m = process.memoryUsage();
  return {
    rss_mib: round(m.rss / MiB),
    heap_used_mib: round(m.heapUsed / MiB),
    heap_total_mib: round(m.heapTotal / MiB),
    external_mib: round(m.external / MiB),
  };
}

async function run(): Promise<Record<string, unknown>> {
  const rt = await createRuntime(settingsFor(), { metricsDefaults: false });
  try {
    const scheduler = createScheduler(rt);
    // The recurring sweeps (settlement, purges) are not installed: only the deductions are timed.
    gc();
    const before = memory();
    try {
      fs.writeFileSync('/proc/self/clear_refs', '5');
    } catch {
      // not permitted: VmHWM then covers the start-up too
    }
    const totals = { claimed: 0, done: 0, again: 0, retried: 0, failed: 0, lost: 0, batches: 0 };
    const samples: Sample[] = [];
    const probes: Probe[] = [{ done: 0, live_heap_mib: before.heap_used_mib, rss_mib: before.rss_mib }];
    let paused_ms = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const elapsed = () => (performance.now() - t0 - paused_ms) / 1000;
    const sample = () => {
      const m = process.memoryUsage();
      samples.push({ t_s: round(elapsed(), 2), done: totals.done, rss_mib: round(m.rss / MiB), heap_mib: round(m.heapUsed / MiB) });
    };
    const timer = setInterval(sample, SAMPLE_MS);
    for (;;) {
      const r = await scheduler.runDue(rt.deps.now(), BATCH);
      if (r.claimed === 0) break;
      totals.batches++;
      for (const k of ['claimed', 'done', 'again', 'retried', 'failed', 'lost'] as const) totals[k] += r[k];
      if (totals.done >= probes.length * PROBE_EVERY) {
        // A live-heap probe, its collection left out of the timing.
        const p0 = performance.now();
        gc();
        probes.push({ done: totals.done, live_heap_mib: round(process.memoryUsage().heapUsed / MiB), rss_mib: round(process.memoryUsage.rss() / MiB) });
        paused_ms += performance.now() - p0;
      }
    }
    const elapsed_s = elapsed();
    const cpu = process.cpuUsage(cpu0);
    const wall_ms = performance.now() - t0;
    clearInterval(timer);
    sample();
    const peak_rss_mib = round(procStatusKiB('VmHWM') / 1024);
    gc();
    const after = memory();

    // The outcome, read back.
    const db = rt.store.db;
    const count = (q: { executeTakeFirstOrThrow(): Promise<{ n: unknown }> }) => q.executeTakeFirstOrThrow().then((r) => Number(r.n));
    const n = sql<number>`count(*)`.as('n');
    const recurring = await count(db.selectFrom('payments').select(n).where('kind', '=', 'recurring'));
    const r1 = await count(
      db
        .selectFrom('payments as p')
        .innerJoin('subscriptions as s', (j) => j.on(sql`p.order_no`, '=', sql`s.first_order_no || '-R1'`).onRef('p.account_id', '=', 's.account_id'))
        .select(n)
        .where('p.kind', '=', 'recurring')
        .where('p.status', '=', 'captured')
        .where('p.result_code', '=', '0000')
        .whereRef('p.captured_minor', '=', 's.amount_minor'),
    );
    const charged = await count(
      db
        .selectFrom('subscriptions')
        .select(n)
        .where('status', '=', 'Active')
        .where('charged_count', '=', 1)
        .where('next_n', '=', 2)
        .where('charge_seq', '=', 1)
        .where('retry_count', '=', 0),
    );
    const subscriptions = await count(db.selectFrom('subscriptions').select(n));
    const jobs = await db.selectFrom('scheduled_jobs').select(['status', n]).where('kind', '=', CHARGE_KIND).groupBy('status').execute();
    const events = await count(db.selectFrom('events').select(n).where('event_type', '=', 'subscription.charged'));
    const ledger = await verifyLedger(db);
    const jobsByStatus = Object.fromEntries(jobs.map((j) => [j.status, Number(j.n)]));
    const verified = {
      subscriptions,
      recurring_payments: recurring,
      r1_captured: r1,
      subscriptions_charged_once_next_2: charged,
      charged_events: events,
      charge_jobs: jobsByStatus,
      ledger_ok: ledger.ok,
      ledger_problems: ledger.problems.slice(0, 5),
      ok:
        subscriptions === COUNT &&
        recurring === COUNT &&
        r1 === COUNT &&
        charged === COUNT &&
        events === COUNT &&
        jobsByStatus.done === COUNT &&
        jobsByStatus.due === COUNT &&
        Object.keys(jobsByStatus).length === 2 &&
        totals.done === COUNT &&
        ledger.ok,
    };
    return {
      engine: rt.store.engine,
      count: COUNT,
      batch: BATCH,
      run_s: round(elapsed_s, 2),
      deductions_per_s: round(totals.done / elapsed_s, 0),
      totals,
      gc_probe_s: round(paused_ms / 1000, 2),
      // This process's CPU over the run (the collections included), % of one core; the PostgreSQL server's is not in it.
      cpu_pct: round(((cpu.user + cpu.system) / 1000 / wall_ms) * 100, 0),
      memory: { before, after, peak_rss_mib, peak_heap_used_mib: Math.max(...samples.map((x) => x.heap_mib)), probes },
      samples,
      verified,
    };
  } finally {
    await rt.store.close();
  }
}

if (MODE !== 'seed' && MODE !== 'run') throw new Error('usage: deductions-child.ts seed|run --url URL [--dir DIR] [--count N]');
const out = MODE === 'seed' ? await seed() : await run();
process.stdout.write(`${JSON.stringify(out)}\n`);
