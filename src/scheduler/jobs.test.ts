// The scheduler inside `serve` (issue 11 item 3): every periodic job of the gateway is a
// recurring kind of the one scheduler, `serve` runs one loop for all of them beside the
// notification worker, and a sweep moved onto it still does its work (a manual
// authorisation past 7 days expires through the loop alone).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { backgroundTasks, createScheduler, schedulerTask } from '../cli/background.js';
import { MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { orderOf, pay } from '../test/lifecycle.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

test('every periodic job is a recurring kind of the one scheduler; serve runs two background tasks', () => {
  const kinds = createScheduler(gw.runtime).registeredKinds().sort();
  assert.deepEqual(kinds, [
    'idempotency.purge',
    'ledger.settlement',
    'payment.expiry',
    'payout.check',
    'payout.dispatch',
    'portal.sessions.purge',
    'review.expiry',
    'scheduler.purge',
    'subscription.charge',
    'threeds.expiry',
  ]);
  // The scheduler's loop and the notification delivery worker: no other timer.
  assert.equal(backgroundTasks.length, 2);
});

test('the scheduler loop expires a manual authorisation past its window, and a second loop beside it does not repeat it', async () => {
  const p = await pay(gw, { manual: true });
  gw.clock.advance(MANUAL_CAPTURE_WINDOW_MS + 1);
  const a = schedulerTask(gw.runtime);
  const b = schedulerTask(gw.runtime);
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
