// Two gateway worker processes on one database run the scheduler side by side (issue 11,
// "Done when"): every deduction happens once. Subscriptions made 40 days ago with a daily
// plan are three deductions behind; both processes race for the same jobs and rows (leases
// with FOR UPDATE SKIP LOCKED on PostgreSQL, one writer on SQLite).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { verifyLedger } from '../ledger/verify.js';
import { directPayment, ENGINE, readXml, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DAY = 86_400_000;
const SUBSCRIPTIONS = 120;
const DEDUCTIONS_EACH = 3; // billing_cycle 4: the first payment and three deductions

let gw: TestGateway;
const workers: ChildProcess[] = [];
before(async () => {
  gw = await testGateway({ start_ms: Date.now() - 40 * DAY });
});
after(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await gw.close();
});

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), 'worker'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: gw.database_url,
      TOLLGATE_DATA_DIR: gw.dir,
      TOLLGATE_MASTER_KEY: TEST_MASTER_KEY,
      TOLLGATE_LOG_LEVEL: 'warn',
      TOLLGATE_DEMO_MERCHANT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGKILL') console.error(`worker exited ${code ?? signal}: ${stderr}`);
  });
  workers.push(child);
  return child;
}

test(`two worker processes on one ${ENGINE} database charge each of ${SUBSCRIPTIONS * DEDUCTIONS_EACH} due deductions once`, { timeout: 180_000 }, async () => {
  const merchants = [gw.merchant, await gw.newMerchant(), await gw.newMerchant()];
  const first: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const m = merchants[i % merchants.length] as (typeof merchants)[number];
    const body = directPayment(m, { subscription: { contract_name: `daily-${i}`, interval: 'day', billing_cycle: 4 } });
    const x = readXml(await gw.post('/v1/authorise', body, { merchant: m }));
    assert.ok(x.recurring_id, JSON.stringify(x));
    first.push(body.order_no as string);
  }
  const db = gw.runtime.store.db;
  const completed = async () =>
    Number(
      (
        await db
          .selectFrom('subscriptions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '=', 'Completed')
          .executeTakeFirstOrThrow()
      ).n,
    );

  const a = startWorker();
  const b = startWorker();
  const deadline = Date.now() + 150_000;
  while ((await completed()) < SUBSCRIPTIONS) {
    assert.ok(Date.now() < deadline, `only ${await completed()} of ${SUBSCRIPTIONS} completed in time`);
    assert.equal(a.exitCode, null, 'worker a is running');
    assert.equal(b.exitCode, null, 'worker b is running');
    await new Promise((r) => setTimeout(r, 250));
  }
  a.kill('SIGTERM');
  b.kill('SIGTERM');

  const payments = await db.selectFrom('payments').select(['order_no', 'status', 'details']).where('kind', '=', 'recurring').execute();
  assert.equal(payments.length, SUBSCRIPTIONS * DEDUCTIONS_EACH, 'one payment per deduction, none twice');
  const seen = new Set<string>();
  for (const p of payments) {
    assert.equal(p.status, 'captured');
    const d = JSON.parse(p.details) as { recurring_id: string; deduction: number; retry: number };
    const key = `${d.recurring_id}:${d.deduction}:${d.retry}`;
    assert.ok(!seen.has(key), `deduction ${key} charged twice`);
    seen.add(key);
  }
  const orderNos = new Set(payments.map((p) => p.order_no));
  for (const o of first) for (let n = 1; n <= DEDUCTIONS_EACH; n++) assert.ok(orderNos.has(`${o}-R${n}`), `${o}-R${n} exists`);
  const charged = await db.selectFrom('events').select('object_id').where('event_type', '=', 'subscription.charged').execute();
  assert.equal(charged.length, SUBSCRIPTIONS * DEDUCTIONS_EACH, 'one event per deduction');
  const subs = await db.selectFrom('subscriptions').select(['charged_count', 'charge_seq']).execute();
  assert.ok(subs.every((s) => s.charged_count === DEDUCTIONS_EACH && s.charge_seq === DEDUCTIONS_EACH));
  const jobs = await db.selectFrom('scheduled_jobs').select(['job_key', 'status']).where('kind', '=', 'subscription.charge').execute();
  assert.deepEqual(
    jobs.filter((j) => j.status !== 'done'),
    [],
  );
  const ledger = await verifyLedger(db);
  assert.ok(ledger.ok, ledger.problems.join('\n'));
});
