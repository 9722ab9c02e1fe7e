// Delivery of notifications to a real local receiver (docs/contract.md §11): signatures a public
// Standard Webhooks library accepts, retries with one webhook-id, the attempt log, 410,
// Retry-After, redirects, timeouts, the send-time SSRF check, replay and several workers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { sign } from '../crypto/signature.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { EventService } from './service.js';
import { deliveryWorker } from './tasks.js';
import { type Receiver, type Responder, startReceiver } from './test-receiver.js';
import { DeliveryWorker, type WorkerOptions } from './worker.js';

let gw: TestGateway;
const receivers: Receiver[] = [];
before(async () => {
  gw = await testGateway();
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

function worker(o: Partial<WorkerOptions> = {}): DeliveryWorker {
  return new DeliveryWorker({
    store: gw.runtime.store,
    merchants: gw.runtime.merchants,
    allow_private: true,
    schedule_ms: [1_000, 1_000, 1_000, 1_000, 1_000],
    timeout_ms: 10_000, // generous: the machine is shared and the suite runs files in parallel
    now: () => gw.clock.now,
    ...o,
  });
}

/** Pays with a notify_url and returns the payment's event id. */
async function pay(notify_url: string, overrides: Record<string, unknown> = {}): Promise<{ event_id: string; transaction_id: string; order_no: string }> {
  const body = directPayment(gw.merchant, { notify_url, ...overrides });
  const res = await gw.post('/v1/authorise', body);
  assert.equal(res.statusCode, 200, res.body);
  const transaction_id = readXml(res).transaction_id as string;
  const ev = await gw.runtime.store.db.selectFrom('events').select('event_id').where('object_id', '=', transaction_id).executeTakeFirstOrThrow();
  return { event_id: ev.event_id, transaction_id, order_no: body.order_no as string };
}

const event = (id: string) => gw.runtime.store.db.selectFrom('events').selectAll().where('event_id', '=', id).executeTakeFirstOrThrow();
const attempts = (id: string) => new EventService(gw.runtime.store).listAttempts(id);
const forEvent = (r: Receiver, id: string) => r.received.filter((x) => x.headers['webhook-id'] === id);

/** Runs the worker, moving the clock past each retry delay, until the event settles (bounded). */
async function settle(w: DeliveryWorker, event_id: string, step_ms = 1_200, rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await w.drain();
    if ((await event(event_id)).status !== 'pending') return;
    gw.clock.advance(step_ms);
  }
}

/**
 * Digit runs of card-number length, starting like a card of the major brands (3–6), that
 * pass the Luhn check. (Times such as transaction_date, 14 digits starting with 2, are not cards.)
 */
function cardNumbersIn(text: string): string[] {
  return (text.match(/(?<!\d)[3-6]\d{12,18}(?!\d)/g) ?? []).filter((d) => {
    let sum = 0;
    for (let i = 0; i < d.length; i++) {
      let n = Number(d[d.length - 1 - i]);
      if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
      sum += n;
    }
    return sum % 10 === 0;
  });
}

describe('payload and signatures', () => {
  test('deliveries verify with the standardwebhooks package and with encryption_data; no card number travels', async () => {
    const r = await receiver();
    const ok = await pay(r.url);
    const declined = await pay(r.url, { card: '4000000000000002' });
    await worker().drain();
    const wh = new Webhook(gw.merchant.webhook_secret);
    for (const [e, type] of [
      [ok, 'payment.succeeded'],
      [declined, 'payment.failed'],
    ] as const) {
      const got = forEvent(r, e.event_id);
      assert.equal(got.length, 1);
      const req = got[0]!;
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const verified = wh.verify(req.body, headers) as Record<string, any>;
      assert.equal(verified.event_id, e.event_id);
      assert.equal(verified.event_type, type);
      assert.deepEqual(Object.keys(verified).sort(), ['created_at', 'data', 'encryption_data', 'event_id', 'event_type']);
      assert.equal(verified.data.transaction_id, e.transaction_id);
      assert.equal(verified.data.order_no, e.order_no);
      assert.match(verified.created_at, /^\d{4}-\d\d-\d\dT/);
      // docs/contract.md §2: the merchant checks encryption_data with its own key.
      const { encryption_data, ...rest } = verified;
      assert.equal(sign(rest, gw.merchant.secret_key), encryption_data);
      assert.equal(req.headers['content-type'], 'application/json');
      assert.throws(() => wh.verify(req.body.replace(e.order_no, 'TAMPERED'), headers));
      assert.deepEqual(cardNumbersIn(req.body), [], 'no card number in a notification');
      for (const pan of ['4242424242424242', '4000000000000002']) assert.ok(!req.body.includes(pan));
    }
    const stored = await gw.runtime.store.db.selectFrom('events').select('payload').execute();
    assert.deepEqual(cardNumbersIn(stored.map((s) => s.payload).join('\n')), [], 'no card number in the outbox');
    assert.equal((await event(ok.event_id)).status, 'delivered');
  });
});

describe('retries', () => {
  test('a receiver failing 3 times then answering 200 gets the event on attempt 4, always with the same webhook-id', async () => {
    const r = await receiver((_req, n) => (n < 3 ? { status: 500, body: 'down' } : { status: 200 }));
    const e = await pay(r.url);
    await settle(worker(), e.event_id);
    const got = forEvent(r, e.event_id);
    assert.equal(got.length, 4);
    assert.deepEqual(new Set(got.map((g) => g.headers['webhook-id'])), new Set([e.event_id]));
    const log = await attempts(e.event_id);
    assert.deepEqual(
      log.map((a) => [a.attempt_no, a.status_code, a.outcome]),
      [
        [1, 500, 'retry'],
        [2, 500, 'retry'],
        [3, 500, 'retry'],
        [4, 200, 'delivered'],
      ],
    );
    assert.equal(log[0]?.response_excerpt, 'down');
    assert.ok(log.every((a) => a.latency_ms >= 0 && a.started_at > 0));
    const row = await event(e.event_id);
    assert.equal(row.status, 'delivered');
    assert.equal(row.attempts, 4);
    assert.ok(row.delivered_at);
  });

  test('no retry before the scheduled time', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const e = await pay(r.url);
    const w = worker({ schedule_ms: [60_000] });
    await w.drain();
    await w.drain();
    assert.equal(forEvent(r, e.event_id).length, 1);
    const row = await event(e.event_id);
    assert.ok(row.next_attempt_at >= gw.clock.now + 54_000 && row.next_attempt_at <= gw.clock.now + 66_000, 'delay 60 s ± 10% jitter');
    gw.clock.advance(66_000);
    await w.drain();
    assert.equal(forEvent(r, e.event_id).length, 2);
    assert.equal((await event(e.event_id)).status, 'failed', 'schedule exhausted → failed');
  });

  test('operators see failed attempts: one warn line per attempt (no body, address or secret), delivery counts and the backlog in /metrics', async () => {
    const r = await receiver(() => ({ status: 400, body: 'bad request from the shop' }));
    const e = await pay(r.url);
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const metric = async (name: string) => {
      const text = (await gw.app.inject('/metrics')).body;
      const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : 0;
    };
    const retriesBefore = await metric('tollgate_notification_deliveries_total{result="retry"}');
    await deliveryWorker(gw.runtime, log).drain();
    const mine = lines.filter((l) => l.event_id === e.event_id);
    assert.equal(mine.length, 1, 'one line for the one attempt');
    const [line] = mine as [Record<string, unknown>];
    assert.equal(line.level, 40, 'warn');
    assert.equal(line.msg, 'notification attempt failed; will retry');
    assert.deepEqual([line.status_code, line.attempt, line.event_type, line.account_id], [400, 1, 'payment.succeeded', gw.merchant.account_id]);
    assert.ok(typeof line.next_attempt_at === 'string');
    const raw = JSON.stringify(line);
    for (const secret of [r.url, String(r.port), 'bad request from the shop', gw.merchant.secret_key])
      assert.ok(!raw.includes(secret), `the line carries ${secret}`);
    assert.ok((await metric('tollgate_notification_deliveries_total{result="retry"}')) >= retriesBefore + 1);
    assert.ok((await metric('tollgate_notification_backlog')) >= 1, 'the retried event is in the backlog');
    assert.ok((await metric('tollgate_notification_oldest_pending_age_seconds')) >= 0);
  });

  test('410 Gone stops at once', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const e = await pay(r.url);
    await settle(worker(), e.event_id);
    assert.equal(forEvent(r, e.event_id).length, 1);
    assert.equal((await event(e.event_id)).status, 'failed');
  });

  test('Retry-After is honoured (seconds), capped by the longest step', async () => {
    const r = await receiver(() => ({ status: 503, headers: { 'retry-after': '30' } }));
    const e = await pay(r.url);
    await worker({ schedule_ms: [1_000, 60_000] }).drain();
    assert.equal((await event(e.event_id)).next_attempt_at, gw.clock.now + 30_000);
    const e2 = await pay(r.url);
    await worker({ schedule_ms: [1_000, 10_000] }).drain();
    assert.equal((await event(e2.event_id)).next_attempt_at, gw.clock.now + 10_000);
  });

  test('a redirect is not followed: the attempt fails and nothing reaches the target', async () => {
    const inner = await receiver();
    for (const location of ['http://169.254.169.254/latest/meta-data/', inner.url]) {
      const r = await receiver(() => ({ status: 302, headers: { location } }));
      const e = await pay(r.url);
      await worker().drain();
      const [a] = await attempts(e.event_id);
      assert.equal(a?.status_code, 302);
      assert.match(a?.error ?? '', /redirect not followed/);
      assert.equal(a?.outcome, 'retry');
    }
    assert.equal(inner.received.length, 0);
  });

  test('no answer within the timeout is a failed attempt', async () => {
    const r = await receiver(() => 'hang');
    const e = await pay(r.url);
    await worker({ timeout_ms: 300 }).drain();
    const [a] = await attempts(e.event_id);
    assert.equal(a?.status_code, null);
    assert.match(a?.error ?? '', /no answer within 300 ms/);
    assert.equal((await event(e.event_id)).status, 'pending');
    await r.close(); // later retries of this event are refused at once instead of hanging
  });
});

