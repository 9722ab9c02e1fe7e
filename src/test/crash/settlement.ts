// Settlement batches under kill -9 (docs/contract.md §23; issue 35 "A batch job killed mid-run
// resumes without double-counting"). A test account with a settlement delay of 2 days pays
// bursts of small card payments (USD and EUR) through the client library on several days of its
// test clock; between bursts `tollgate clock advance --to <next day, 01:00>` runs as a child
// process, which closes the day that ended (one transaction per account, currency and day) and
// makes the batch of two days before available (one transaction). That child is SIGKILLed at
// random points (a random time, or just after a batch was closed or made available), up to
// KILLS_PER_ROUND times a round, and on odd rounds the gateway's process group (its worker runs
// the same sweep) is killed with it and restarted; each killed run is followed by another with
// the same target, the last one unkilled. At the end (a last advance of DELAY_DAYS days, no payments):
// every day with payments has exactly one batch per currency and no other batch exists; the
// batches' nets add up to the captures minus their fees (nothing counted twice); every batch
// whose available_at passed is `available` with exactly one settlement posting and no unsettled
// pending entry, the others `pending` with none; merchant_available equals the available
// batches' pending parts; verifyLedger and `tollgate ledger verify` are clean.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
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
  ROOT,
  startGateway,
} from '../process.js';

export interface SettlementCrashOptions {
  /** Clock days with a burst of payments (each followed by an advance killed mid-run). */
  days: number;
  /** Payments per day (spread over the currencies). */
  payments: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const DAY_MS = 24 * 3600 * 1000;
const HOUR_MS = 3600 * 1000;
const DELAY_DAYS = 2;
const CURRENCIES = ['USD', 'EUR'] as const;
const LANES = 8;
const KILLS_PER_ROUND = 2;
const YEAR = String(new Date().getUTCFullYear() + 3);
const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface State {
  batches: number;
  available: number;
}

async function state(st: Store, account_id: string): Promise<State> {
  const rows = await st.db
    .selectFrom('settlement_batches')
    .select(['status', sql<number>`count(*)`.as('n')])
    .where('account_id', '=', account_id)
    .groupBy('status')
    .execute();
  let batches = 0;
  let available = 0;
  for (const r of rows) {
    batches += Number(r.n);
    if (r.status === 'available') available += Number(r.n);
  }
  return { batches, available };
}
const same = (a: State, b: State) => a.batches === b.batches && a.available === b.available;

/** `tollgate clock advance` as a child process (the compiled CLI); resolves with its exit code and output. */
function advance(
  env: NodeJS.ProcessEnv,
  account_id: string,
  to_ms: number,
): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; out: string }> } {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/tollgate.js'), 'clock', 'advance', '--account', account_id, '--to', new Date(to_ms).toISOString()],
    {
      env,
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    out += d;
  });
  child.stderr?.on('data', (d: string) => {
    out += d;
  });
  const done = new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, out: out.slice(-500) })),
  );
  return { child, done };
}

