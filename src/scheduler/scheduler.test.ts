// The shared scheduler (issue 11 item 3) on the engine under test: jobs are written with
// the change that makes them due and deduplicated by key; a claim is exclusive across
// processes (two Stores on one database stand for two processes); a dead process's jobs are
// taken over when its lease lapses and its late outcome is refused; failures back off and
// end failed; batches are bounded; recurring sweeps re-due themselves; an exactly-once
// handler's effect commits with its done mark and is never repeated.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../db/store.js';
import { ENGINE, type TestGateway, testGateway } from '../test/harness.js';
import { cleanError, enqueueJob, type JobSpec, purgeFinishedJobs, type RunReport, Scheduler } from './scheduler.js';

let gw: TestGateway;
let store: Store;
/** A second connection set to the same database: another gateway process. */
let other: Store;
before(async () => {
  gw = await testGateway();
  store = gw.runtime.store;
  other = openStore(gw.database_url);
  await store.transaction((tx) => sql`CREATE TABLE sched_effects (job_key text NOT NULL, runner text NOT NULL)`.execute(tx));
});
after(async () => {
  await other.close();
  await gw.close();
});

const T0 = 1_750_000_000_000;
let seq = 0;
/** A kind nobody else in this file uses, so tests do not claim each other's jobs. */
const freshKind = (label: string) => `t.${label}.${++seq}`;

async function enqueueMany(kind: string, n: number, due_at: number, extra: Partial<JobSpec> = {}): Promise<string[]> {
  const keys = Array.from({ length: n }, (_, i) => `${kind}:${i}`);
  await store.transaction(async (tx) => {
    for (const [i, job_key] of keys.entries()) await enqueueJob(tx, { kind, job_key, due_at: due_at + i, payload: { i }, ...extra }, T0);
  });
  return keys;
}

const row = (job_key: string) => store.db.selectFrom('scheduled_jobs').selectAll().where('job_key', '=', job_key).executeTakeFirstOrThrow();

async function effects(prefix: string): Promise<string[]> {
  const r = await sql<{ job_key: string }>`SELECT job_key FROM sched_effects WHERE job_key LIKE ${`${prefix}%`}`.execute(store.db);
  return r.rows.map((x) => x.job_key);
}

/** Runs batches until one claims nothing. */
async function drain(s: Scheduler, now_ms: number, limit: number): Promise<RunReport[]> {
  const reports: RunReport[] = [];
  for (let i = 0; i < 1_000; i++) {
    const r = await s.runDue(now_ms, limit);
    reports.push(r);
    if (r.claimed === 0) return reports;
  }
  throw new Error('drain did not finish');
}

const noJitter = () => 0.5;