describe('SSRF at send time', () => {
  test('with private targets not allowed, the loopback receiver is refused and never contacted', async () => {
    const r = await receiver();
    const e = await pay(r.url); // accepted on arrival: this gateway allows private targets
    await worker({ allow_private: false }).drain();
    assert.equal(r.received.length, 0);
    const [a] = await attempts(e.event_id);
    assert.match(a?.error ?? '', /notify_url refused: resolves to a forbidden address: 127\.0\.0\.1 is a loopback address/);
  });

  test('the connection goes to the address that was checked, not to a second lookup', async () => {
    const r = await receiver();
    const e = await pay(r.url.replace('127.0.0.1', 'localhost'));
    // The system would resolve "localhost" again; the guard's answer is the only one used.
    let lookups = 0;
    const resolver = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    await worker({ resolver }).drain();
    assert.equal(lookups, 1);
    assert.equal(forEvent(r, e.event_id).length, 1);
    assert.equal(forEvent(r, e.event_id)[0]?.headers.host, `localhost:${r.port}`);
  });
});

describe('tools', () => {
  test('list an order’s events and their deliveries; replay one; replay failed since a time', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const e = await pay(r.url);
    const w = worker({ schedule_ms: [1_000] });
    await settle(w, e.event_id);
    assert.equal((await event(e.event_id)).status, 'failed');
    const svc = new EventService(gw.runtime.store);
    const byOrder = await svc.listEvents(gw.merchant.account_id, { order_no: e.order_no });
    assert.deepEqual(
      byOrder.map((x) => x.event_id),
      [e.event_id],
    );
    assert.deepEqual(
      (await svc.listEvents(gw.merchant.account_id, { transaction_id: e.transaction_id })).map((x) => x.event_id),
      [e.event_id],
    );
    assert.equal((await svc.listEvents('99999', { order_no: e.order_no })).length, 0, 'another account sees nothing');
    assert.equal((await svc.listAttempts(e.event_id)).length, 2);

    assert.equal(await svc.replayEvent(e.event_id, gw.clock.now), true);
    await w.drain();
    assert.equal(forEvent(r, e.event_id).length, 3);
    assert.equal((await event(e.event_id)).attempts, 1, 'a replay starts a fresh schedule');
    await settle(w, e.event_id);

    const created = (await event(e.event_id)).created_at;
    assert.equal(await svc.replayFailedSince(created + 1, gw.clock.now), 0);
    assert.ok((await svc.replayFailedSince(created, gw.clock.now, gw.merchant.account_id)) >= 1);
    assert.equal((await event(e.event_id)).status, 'pending');
    await settle(w, e.event_id);
  });
});

