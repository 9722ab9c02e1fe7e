// kill -9 in the middle of a batch (issue 11 item 3): a real process runs the scheduler on
// the engine under test and is killed while its batches run. A second scheduler then takes
// over the jobs whose lease lapsed and finishes everything. Exactly-once jobs (their effect
// written in the transaction that marks them done) have exactly one effect each; at-least-
// once jobs have at least one, and only the few in flight at the kill ran twice. No job is
// lost, none is left running, none is done twice.
//
// This file is also the child: with SCHEDULER_KILL_CHILD set to a database URL it runs the
// scheduler on it until killed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../db/store.js';
import { ENGINE, testGateway } from '../test/harness.js';
import { nodeArgs } from '../test/process.js';
import { enqueueJob, Scheduler } from './scheduler.js';

const JOBS_PER_KIND = 1_500;
const BATCH = 50;
const LEASE_MS = 60_000;
/** The child reports this job's effect, then the test kills it. */
const KILL_AT = 'least:300';

function kinds(s: Scheduler, store: Store, runner: string): void {
  s.registerTx('k.once', async (tx, job) => {
    await sql`INSERT INTO kill_effects (job_key, runner) VALUES (${job.job_key}, ${runner})`.execute(tx);
    return undefined;
  });
  s.register('k.least', async (job) => {
    await store.transaction((tx) => sql`INSERT INTO kill_effects (job_key, runner) VALUES (${job.job_key}, ${runner})`.execute(tx));
    if (runner === 'child' && job.job_key === KILL_AT) {
      // Tell the test to kill now, and linger so the kill lands inside this batch.
      process.stdout.write('mid-batch\n');
      await new Promise((r) => setTimeout(r, 5_000));
    }
    await new Promise((r) => setTimeout(r, 1));
    return undefined;
  });
}

async function child(url: string): Promise<void> {
  const store = openStore(url);
  const s = new Scheduler(store, { lease_ms: LEASE_MS, concurrency: 8 });
  kinds(s, store, 'child');
  for (;;) {
    const r = await s.runDue(Date.now(), BATCH);
    if (r.claimed === 0) await new Promise((res) => setTimeout(res, 10));
  }
}

const childUrl = process.env.SCHEDULER_KILL_CHILD;
if (childUrl) {
  await child(childUrl);
} else {
  test(`kill -9 mid-batch on ${ENGINE}: taken over after the lease, exactly-once effects once, nothing lost`, { timeout: 120_000 }, async () => {
    const gw = await testGateway();
    const store = gw.runtime.store;
    try {
      await store.transaction((tx) => sql`CREATE TABLE kill_effects (job_key text NOT NULL, runner text NOT NULL)`.execute(tx));
      const now = Date.now();
      await store.transaction(async (tx) => {
        for (let i = 0; i < JOBS_PER_KIND; i++) {
          // Interleaved so every batch holds both kinds.
          await enqueueJob(tx, { kind: 'k.once', job_key: `once:${i}`, due_at: now - JOBS_PER_KIND + i }, now);
          await enqueueJob(tx, { kind: 'k.least', job_key: `least:${i}`, due_at: now - JOBS_PER_KIND + i }, now);
        }
      });
      const effects = async () => (await sql<{ n: number }>`SELECT count(*) AS n FROM kill_effects`.execute(store.db)).rows[0]?.n ?? 0;

      const proc = spawn(process.execPath, nodeArgs('src/scheduler/kill.test.ts'), {
        env: { ...process.env, SCHEDULER_KILL_CHILD: gw.database_url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let midBatch = false;
      proc.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('mid-batch')) midBatch = true;
      });
      proc.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
      const deadline = Date.now() + 60_000;
      while (!midBatch) {
        assert.ok(Date.now() < deadline, `the child did no work: ${stderr.slice(-2000)}`);
        assert.equal(proc.exitCode, null, `the child exited: ${stderr.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      proc.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      const byStatus = async () =>
        Object.fromEntries(
          (
            await store.db
              .selectFrom('scheduled_jobs')
              .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
              .groupBy('status')
              .execute()
          ).map((r) => [r.status, Number(r.n)]),
        );
      const atKill = await byStatus();
      assert.ok((atKill.running ?? 0) > 0, `the kill landed mid-batch (${JSON.stringify(atKill)})`);
      assert.ok(Number(await effects()) >= 300, 'the child had done work');
      assert.ok((atKill.due ?? 0) > 0, 'work was left');

      // The restarted process: its clock is past the dead one's leases.
      const heir = new Scheduler(store, { lease_ms: LEASE_MS, clock: () => Date.now() + LEASE_MS + 1 });
      kinds(heir, store, 'heir');
      for (let i = 0; i < 1_000; i++) if ((await heir.runDue(Date.now(), BATCH)).claimed === 0) break;

      assert.deepEqual(await byStatus(), { done: 2 * JOBS_PER_KIND }, 'every job done, none left running');
      const counts = new Map<string, number>();
      for (const r of (await sql<{ job_key: string }>`SELECT job_key FROM kill_effects`.execute(store.db)).rows)
        counts.set(r.job_key, (counts.get(r.job_key) ?? 0) + 1);
      const once = [...counts].filter(([k]) => k.startsWith('once:'));
      const least = [...counts].filter(([k]) => k.startsWith('least:'));
      assert.equal(once.length, JOBS_PER_KIND, 'every exactly-once job had its effect');
      assert.deepEqual(
        once.filter(([, n]) => n !== 1),
        [],
        'no exactly-once effect repeated',
      );
      assert.equal(least.length, JOBS_PER_KIND, 'every at-least-once job had its effect');
      const repeated = least.filter(([, n]) => n > 1);
      assert.ok(
        repeated.every(([, n]) => n === 2),
        'repeated at most once',
      );
      assert.ok(
        repeated.some(([k]) => k === KILL_AT),
        'the job in flight at the kill ran again (at least once)',
      );
      assert.ok(repeated.length <= BATCH, `only jobs of the batch in flight repeat (${repeated.length})`);
      const attempts = await store.db.selectFrom('scheduled_jobs').select('attempts').where('attempts', '>', 2).execute();
      assert.equal(attempts.length, 0, 'no job claimed more than twice');
      process.stdout.write(`# at kill: ${JSON.stringify(atKill)}; at-least-once jobs run twice: ${repeated.length}\n`);
    } finally {
      await gw.close();
    }
  });
}