describe('enqueue', () => {
  test('a job_key enqueued twice makes one job; a rolled-back change leaves no job', async () => {
    const kind = freshKind('dedupe');
    const spec = { kind, job_key: `${kind}:sub_1:charge:1`, account_id: 'acc_1', due_at: T0 + 1_000, payload: { amount_minor: 1000 } };
    assert.equal(await store.transaction((tx) => enqueueJob(tx, spec, T0)), true);
    assert.equal(await store.transaction((tx) => enqueueJob(tx, { ...spec, due_at: T0 + 9_999, payload: { other: true } }, T0)), false);
    const r = await row(spec.job_key);
    assert.equal(r.status, 'due');
    assert.equal(Number(r.due_at), T0 + 1_000, 'the first enqueue wins');
    assert.deepEqual(JSON.parse(r.payload), { amount_minor: 1000 });
    assert.equal(r.account_id, 'acc_1');

    const lost = { ...spec, job_key: `${kind}:rolled-back` };
    await assert.rejects(
      store.transaction(async (tx) => {
        await enqueueJob(tx, lost, T0);
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.equal(await store.db.selectFrom('scheduled_jobs').select('job_key').where('job_key', '=', lost.job_key).executeTakeFirst(), undefined);
  });

  test('bad specs are refused before anything is written', async () => {
    await assert.rejects(
      store.transaction((tx) => enqueueJob(tx, { kind: 'Bad Kind', job_key: 'k', due_at: T0 }, T0)),
      /job kind/,
    );
    await assert.rejects(
      store.transaction((tx) => enqueueJob(tx, { kind: 't.x', job_key: 'k'.repeat(201), due_at: T0 }, T0)),
      /job_key/,
    );
    await assert.rejects(
      store.transaction((tx) => enqueueJob(tx, { kind: 't.x', job_key: 'k', due_at: 1.5 }, T0)),
      /due_at/,
    );
    await assert.rejects(
      store.transaction((tx) => enqueueJob(tx, { kind: 't.x', job_key: 'k', due_at: T0, payload: 'x'.repeat(20_000) }, T0)),
      /payload over/,
    );
  });
});

describe('claims', () => {
  test('two processes running the scheduler at once run each job exactly once', async () => {
    const kind = freshKind('race');
    const keys = await enqueueMany(kind, 400, T0);
    const ran = new Map<string, string[]>();
    const make = (s: Store, name: string) => {
      const sch = new Scheduler(s, { concurrency: 8 });
      sch.register(kind, async (job) => {
        // Yield so the two processes' batches interleave.
        await new Promise((r) => setImmediate(r));
        ran.set(job.job_key, [...(ran.get(job.job_key) ?? []), name]);
        return undefined;
      });
      return sch;
    };
    const a = make(store, 'a');
    const b = make(other, 'b');
    const [ra, rb] = await Promise.all([drain(a, T0 + 1_000, 25), drain(b, T0 + 1_000, 25)]);
    assert.equal(ran.size, keys.length, 'every job ran');
    const twice = [...ran].filter(([, who]) => who.length !== 1);
    assert.deepEqual(twice, [], 'no job ran twice');
    const done = (rs: RunReport[]) => rs.reduce((n, r) => n + r.done, 0);
    assert.equal(done(ra) + done(rb), keys.length);
    assert.ok(done(ra) > 0 && done(rb) > 0, `both processes took work (a ${done(ra)}, b ${done(rb)})`);
    const statuses = await store.db.selectFrom('scheduled_jobs').select(['status', 'attempts']).where('kind', '=', kind).execute();
    assert.ok(
      statuses.every((s) => s.status === 'done' && s.attempts === 1),
      'each claimed once, done once',
    );
  });

  test('a batch claims at most its limit, in due order, and runs at most `concurrency` handlers at once', async () => {
    const kind = freshKind('batch');
    await enqueueMany(kind, 250, T0);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const s = new Scheduler(store, { concurrency: 4 });
    s.register(kind, async (job) => {
      running++;
      peak = Math.max(peak, running);
      order.push((job.payload as { i: number }).i);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      return undefined;
    });
    const claimed = (await drain(s, T0 + 1_000, 100)).map((r) => r.claimed);
    assert.deepEqual(claimed, [100, 100, 50, 0]);
    assert.equal(peak, 4);
    assert.deepEqual(
      order.slice(0, 100).sort((x, y) => x - y),
      Array.from({ length: 100 }, (_, i) => i),
      'the first batch is the 100 earliest',
    );
  });

  test('only due jobs of registered kinds are claimed', async () => {
    const kind = freshKind('due');
    const unknown = freshKind('unknown');
    await enqueueMany(kind, 1, T0 + 10_000);
    await enqueueMany(unknown, 1, T0);
    const s = new Scheduler(store);
    s.register(kind, async () => undefined);
    assert.equal((await s.runDue(T0 + 9_999, 100)).claimed, 0, 'not due yet');
    assert.equal((await s.runDue(T0 + 10_000, 100)).done, 1);
    assert.equal((await row(`${unknown}:0`)).status, 'due', "another version's kind is left alone");
  });

  test("one account's jobs alone, strictly in due order with concurrency 1 (test clocks)", async () => {
    const kind = freshKind('account');
    await store.transaction(async (tx) => {
      for (const [job_key, account_id, due_at] of [
        ['c', 'acc_A', T0 + 3],
        ['a', 'acc_A', T0 + 1],
        ['x', 'acc_B', T0],
        ['b', 'acc_A', T0 + 2],
      ] as const)
        await enqueueJob(tx, { kind, job_key: `${kind}:${job_key}`, account_id, due_at }, T0);
    });
    const seen: string[] = [];
    const s = new Scheduler(store);
    s.register(kind, async (job) => {
      await new Promise((r) => setTimeout(r, 3 - (job.due_at - T0)));
      seen.push(job.job_key.slice(kind.length + 1));
      return undefined;
    });
    const r = await s.runDue(T0 + 10, 100, { account_id: 'acc_A', concurrency: 1 });
    assert.equal(r.done, 3);
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal((await row(`${kind}:x`)).status, 'due');
  });
});

describe('crashes and leases', () => {
  test("a dead process's job is taken over when its lease lapses; its late outcome is refused", async () => {
    const kind = freshKind('takeover');
    const [key] = (await enqueueMany(kind, 1, T0)) as [string];
    let release: () => void = () => {};
    const stuck = new Promise<void>((r) => {
      release = r;
    });
    const runs: string[] = [];
    const dying = new Scheduler(store, { lease_ms: 60_000 });
    dying.register(kind, async () => {
      runs.push('dying');
      await stuck;
      return undefined;
    });
    const late = dying.runDue(T0, 10);
    await until(() => runs.length === 1);
    assert.equal((await row(key)).status, 'running');

    let wall = Date.now();
    const heir = new Scheduler(other, { lease_ms: 60_000, clock: () => wall });
    heir.register(kind, async () => {
      runs.push('heir');
      return undefined;
    });
    assert.equal((await heir.runDue(T0, 10)).claimed, 0, 'a live lease is respected');
    wall += 60_001;
    assert.deepEqual(await heir.runDue(T0, 10), { claimed: 1, done: 1, again: 0, retried: 0, failed: 0, lost: 0 });
    release();
    assert.deepEqual(await late, { claimed: 1, done: 0, again: 0, retried: 0, failed: 0, lost: 1 }, 'the old claim records nothing');
    const r = await row(key);
    assert.equal(r.status, 'done');
    assert.equal(r.attempts, 2, 'both claims counted');
    assert.deepEqual(runs, ['dying', 'heir'], 'at least once: the dead process had started it');
  });

  test('an exactly-once job whose claim was taken over does not repeat its effect', async () => {
    const blocker = freshKind('blocker');
    const kind = freshKind('once');
    await store.transaction(async (tx) => {
      await enqueueJob(tx, { kind: blocker, job_key: `${blocker}:0`, due_at: T0 }, T0);
      await enqueueJob(tx, { kind, job_key: `${kind}:0`, due_at: T0 + 1 }, T0);
    });
    let release: () => void = () => {};
    const stuck = new Promise<void>((r) => {
      release = r;
    });
    const effect = (runner: string) => async (tx: Parameters<Parameters<Scheduler['registerTx']>[1]>[0], job: { job_key: string }) => {
      await sql`INSERT INTO sched_effects (job_key, runner) VALUES (${job.job_key}, ${runner})`.execute(tx);
      return undefined;
    };
    // The first process claims both, then stalls on the first (concurrency 1) as if frozen.
    const first = new Scheduler(store, { concurrency: 1 });
    first.register(blocker, async () => {
      await stuck;
      return undefined;
    });
    first.registerTx(kind, effect('first'));
    const late = first.runDue(T0 + 10, 10);
    await until(async () => (await row(`${kind}:0`)).status === 'running');

    const heir = new Scheduler(other, { clock: () => Date.now() + 61_000 });
    heir.register(blocker, async () => undefined);
    heir.registerTx(kind, effect('heir'));
    const took = await heir.runDue(T0 + 10, 10);
    assert.equal(took.done, 2);
    release();
    const r = await late;
    assert.equal(r.lost, 2, 'neither outcome of the frozen process is recorded');
    assert.deepEqual(await effects(`${kind}:`), [`${kind}:0`], 'the effect happened once, by the heir');
    const jobs = await store.db.selectFrom('scheduled_jobs').select(['status']).where('kind', 'in', [kind, blocker]).execute();
    assert.deepEqual(
      jobs.map((j) => j.status),
      ['done', 'done'],
    );
  });

  test('a job that never reports back (its process dies every time) ends failed after its attempts, not run again', async () => {
    const kind = freshKind('poison');
    const [key] = (await enqueueMany(kind, 1, T0)) as [string];
    let calls = 0;
    const hang = new Promise<undefined>(() => {});
    for (let i = 0; i < 2; i++) {
      const s = new Scheduler(store, { clock: () => Date.now() + i * 61_000 });
      s.register(
        kind,
        () => {
          calls++;
          return hang;
        },
        { max_attempts: 2 },
      );
      void s.runDue(T0, 10);
      await until(() => calls === i + 1);
    }
    const last = new Scheduler(store, { clock: () => Date.now() + 3 * 61_000 });
    last.register(
      kind,
      async () => {
        calls++;
        return undefined;
      },
      { max_attempts: 2 },
    );
    assert.equal((await last.runDue(T0, 10)).failed, 1);
    assert.equal(calls, 2, 'the third claim did not run it');
    const r = await row(key);
    assert.equal(r.status, 'failed');
    assert.match(r.last_error, /no outcome after 2 claims/);
  });
});

describe('failures', () => {
  test('a failing job backs off 5 s, 30 s, then ends failed; the error is kept without card numbers', async () => {
    const kind = freshKind('fails');
    const [key] = (await enqueueMany(kind, 1, T0)) as [string];
    let calls = 0;
    const s = new Scheduler(store, { random: noJitter });
    s.register(
      kind,
      async () => {
        calls++;
        throw new Error('processor said no for 4242 4242 4242 4242 (attempt)');
      },
      { max_attempts: 3 },
    );
    assert.equal((await s.runDue(T0, 10)).retried, 1);
    let r = await row(key);
    assert.deepEqual([r.status, r.attempts, Number(r.due_at) - T0, r.lease_token], ['due', 1, 5_000, null]);
    assert.equal(r.last_error, 'processor said no for [number removed] (attempt)');
    assert.equal((await s.runDue(T0 + 4_999, 10)).claimed, 0, 'not before its backoff');
    assert.equal((await s.runDue(T0 + 5_000, 10)).retried, 1);
    r = await row(key);
    assert.equal(Number(r.due_at), T0 + 5_000 + 30_000);
    assert.equal((await s.runDue(T0 + 35_000, 10)).failed, 1);
    r = await row(key);
    assert.deepEqual([r.status, r.attempts], ['failed', 3]);
    assert.equal((await s.runDue(T0 + 10_000_000, 10)).claimed, 0, 'a failed job stays failed');
    assert.equal(calls, 3);
  });

  test('an exactly-once handler that throws leaves no effect; its retry commits the effect once', async () => {
    const kind = freshKind('txfail');
    const [key] = (await enqueueMany(kind, 1, T0)) as [string];
    let calls = 0;
    const s = new Scheduler(store, { random: noJitter });
    s.registerTx(kind, async (tx, job) => {
      calls++;
      await sql`INSERT INTO sched_effects (job_key, runner) VALUES (${job.job_key}, 'tx')`.execute(tx);
      if (calls === 1) throw new Error('failed after writing');
      return undefined;
    });
    assert.equal((await s.runDue(T0, 10)).retried, 1);
    assert.deepEqual(await effects(key), [], 'rolled back with the failure');
    assert.equal((await s.runDue(T0 + 5_000, 10)).done, 1);
    assert.deepEqual(await effects(key), [key]);
    assert.equal((await row(key)).status, 'done');
  });

  test('cleanError bounds the message and removes card-number-like digit runs', () => {
    assert.equal(cleanError(new Error('card 4000000000000002 declined')), 'card [number removed] declined');
    assert.equal(cleanError(new Error('pan 4242-4242-4242-4242')), 'pan [number removed]');
    assert.equal(cleanError(new Error('order 12345, attempt 3 of 10000000000')), 'order 12345, attempt 3 of 10000000000');
    assert.equal(cleanError('x'.repeat(2_000)).length, 500);
  });
});

describe('recurring sweeps', () => {
  test('a sweep runs once per tick among processes and re-dues itself', async () => {
    const kind = freshKind('sweep');
    let runs = 0;
    const make = (s: Store) => {
      const sch = new Scheduler(s);
      sch.recurring(kind, 30_000, async () => {
        runs++;
        await new Promise((r) => setTimeout(r, 5));
      });
      return sch;
    };
    const a = make(store);
    const b = make(other);
    await Promise.all([a.installRecurring(T0), b.installRecurring(T0)]);
    const key = `recurring:${kind}`;
    assert.equal((await store.db.selectFrom('scheduled_jobs').select('job_key').where('kind', '=', kind).execute()).length, 1, 'one row');
    await Promise.all([a.runDue(T0, 10), b.runDue(T0, 10)]);
    assert.equal(runs, 1, 'one process ran the tick');
    let r = await row(key);
    assert.deepEqual([r.status, Number(r.due_at), r.attempts], ['due', T0 + 30_000, 0]);
    await Promise.all([a.runDue(T0 + 29_999, 10), b.runDue(T0 + 29_999, 10)]);
    assert.equal(runs, 1);
    await Promise.all([a.runDue(T0 + 30_000, 10), b.runDue(T0 + 30_000, 10)]);
    assert.equal(runs, 2);
    r = await row(key);
    assert.equal(Number(r.due_at), T0 + 60_000);
  });

  test('a failing sweep retries within its interval and never ends failed', async () => {
    const kind = freshKind('sweepfail');
    const s = new Scheduler(store, { random: noJitter });
    s.recurring(kind, 20_000, async () => {
      throw new Error('database busy');
    });
    await s.installRecurring(T0);
    let now = T0;
    for (let i = 0; i < 8; i++) {
      assert.equal((await s.runDue(now, 10)).retried, 1);
      const r = await row(`recurring:${kind}`);
      assert.equal(r.status, 'due');
      assert.ok(Number(r.due_at) - now <= 20_000, 'at most one interval later');
      now = Number(r.due_at);
    }
  });

  test('installing again revives a finished sweep and brings forward a shortened interval', async () => {
    const kind = freshKind('install');
    const key = `recurring:${kind}`;
    const long = new Scheduler(store);
    long.recurring(kind, 3_600_000, async () => {});
    await long.installRecurring(T0);
    await long.runDue(T0, 10);
    assert.equal(Number((await row(key)).due_at), T0 + 3_600_000);
    const short = new Scheduler(store);
    short.recurring(kind, 60_000, async () => {});
    await short.installRecurring(T0 + 1_000);
    assert.equal(Number((await row(key)).due_at), T0 + 61_000);
    await store.transaction((tx) => tx.updateTable('scheduled_jobs').set({ status: 'failed' }).where('job_key', '=', key).execute());
    await short.installRecurring(T0 + 2_000);
    const r = await row(key);
    assert.deepEqual([r.status, Number(r.due_at)], ['due', T0 + 2_000]);
  });

  test('old done jobs are purged in bounded runs; due and failed ones stay', async () => {
    const kind = freshKind('purge');
    await enqueueMany(kind, 5, T0);
    const s = new Scheduler(store);
    s.register(kind, async () => undefined);
    await s.runDue(T0 + 10, 3);
    const later = T0 + 31 * 24 * 3600 * 1000;
    const before = await store.db.selectFrom('scheduled_jobs').select(['job_key', 'status']).where('kind', '=', kind).orderBy('job_key').execute();
    assert.deepEqual(
      before.map((j) => j.status),
      ['done', 'done', 'done', 'due', 'due'],
    );
    assert.equal(await purgeFinishedJobs(store, later, undefined, 2), 2);
    assert.equal(await purgeFinishedJobs(store, T0 + 1_000), 0, 'recent done jobs are kept (they still dedupe)');
    await purgeFinishedJobs(store, later);
    const left = await store.db.selectFrom('scheduled_jobs').select('status').where('kind', '=', kind).execute();
    assert.deepEqual(
      left.map((j) => j.status),
      ['due', 'due'],
    );
  });
});

async function until(check: () => boolean | Promise<boolean>, timeout_ms = 10_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out on ${ENGINE}`);
}
