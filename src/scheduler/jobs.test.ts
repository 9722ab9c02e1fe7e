// The scheduler inside `serve` (issue 11 item 3): every periodic job of the gateway is a
// recurring kind of the one scheduler, whose local tasks are all the background work of a
// process (issue 30 item 3: the jobs' poll, notification delivery, the idempotency repair, the processors' re-reading),
// and a sweep moved onto it still does its work (a manual authorisation past 7 days expires
// through the loop alone).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { backgroundWork, createScheduler } from '../cli/background.js';
import { MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { orderOf, pay } from '../test/lifecycle.js';
import { pollJobs } from './jobs.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

test('every periodic job is a recurring kind of the one scheduler; its local tasks are all the background work, by role', () => {
  const kinds = createScheduler(gw.runtime).registeredKinds().sort();
  assert.deepEqual(kinds, [
    'dispute.overdue',
    'dispute.respond',
    'dispute.sandbox_decide',
    'dispute.sandbox_open',
    'idempotency.purge',
    'payment.expiry',
    'payout.check',
    'payout.dispatch',
    'portal.sessions.purge',
    'processor.attempts',
    'review.expiry',
    'scheduler.purge',
    'settlement.batches',
    'subscription.charge',
    'threeds.expiry',
  ]);
  // No other timer: serve with the worker on, serve with TOLLGATE_WORKER=0, `tollgate worker`.
  const tasks = (jobs: boolean, serving: boolean) => backgroundWork(gw.runtime, { jobs, serving }).localTaskNames();
  assert.deepEqual(tasks(true, true), ['scheduler', 'notifications', 'idempotency.repair', 'processors.reload']);
  assert.deepEqual(tasks(false, true), ['idempotency.repair', 'processors.reload']);
  assert.deepEqual(tasks(true, false), ['scheduler', 'notifications'], '`tollgate worker` runs 2 background tasks');
});

test('the scheduler loop expires a manual authorisation past its window, and a second loop beside it does not repeat it', async () => {
  const p = await pay(gw, { manual: true });
  gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS + 1);
  const a = createScheduler(gw.runtime);
  const b = createScheduler(gw.runtime);
  pollJobs(gw.runtime, a);
  pollJobs(gw.runtime, b);
  a.start();
  b.start();
  try {
    const deadline = Date.now() + 10_000;
    while ((await orderOf(gw, p.transaction_id)).payment_status !== '7000') {
      assert.ok(Date.now() < deadline, 'the payment did not expire');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await a.stop();
    await b.stop();
  }
  const sweep = await gw.runtime.store.db.selectFrom('scheduled_jobs').selectAll().where('job_key', '=', 'recurring:payment.expiry').executeTakeFirstOrThrow();
  assert.equal(sweep.status, 'due');
  assert.equal(Number(sweep.due_at), gw.clock.now + 30_000, 're-dued one interval on');
  const expired = await gw.runtime.store.db
    .selectFrom('events')
    .select('event_id')
    .where('object_id', '=', p.transaction_id)
    .where('event_type', '=', 'payment.expired')
    .execute();
  assert.equal(expired.length, 1, 'one payment.expired event');
});
