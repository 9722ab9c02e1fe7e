// Notification delivery as a process-local task of the scheduler (issue 30 item 3): what is
// recorded while it runs is delivered without anyone calling the worker, each event once
// although two processes run the task, and a stop during a delivery waits for its outcome.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Scheduler } from '../scheduler/scheduler.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { DELIVERY_TASK, deliveryTask } from './tasks.js';
import { type Receiver, type Responder, startReceiver } from './test-receiver.js';

let gw: TestGateway;
const receivers: Receiver[] = [];
before(async () => {
  // A short timeout, so the delivery a stop waits for ends soon.
  gw = await testGateway({ settings: { webhook_timeout_ms: 500 } });
});
after(async () => {
  for (const r of receivers) await r.close();
  await gw.close();
});

async function receiver(respond?: Responder): Promise<Receiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

async function pay(notify_url: string): Promise<string> {
  const res = await gw.post('/v1/authorise', directPayment(gw.merchant, { notify_url }));
  assert.equal(res.statusCode, 200, res.body);
  const transaction_id = readXml(res).transaction_id as string;
  const ev = await gw.runtime.store.db.selectFrom('events').select('event_id').where('object_id', '=', transaction_id).executeTakeFirstOrThrow();
  return ev.event_id;
}

const attemptsOf = (event_id: string) => gw.runtime.store.db.selectFrom('event_attempts').selectAll().where('event_id', '=', event_id).execute();

/** Two processes' background work: delivery alone. */
function twoProcesses(): Scheduler[] {
  return [0, 1].map(() => {
    const s = new Scheduler(gw.runtime.store);
    deliveryTask(gw.runtime, s);
    assert.deepEqual(s.localTaskNames(), [DELIVERY_TASK]);
    return s;
  });
}

test('events recorded while the task runs are delivered by it, each once although two processes run it', async () => {
  const r = await receiver();
  const schedulers = twoProcesses();
  for (const s of schedulers) s.start();
  try {
    const ids = [await pay(r.url), await pay(r.url), await pay(r.url)];
    const deadline = Date.now() + 20_000;
    while (!ids.every((id) => r.ids().has(id))) {
      assert.ok(Date.now() < deadline, 'not delivered');
      await sleep(20);
    }
    await sleep(300); // a duplicate would have arrived by now
    for (const id of ids) {
      assert.equal(r.received.filter((x) => x.headers['webhook-id'] === id).length, 1, 'delivered once');
      const row = await gw.runtime.store.db.selectFrom('events').select('status').where('event_id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'delivered');
    }
  } finally {
    for (const s of schedulers) await s.stop();
  }
});

test('a stop while a delivery runs waits for it, and its attempt is recorded before the stop returns', async () => {
  const r = await receiver(() => 'hang');
  const s = new Scheduler(gw.runtime.store);
  deliveryTask(gw.runtime, s);
  s.start();
  const event_id = await pay(r.url);
  const deadline = Date.now() + 20_000;
  while (!r.ids().has(event_id)) {
    assert.ok(Date.now() < deadline, 'not sent');
    await sleep(10);
  }
  assert.equal((await attemptsOf(event_id)).length, 0, 'the attempt is still running');
  await s.stop();
  const attempts = await attemptsOf(event_id);
  assert.equal(attempts.length, 1, 'recorded before stop returned');
  assert.equal(attempts[0]?.outcome, 'retry');
  const row = await gw.runtime.store.db.selectFrom('events').selectAll().where('event_id', '=', event_id).executeTakeFirstOrThrow();
  assert.equal(Number(row.lease_until), 0, 'the lease is given back');
});