describe('replay while a delivery is in flight', () => {
  test('the in-flight answer does not swallow the replay: the event is sent again', async () => {
    const r = await receiver();
    // A host name, so the worker looks it up (an address is not looked up).
    const e = await pay(r.url.replace('127.0.0.1', 'localhost'));
    const svc = new EventService(gw.runtime.store);
    // The resolver runs as the worker, holding the event's lease, is about to send: the merchant replays then.
    let replayed = false;
    const resolver = async () => {
      if (!replayed) {
        replayed = true;
        assert.equal(await svc.replayEvent(e.event_id, gw.clock.now), true);
      }
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const w = worker({ resolver });
    await settle(w, e.event_id);
    assert.ok(replayed, 'the replay was asked for while the delivery was in flight');
    // Before, the first delivery's answer marked the event delivered and the replay was never sent.
    assert.equal(forEvent(r, e.event_id).length, 2, 'the delivery in flight, then the replay');
    assert.equal((await event(e.event_id)).status, 'delivered');
    assert.deepEqual(
      (await attempts(e.event_id)).map((a) => a.outcome),
      ['delivered', 'delivered'],
      'both attempts logged',
    );
  });
});

describe('several workers', () => {
  test('three workers on one database deliver each of 60 events exactly once', async () => {
    const r = await receiver();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await pay(r.url)).event_id);
    const ws = [worker({ concurrency: 8 }), worker({ concurrency: 8 }), worker({ concurrency: 8 })];
    await Promise.all(ws.map((w) => w.drain()));
    for (const id of ids) assert.equal(forEvent(r, id).length, 1, `event ${id} delivered once`);
    const rows = await gw.runtime.store.db.selectFrom('event_attempts').select('event_id').where('event_id', 'in', ids).execute();
    assert.equal(rows.length, 60);
  });

  test('a lease held by a live worker is respected; an expired one is taken over', async () => {
    const r = await receiver();
    const e = await pay(r.url);
    // Another worker holds the lease (as if it were mid-delivery, or crashed there).
    await gw.runtime.store.transaction(async (tx) => {
      await tx
        .updateTable('events')
        .set({ lease_until: gw.clock.now + 5_000, lease_token: 'other' })
        .where('event_id', '=', e.event_id)
        .execute();
    });
    const w = worker();
    await w.drain();
    assert.equal(forEvent(r, e.event_id).length, 0);
    gw.clock.advance(5_000);
    await w.drain();
    assert.equal(forEvent(r, e.event_id).length, 1);
    assert.equal((await event(e.event_id)).status, 'delivered');
  });
});