export async function settlementCrash(engine: Engine, o: SettlementCrashOptions): Promise<void> {
  o.log(`\n# settlement batches during kill -9 on ${engine}: ${o.days} clock days of ${o.payments} payments, each advance killed mid-run`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashst');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), { TOLLGATE_WORKERS: '1', TOLLGATE_WORKER: '1' });
    const m = createMerchant(env, 'crash-settlement');
    const account = m.account_id;
    const delay = cli(env, ['settlement', 'delay', '--account', account, '--days', String(DELAY_DAYS)]);
    if (delay.status !== 0) throw new Error(`tollgate settlement delay: ${(delay.stderr || delay.stdout).trim().slice(0, 300)}`);
    gw = await startGateway(env);
    store = openStore(fresh.url);
    const st = store;
    const client: TollgateClient = gatewayClient(gw.url, m, { retry: { max_retries: 0 }, timeout_ms: 10_000 });
    const violations: string[] = [];
    const totals = { paid: 0, declined: 0, kills: 0, midSweep: 0, gatewayKills: 0, runs: 0 };
    const t0 = Date.now();
    let n = 0;
    const start = Date.now();
    const day0 = Math.floor(start / DAY_MS) * DAY_MS;

    /** A burst of small payments, every one answered (a network error or 5xx is a violation: nothing is killed meanwhile). */
    const burst = async (count: number) => {
      let left = count;
      await Promise.all(
        Array.from({ length: LANES }, async () => {
          while (left > 0) {
            left--;
            const currency = CURRENCIES[n % CURRENCIES.length] as string;
            const order_no = `S${n++}`;
            try {
              const r = await client.call('authorise', {
                order_no,
                currency,
                amount: `${1 + Math.floor(Math.random() * 50)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`,
                card: '4242424242424242',
                expiration_month: '12',
                expiration_year: YEAR,
                security_code: '123',
              });
              if (r.answer.result_info === '0000:Success') totals.paid++;
              else {
                totals.declined++;
                if (violations.length < 20) violations.push(`${order_no} ${currency}: ${r.answer.result_info}`);
              }
            } catch (e) {
              if (violations.length < 20)
                violations.push(`${order_no}: ${e instanceof TollgateApiError || e instanceof NetworkError ? e.message : String(e)}`.slice(0, 200));
            }
          }
        }),
      );
    };

    /** Advances to `to_ms`, killing the child (and on `killGateway` rounds the gateway) at random points, then once unkilled. */
    const advanceKilled = async (to_ms: number, round: number, killGateway: boolean) => {
      const roundStart = await state(st, account);
      const atKills: State[] = [];
      for (let attempt = 0; attempt < KILLS_PER_ROUND; attempt++) {
        const before = await state(st, account);
        const run = advance(env, account, to_ms);
        totals.runs++;
        // Kill after a random time, or just after the sweep committed a batch (closed or made available), in the next one's transaction.
        const onChange = Math.random() < 0.6;
        const killAt = Date.now() + 150 + Math.random() * 1_500;
        let exited = false;
        void run.done.then(() => {
          exited = true;
        });
        let changedAt = 0;
        const extra = Math.random() * 15;
        while (!exited) {
          if (onChange) {
            if (!changedAt && !same(before, await state(st, account))) changedAt = Date.now();
            if (changedAt && Date.now() >= changedAt + extra) break;
            if (Date.now() > killAt + 20_000) break;
          } else if (Date.now() >= killAt) break;
          await later(onChange ? 1 : 5);
        }
        if (exited) {
          const r = await run.done;
          if (r.code !== 0) throw new Error(`clock advance (round ${round}) exited ${r.code ?? r.signal}: ${r.out}`);
          break; // it finished before the kill
        }
        run.child.kill('SIGKILL');
        await run.done;
        totals.kills++;
        if (killGateway && attempt === 0) {
          await (gw as GatewayProcess).crash();
          totals.gatewayKills++;
          gw = await startGateway(env);
        }
        atKills.push(await state(st, account));
      }
      const last = advance(env, account, to_ms);
      totals.runs++;
      const r = await last.done;
      if (r.code !== 0) throw new Error(`clock advance (round ${round}, unkilled) exited ${r.code ?? r.signal}: ${r.out}`);
      const final = await state(st, account);
      // Mid-sweep: the killed run had done part of the work, and a later run did the rest.
      for (const s of atKills) if (!same(roundStart, s) && !same(s, final)) totals.midSweep++;
    };

    for (let day = 0; day <= o.days; day++) {
      if (day < o.days) await burst(o.payments);
      // The last advance (no payments) moves DELAY_DAYS days at once: every batch comes due.
      const to = day0 + (day < o.days ? day + 1 : o.days + DELAY_DAYS) * DAY_MS + HOUR_MS;
      await advanceKilled(to, day + 1, day % 2 === 1);
      const s = await state(st, account);
      o.log(`  day ${day + 1} (${dayOf(to)}): ${totals.paid} payments so far; ${s.batches} batches, ${s.available} available; ${totals.kills} kills`);
      await later(300); // the gateway trusts "no clock moved" for 200 ms
    }
    const end = day0 + (o.days + DELAY_DAYS) * DAY_MS + HOUR_MS;

    o.check(
      `every payment answered with success (${totals.paid} of ${o.days * o.payments})`,
      violations.length === 0 && totals.paid === o.days * o.payments,
      violations.slice(0, 5).join('; '),
    );

    // ---- the books
    const payments = await st.db.selectFrom('payments').select(['currency', 'created_at', 'captured_minor']).where('account_id', '=', account).execute();
    const batches = await st.db.selectFrom('settlement_batches').selectAll().where('account_id', '=', account).execute();
    const wantKeys = new Set(payments.filter((p) => Number(p.captured_minor) > 0).map((p) => `${dayOf(Number(p.created_at))} ${p.currency}`));
    const perKey = new Map<string, number>();
    for (const b of batches) perKey.set(`${b.day} ${b.currency}`, (perKey.get(`${b.day} ${b.currency}`) ?? 0) + 1);
    const wrong = [
      ...[...wantKeys].filter((k) => perKey.get(k) !== 1).map((k) => `${k}: ${perKey.get(k) ?? 0} batches`),
      ...[...perKey.keys()].filter((k) => !wantKeys.has(k)).map((k) => `${k}: a batch of a day without payments`),
    ];
    o.check(
      `every day with payments has exactly one batch per currency, and no other batch (${wantKeys.size} days × currencies, ${batches.length} batches)`,
      wantKeys.size >= o.days * CURRENCIES.length && wrong.length === 0,
      wrong.slice(0, 5).join('; '),
    );

    // Nothing counted twice: the batches' nets are the captures minus their fees.
    const feeRow = await st.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(['p.currency', sql<number>`coalesce(sum(e.amount_minor), 0)`.as('total')])
      .where('p.account_id', '=', account)
      .where('e.ledger_account', '=', 'fees')
      .groupBy('p.currency')
      .execute();
    const sums: string[] = [];
    for (const c of CURRENCIES) {
      const captured = payments.filter((p) => p.currency === c).reduce((a, p) => a + Number(p.captured_minor), 0);
      const fees = Math.abs(Number(feeRow.find((f) => f.currency === c)?.total ?? 0));
      const net = batches.filter((b) => b.currency === c).reduce((a, b) => a + Number(b.net_minor), 0);
      if (net !== captured - fees) sums.push(`${c}: batches net ${net}, captures ${captured} − fees ${fees} = ${captured - fees}`);
      else sums.push(`${c} ok: ${net}`);
    }
    o.check(
      `the batches' nets add up to the captures minus their fees, per currency (${sums.join(', ')})`,
      sums.every((s) => s.includes(' ok: ')),
      sums.filter((s) => !s.includes(' ok: ')).join('; '),
    );

    // Every batch due is available, settled once; the others pending, settled never.
    const settlementPostings = await st.db
      .selectFrom('ledger_postings')
      .select(['ref', sql<number>`count(*)`.as('n')])
      .where('account_id', '=', account)
      .where('reason', '=', 'settlement')
      .groupBy('ref')
      .execute();
    const postingsOf = new Map(settlementPostings.map((p) => [p.ref, Number(p.n)]));
    const unsettled = await st.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(['p.batch_id', sql<number>`count(*)`.as('n')])
      .where('p.account_id', '=', account)
      .where('e.ledger_account', '=', 'merchant_pending')
      .where('e.settled', '=', 0)
      .groupBy('p.batch_id')
      .execute();
    const unsettledOf = new Map(unsettled.map((u) => [u.batch_id, Number(u.n)]));
    const states: string[] = [];
    let due = 0;
    for (const b of batches) {
      const isDue = Number(b.available_at) <= end;
      if (isDue) due++;
      const posted = postingsOf.get(b.batch_id) ?? 0;
      if (isDue && (b.status !== 'available' || posted !== 1 || (unsettledOf.get(b.batch_id) ?? 0) !== 0))
        states.push(`${b.day} ${b.currency} due: ${b.status}, ${posted} settlement postings, ${unsettledOf.get(b.batch_id) ?? 0} unsettled pending entries`);
      if (!isDue && (b.status !== 'pending' || posted !== 0)) states.push(`${b.day} ${b.currency} not due: ${b.status}, ${posted} settlement postings`);
    }
    o.check(
      `every batch whose available_at passed is available with one settlement posting and no unsettled entry, the others pending (${due} due of ${batches.length})`,
      due > 0 && states.length === 0,
      states.slice(0, 5).join('; '),
    );

    const avail = await st.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.posting_id', 'e.posting_id')
      .select(['p.currency', sql<number>`coalesce(sum(e.amount_minor), 0)`.as('total')])
      .where('p.account_id', '=', account)
      .where('e.ledger_account', '=', 'merchant_available')
      .groupBy('p.currency')
      .execute();
    const balances: string[] = [];
    for (const c of CURRENCIES) {
      const have = Number(avail.find((a) => a.currency === c)?.total ?? 0);
      const want = batches.filter((b) => b.currency === c && b.status === 'available').reduce((a, b) => a + Number(b.pending_minor), 0);
      if (have !== want) balances.push(`${c}: merchant_available ${have}, available batches' pending parts ${want}`);
    }
    o.check("merchant_available equals the available batches' pending parts, per currency", balances.length === 0, balances.join('; '));

    const verified = await verifyLedger(st.db);
    o.check(`the ledger verifies, settlement checks included (${verified.postings} postings)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(
      `kills landed mid-sweep, work left for the resumed run (${totals.midSweep} of ${totals.kills} kills; ${totals.gatewayKills} gateway kills)`,
      totals.midSweep > 0,
    );
    o.log(
      `  settlement totals: ${totals.paid} payments, ${batches.length} batches (${batches.filter((b) => b.status === 'available').length} available); ${totals.runs} clock advance runs, ${totals.kills} killed (${totals.midSweep} mid-sweep), ${totals.gatewayKills} gateway kills; ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    await fresh.drop();
  }
}
