// Webhook endpoints and events of the generic interface (docs/contract.md §24; issue 33 item 5),
// driven through the platform family's official Node library (npm `stripe`, typed methods) against
// a started gateway whose delivery worker runs: an endpoint made with the library receives a
// payment's and a refund's events on a local receiver, and the library's own
// `webhooks.constructEvent` verifies them. Also: the secret shown once, the SSRF guard, bad
// input refused with nothing stored, another account's and the live mode's ids not found,
// the list filters, disabled and unsubscribed endpoints sent nothing.
// Runs on both engines: TOLLGATE_TEST_ENGINE=postgres for PostgreSQL.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { EMITTED_PLATFORM_TYPES } from '../notifications/platform.js';
import { EventService } from '../notifications/service.js';
import { type Receiver, startReceiver } from '../notifications/test-receiver.js';
import { DeliveryWorker } from '../notifications/worker.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { shapeProblems } from '../test/platform-shapes.js';
import { PLATFORM_EVENT_TYPES } from './event-types.js';
import { platformEventBodies } from './events.js';

const YEAR = new Date().getUTCFullYear() + 1;
const { StripeInvalidRequestError, StripeSignatureVerificationError } = Stripe.errors;

interface Served {
  gw: TestGateway;
  client(key: string): Stripe;
}

async function serve(settings: Parameters<typeof testGateway>[0] = {}): Promise<Served> {
  const gw = await testGateway(settings);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  return { gw, client: (key) => new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 }) };
}

async function rejection(p: Promise<unknown>): Promise<InstanceType<typeof Stripe.errors.StripeError>> {
  try {
    const v = await p;
    assert.fail(`expected the call to be refused, it answered ${JSON.stringify(v).slice(0, 300)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    assert.ok(e instanceof Stripe.errors.StripeError, `not a StripeError: ${String(e)}`);
    return e;
  }
}

/** Waits until `check` holds (the worker polls every 100 ms). */
async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const card = (number: string) => ({ type: 'card', card: { number, exp_month: 12, exp_year: YEAR, cvc: '123' } });

let s: Served;
let key: string;
let stripe: Stripe;
let receiver: Receiver;
const countEndpoints = async () =>
  Number(
    (
      await s.gw.runtime.store.db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

before(async () => {
  // The delivery worker runs, as in `serve` with TOLLGATE_WORKER.
  s = await serve({ settings: { worker_enabled: true } });
  key = await s.gw.apiKey();
  stripe = s.client(key);
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await s.gw.close();
});

async function pay(k: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await s.gw.generic('POST', '/v1/payments', k, body);
  assert.equal(r.statusCode, 200, r.body);
  return r.json();
}

describe('webhook endpoints through the official client library', () => {
  test('create answers the whsec_ secret once; retrieve, list and update never do; delete, then 404', async () => {
    const created = await stripe.webhookEndpoints.create({
      url: receiver.url.replace('/hook', '/crud'),
      enabled_events: ['charge.succeeded', 'charge.failed'],
      description: 'orders',
      metadata: { team: 'payments' },
    });
    assert.match(created.id, /^we_/);
    assert.equal(created.object, 'webhook_endpoint');
    assert.match(created.secret ?? '', /^whsec_/);
    assert.deepEqual(created.enabled_events, ['charge.succeeded', 'charge.failed']);
    assert.equal(created.status, 'enabled');
    assert.equal(created.livemode, false);
    assert.equal(created.application, null);
    assert.equal(created.api_version, null);
    assert.equal(created.description, 'orders');

    const got = await stripe.webhookEndpoints.retrieve(created.id);
    assert.equal(got.secret, undefined, 'the secret is answered by create only');
    assert.deepEqual(shapeProblems('webhook_endpoint', got as unknown as Record<string, unknown>), []);
    assert.equal(got.url, created.url);
    const listed = await stripe.webhookEndpoints.list({ limit: 100 });
    const mine = listed.data.find((e) => e.id === created.id);
    assert.ok(mine, 'listed');
    assert.equal(mine.secret, undefined);
    // The secret is stored encrypted, never as given.
    const row = await s.gw.runtime.store.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!row.secret_enc.includes(created.secret as string));
    assert.equal(s.gw.runtime.deps.keyring.decrypt(row.secret_enc), created.secret);

    const updated = await stripe.webhookEndpoints.update(created.id, {
      enabled_events: ['*'],
      disabled: true,
      description: 'all of it',
      metadata: { team: '', owner: 'ops' },
    });
    assert.deepEqual(updated.enabled_events, ['*']);
    assert.equal(updated.status, 'disabled');
    assert.equal(updated.description, 'all of it');
    assert.deepEqual(updated.metadata, { owner: 'ops' });
    assert.equal(updated.secret, undefined);
    assert.equal((await stripe.webhookEndpoints.update(created.id, { disabled: false })).status, 'enabled');

    const deleted = await stripe.webhookEndpoints.del(created.id);
    assert.deepEqual({ id: deleted.id, object: deleted.object, deleted: deleted.deleted }, { id: created.id, object: 'webhook_endpoint', deleted: true });
    for (const call of [
      () => stripe.webhookEndpoints.retrieve(created.id),
      () => stripe.webhookEndpoints.update(created.id, { description: 'x' }),
      () => stripe.webhookEndpoints.del(created.id),
    ]) {
      const e = await rejection(call());
      assert.ok(e instanceof StripeInvalidRequestError);
      assert.equal(e.statusCode, 404);
      assert.equal(e.code, 'resource_missing');
    }
  });

  test('a payment and a refund are delivered signed: stripe.webhooks.constructEvent verifies them; other types and disabled endpoints get nothing', async () => {
    const r1 = await startReceiver();
    const r2 = await startReceiver();
    const r3 = await startReceiver();
    try {
      const all = await stripe.webhookEndpoints.create({ url: r1.url, enabled_events: ['charge.succeeded', 'refund.created', 'charge.refunded'] });
      const refundsOnly = await stripe.webhookEndpoints.create({ url: r2.url, enabled_events: ['refund.created'] });
      const disabled = await stripe.webhookEndpoints.create({ url: r3.url, enabled_events: ['*'] });
      await stripe.webhookEndpoints.update(disabled.id, { disabled: true });

      const payment = await pay(key, { amount: 2500, currency: 'usd', payment_method: card('4242424242424242') });
      assert.equal(payment.status, 'succeeded');
      await until('the charge.succeeded delivery', () => r1.received.length >= 1);
      const first = r1.received[0] as (typeof r1.received)[number];
      const header = String(first.headers['stripe-signature']);
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
      const event = stripe.webhooks.constructEvent(first.body, header, all.secret as string);
      assert.equal(event.type, 'charge.succeeded');
      assert.equal(event.object, 'event');
      assert.equal(event.livemode, false);
      assert.match(event.id, /^evt_/);
      // The charge object of the payment (ch_ and pay_ name the same transaction).
      assert.equal((event.data.object as unknown as { id: string }).id, payment.id.replace(/^pay_/, 'ch_'));
      assert.equal((event.data.object as unknown as { object: string }).object, 'charge');
      assert.deepEqual(event.request, { id: null, idempotency_key: null });
      // Another secret, or a changed body, does not verify.
      assert.throws(() => stripe.webhooks.constructEvent(first.body, header, refundsOnly.secret as string), StripeSignatureVerificationError);
      assert.throws(() => stripe.webhooks.constructEvent(first.body.replace('2500', '2501'), header, all.secret as string), StripeSignatureVerificationError);

      // The event as the API answers it is the one delivered.
      const retrieved = await stripe.events.retrieve(event.id);
      assert.equal(retrieved.type, 'charge.succeeded');
      assert.deepEqual(retrieved.data.object, event.data.object);

      const refund = await s.gw.generic('POST', '/v1/refunds', key, { payment: payment.id, amount: 500 });
      assert.equal(refund.statusCode, 200, refund.body);
      await until('the refund deliveries', () => r1.received.length >= 3 && r2.received.length >= 1);
      const types = r1.received.map((r) => stripe.webhooks.constructEvent(r.body, String(r.headers['stripe-signature']), all.secret as string).type);
      assert.deepEqual(types.sort(), ['charge.refunded', 'charge.succeeded', 'refund.created']);
      const refundEvent = stripe.webhooks.constructEvent(
        r2.received[0]?.body ?? '',
        String(r2.received[0]?.headers['stripe-signature']),
        refundsOnly.secret as string,
      );
      assert.equal(refundEvent.type, 'refund.created');
      assert.equal((refundEvent.data.object as unknown as { id: string; amount: number }).amount, 500);

      // Let the worker run a while longer: nothing more for the refunds-only or the disabled endpoint.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(r2.received.length, 1, 'refund.created only');
      assert.equal(r3.received.length, 0, 'a disabled endpoint is sent nothing');
      const attempts = await s.gw.runtime.store.db.selectFrom('event_attempts').selectAll().where('delivery', '=', all.id).execute();
      assert.equal(attempts.length, 3);
      assert.ok(attempts.every((a) => a.outcome === 'delivered'));
    } finally {
      await Promise.all([r1.close(), r2.close(), r3.close()]);
    }
  });

  test('a PaymentIntent’s own events are delivered: payment_intent.created on create, payment_intent.canceled on a cancel before any payment', async () => {
    const r = await startReceiver();
    try {
      const ep = await stripe.webhookEndpoints.create({ url: r.url, enabled_events: ['payment_intent.created', 'payment_intent.canceled'] });
      const pi = await stripe.paymentIntents.create({ amount: 900, currency: 'usd' });
      await stripe.paymentIntents.cancel(pi.id);
      await until('the two deliveries', () => r.received.length >= 2);
      const events = r.received.map((x) => stripe.webhooks.constructEvent(x.body, String(x.headers['stripe-signature']), ep.secret as string));
      assert.deepEqual(events.map((e) => e.type).sort(), ['payment_intent.canceled', 'payment_intent.created']);
      for (const e of events) assert.equal((e.data.object as Stripe.PaymentIntent).id, pi.id);
      const canceled = events.find((e) => e.type === 'payment_intent.canceled');
      assert.ok(canceled);
      assert.equal((canceled.data.object as Stripe.PaymentIntent).status, 'canceled');
    } finally {
      await r.close();
    }
  });

  test('a delivery the receiver refuses is retried with the same event and body; the replay sends it again', async () => {
    const r = await startReceiver((_req, n) => ({ status: n === 0 ? 500 : 200 }));
    try {
      const ep = await stripe.webhookEndpoints.create({ url: r.url, enabled_events: ['charge.failed'] });
      const declined = await s.gw.generic('POST', '/v1/payments', key, { amount: 1000, currency: 'usd', payment_method: card('4000000000000002') });
      assert.equal(declined.statusCode, 402);
      await until('the first attempt', () => r.received.length >= 1);
      // The retry is due after the first step of the schedule (about 5 s of the gateway's clock). The first attempt's
      // outcome may be recorded after the receiver answered (its retry then counts from a later time): the clock keeps moving.
      s.gw.clock.advance(10_000);
      await until('the retry', () => {
        s.gw.clock.advance(1_000);
        return r.received.length >= 2;
      });
      const [a, b] = r.received.map((x) => stripe.webhooks.constructEvent(x.body, String(x.headers['stripe-signature']), ep.secret as string));
      assert.equal(a?.id, b?.id, 'the same event');
      assert.deepEqual(a?.data, b?.data, 'the same object on every attempt');
      assert.equal(a?.type, 'charge.failed');
      const pe = await s.gw.runtime.store.db
        .selectFrom('platform_events')
        .selectAll()
        .where('id', '=', a?.id as string)
        .executeTakeFirstOrThrow();
      assert.equal(await new EventService(s.gw.runtime.store).replayEvent(pe.event_id, s.gw.clock.now), true);
      await until('the replay', () => r.received.length >= 3);
      assert.equal(
        stripe.webhooks.constructEvent(r.received[2]?.body ?? '', String(r.received[2]?.headers['stripe-signature']), ep.secret as string).id,
        a?.id,
      );
    } finally {
      await r.close();
    }
  });
});

describe('refusals: bad input, the SSRF guard, other accounts and modes', () => {
  test('bad input is a 400 naming the parameter, and nothing is stored', async () => {
    const before = await countEndpoints();
    const cases: Array<[Stripe.WebhookEndpointCreateParams, string, string | undefined]> = [
      [{ url: receiver.url, enabled_events: ['charge.nope' as Stripe.WebhookEndpointCreateParams.EnabledEvent] }, 'enabled_events[0]', undefined],
      [
        { url: receiver.url, enabled_events: ['charge.succeeded', 'payment.succeeded' as Stripe.WebhookEndpointCreateParams.EnabledEvent] },
        'enabled_events[1]',
        undefined,
      ],
      [{ url: receiver.url } as Stripe.WebhookEndpointCreateParams, 'enabled_events', 'parameter_missing'],
      [{ enabled_events: ['*'] } as unknown as Stripe.WebhookEndpointCreateParams, 'url', 'parameter_missing'],
      [{ url: 'ftp://example.com/x', enabled_events: ['*'] }, 'url', undefined],
      [{ url: 'not a url', enabled_events: ['*'] }, 'url', undefined],
      [{ url: '', enabled_events: ['*'] }, 'url', 'parameter_invalid_empty'],
      [{ url: receiver.url, enabled_events: ['*'], metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata', undefined],
    ];
    for (const [params, param, code] of cases) {
      const e = await rejection(stripe.webhookEndpoints.create(params));
      assert.equal(e.statusCode, 400, JSON.stringify(params));
      assert.equal(e.param, param, JSON.stringify(params));
      assert.equal(e.code, code, JSON.stringify(params));
    }
    const ep = await stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['charge.succeeded'] });
    const e = await rejection(stripe.webhookEndpoints.update(ep.id, { enabled_events: ['nope' as Stripe.WebhookEndpointUpdateParams.EnabledEvent] }));
    assert.equal(e.param, 'enabled_events[0]');
    assert.deepEqual((await stripe.webhookEndpoints.retrieve(ep.id)).enabled_events, ['charge.succeeded'], 'the refused update changed nothing');
    assert.equal(await countEndpoints(), before + 1);
    await stripe.webhookEndpoints.del(ep.id);
  });

  test('a URL resolving to a metadata, loopback or private address is refused naming url, unless private targets are allowed', async () => {
    const before = await countEndpoints();
    // Cloud metadata addresses are refused even where private targets are allowed (this gateway).
    const meta = await rejection(stripe.webhookEndpoints.create({ url: 'http://169.254.169.254/latest', enabled_events: ['*'] }));
    assert.equal(meta.statusCode, 400);
    assert.equal(meta.param, 'url');
    assert.match(meta.message, /metadata/);
    assert.equal(await countEndpoints(), before);

    const strict = await serve({ settings: { allow_private_webhooks: false } });
    try {
      const lib = strict.client(await strict.gw.apiKey());
      for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.1/hook', 'http://[::1]/hook', 'http://localhost/hook']) {
        const e = await rejection(lib.webhookEndpoints.create({ url, enabled_events: ['*'] }));
        assert.equal(e.statusCode, 400, url);
        assert.equal(e.param, 'url', url);
      }
      const ok = await lib.webhookEndpoints.create({ url: 'http://93.184.215.14/hook', enabled_events: ['*'] });
      const e = await rejection(lib.webhookEndpoints.update(ok.id, { url: 'http://192.168.1.1/' }));
      assert.equal(e.param, 'url');
      assert.equal((await lib.webhookEndpoints.retrieve(ok.id)).url, 'http://93.184.215.14/hook');
    } finally {
      await strict.gw.close();
    }
  });

  test('a URL that passed at create but resolves to a private address at send is not contacted; the attempt is recorded as refused', async () => {
    // No background worker here: this test runs the delivery worker itself, with the resolver it controls.
    const quiet = await serve();
    const r = await startReceiver();
    try {
      const k = await quiet.gw.apiKey();
      const lib = quiet.client(k);
      // Accepted at create: "localhost" resolves to loopback, and this gateway allows private targets.
      const ep = await lib.webhookEndpoints.create({ url: r.url.replace('127.0.0.1', 'localhost'), enabled_events: ['charge.succeeded'] });
      const paid = await quiet.gw.generic('POST', '/v1/payments', k, { amount: 1400, currency: 'usd', payment_method: card('4242424242424242') });
      assert.equal(paid.statusCode, 200, paid.body);
      // At send, private targets are not allowed and the name now resolves to a private address (its DNS changed).
      let lookups = 0;
      const worker = new DeliveryWorker({
        store: quiet.gw.runtime.store,
        merchants: quiet.gw.runtime.merchants,
        allow_private: false,
        schedule_ms: [60_000],
        timeout_ms: 10_000,
        now: () => quiet.gw.clock.now,
        resolver: async () => {
          lookups++;
          return [{ address: '10.0.0.7', family: 4 }];
        },
        platform: { keyring: quiet.gw.runtime.deps.keyring, bodies: platformEventBodies(quiet.gw.runtime.store) },
      });
      await worker.drain();
      assert.ok(lookups >= 1, 'the URL was resolved again at send');
      assert.equal(r.received.length, 0, 'the receiver was never contacted');
      const attempts = await quiet.gw.runtime.store.db.selectFrom('event_attempts').selectAll().where('delivery', '=', ep.id).execute();
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]?.status_code, null);
      assert.match(attempts[0]?.error ?? '', /^url refused: resolves to a forbidden address: 10\.0\.0\.7 is a private address/);
      assert.equal(attempts[0]?.outcome, 'retry');
      const delivery = await quiet.gw.runtime.store.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'delivered_at'])
        .where('endpoint_id', '=', ep.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual([delivery.status, delivery.delivered_at], ['pending', null], 'not delivered');
    } finally {
      await r.close();
      await quiet.gw.close();
    }
  });

  test('another account’s and the live mode’s endpoints and events are resource_missing; lists never show them', async () => {
    const other = await s.gw.newMerchant({ name: 'other platform' });
    const otherKey = await s.gw.apiKey(other);
    const otherLib = s.client(otherKey);
    const live = await s.gw.newMerchant({ name: 'live platform', mode: 'live' });
    const liveLib = s.client(await s.gw.apiKey(live));
    const theirs = await otherLib.webhookEndpoints.create({ url: receiver.url, enabled_events: ['*'] });
    const livePoint = await liveLib.webhookEndpoints.create({ url: receiver.url, enabled_events: ['*'] });
    assert.equal(livePoint.livemode, true);
    await pay(otherKey, { amount: 700, currency: 'usd', payment_method: card('4242424242424242') });
    const theirEvent = (await otherLib.events.list({ limit: 1 })).data[0];
    assert.ok(theirEvent, 'the other account has its event');

    for (const id of [theirs.id, livePoint.id]) {
      for (const call of [
        () => stripe.webhookEndpoints.retrieve(id),
        () => stripe.webhookEndpoints.update(id, { disabled: true }),
        () => stripe.webhookEndpoints.del(id),
      ]) {
        const e = await rejection(call());
        assert.equal(e.statusCode, 404);
        assert.equal(e.code, 'resource_missing');
      }
    }
    const e = await rejection(stripe.events.retrieve(theirEvent.id));
    assert.equal(e.statusCode, 404);
    assert.equal(e.code, 'resource_missing');
    const mine = await stripe.webhookEndpoints.list({ limit: 100 });
    assert.ok(!mine.data.some((x) => x.id === theirs.id || x.id === livePoint.id));
    const events = await stripe.events.list({ limit: 100 });
    assert.ok(!events.data.some((x) => x.id === theirEvent.id));
    const cursor = await rejection(stripe.events.list({ starting_after: theirEvent.id }));
    assert.equal(cursor.code, 'resource_missing');
    // The other account's endpoint is unchanged.
    assert.equal((await otherLib.webhookEndpoints.retrieve(theirs.id)).status, 'enabled');
  });
});

describe('events', () => {
  test('list filters: type exact and as a group, types[], created; pages newest first', async () => {
    const k = await s.gw.apiKey(await s.gw.newMerchant({ name: 'events platform' }));
    const lib = s.client(k);
    const t0 = s.gw.clock.now;
    s.gw.clock.advance(5_000);
    const p1 = await pay(k, { amount: 1100, currency: 'usd', payment_method: card('4242424242424242'), capture_method: 'manual' });
    s.gw.clock.advance(5_000);
    const cap = await s.gw.generic('POST', `/v1/payments/${p1.id}/capture`, k, {});
    assert.equal(cap.statusCode, 200, cap.body);
    s.gw.clock.advance(5_000);
    const declined = await s.gw.generic('POST', '/v1/payments', k, { amount: 1200, currency: 'usd', payment_method: card('4000000000000002') });
    assert.equal(declined.statusCode, 402);
    s.gw.clock.advance(5_000);
    const ref = await s.gw.generic('POST', '/v1/refunds', k, { payment: p1.id, amount: 100 });
    assert.equal(ref.statusCode, 200, ref.body);

    const all = (await lib.events.list({ limit: 100 })).data.map((e) => e.type);
    // Newest first; the refund's two events share their time.
    assert.deepEqual(all.slice(2), ['charge.failed', 'charge.captured', 'charge.succeeded'], JSON.stringify(all));
    assert.deepEqual(all.slice(0, 2).sort(), ['charge.refunded', 'refund.created']);
    assert.deepEqual(
      (await lib.events.list({ type: 'charge.captured' })).data.map((e) => e.type),
      ['charge.captured'],
    );
    const charges = (await lib.events.list({ type: 'charge.*' })).data.map((e) => e.type);
    assert.ok(charges.length >= 4 && charges.every((t) => t.startsWith('charge.')), JSON.stringify(charges));
    assert.deepEqual((await lib.events.list({ types: ['refund.created', 'charge.failed'] })).data.map((e) => e.type).sort(), [
      'charge.failed',
      'refund.created',
    ]);
    assert.deepEqual((await lib.events.list({ type: 'payout.*' })).data, []);
    const early = await lib.events.list({ created: { lte: Math.floor((t0 + 12_000) / 1000) } });
    assert.deepEqual(early.data.map((e) => e.type).sort(), ['charge.captured', 'charge.succeeded']);
    const page = await lib.events.list({ limit: 2 });
    assert.equal(page.has_more, true);
    const next = await lib.events.list({ limit: 2, starting_after: page.data[1]?.id });
    assert.ok(!next.data.some((e) => page.data.some((p) => p.id === e.id)));
    const refused = await rejection(lib.events.list({ type: 'charge.*', types: ['charge.failed'] }));
    assert.equal(refused.param, 'types');
    const bad = await rejection(lib.events.list({ type: 'charge.%' }));
    assert.equal(bad.param, 'type');
    // The captured event's object is the payment's charge, captured.
    const captured = (await lib.events.list({ type: 'charge.captured' })).data[0] as Stripe.Event;
    assert.equal((captured.data.object as unknown as { id: string }).id, p1.id.replace(/^pay_/, 'ch_'));
    assert.equal((captured.data.object as unknown as { captured: boolean }).captured, true);
  });

  test('an event’s shape is the family’s; its data.object is the charge’s', async () => {
    await pay(key, { amount: 1300, currency: 'usd', payment_method: card('4242424242424242') });
    const [event] = (await stripe.events.list({ type: 'charge.succeeded', limit: 1 })).data;
    assert.ok(event);
    // The example's data.object is a plan: each type carries its own object, held against its own example.
    assert.deepEqual(shapeProblems('event', event as unknown as Record<string, unknown>, ['data.object']), []);
    assert.deepEqual(shapeProblems('charge', event.data.object as unknown as Record<string, unknown>, ['source', 'shipping', 'transfer_data']), []);
  });

  test('every type the gateway emits is one the family publishes, and the list of published types is the library’s', () => {
    for (const t of EMITTED_PLATFORM_TYPES) assert.ok(PLATFORM_EVENT_TYPES.has(t), t);
    const here = path.dirname(fileURLToPath(import.meta.url));
    const text = fs.readFileSync(path.join(here, '..', '..', 'node_modules/stripe/esm/resources/WebhookEndpoints.d.ts'), 'utf8');
    const m = /type EnabledEvent = ([^;]+);/.exec(text);
    assert.ok(m?.[1], 'the library lists EnabledEvent');
    const library = [...m[1].matchAll(/'([a-z0-9_.*]+)'/g)].map((x) => x[1] as string).filter((t) => t !== '*');
    assert.ok(library.length > 200);
    for (const t of library) assert.ok(PLATFORM_EVENT_TYPES.has(t), `${t} is published by the library`);
  });
});
