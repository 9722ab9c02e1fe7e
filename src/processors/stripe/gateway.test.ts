// End to end (issue 32 items 3 and 6, docs/contract.md §20–21): a live merchant whose account
// is set to the Stripe connector (`processor set --connector stripe --base-url <mock>`),
// through the acquiring and generic interfaces, over real HTTP both ways to the mock Stripe
// started here: a manual payment captured and refunded twice in part, a cancel, a decline by
// its code, wrong credentials (1007, never a 500), a malformed answer (0006, then settled by
// the sweeper or by the webhook), a forged webhook (401, nothing changes), and webhooks
// repeated and reordered (nothing changes twice). The ledger balances at the end.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sweepAttempts } from '../../attempts/sweeper.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { cancelBatch, captureBatch, item, orderOf, type Paid, refundBatch } from '../../test/lifecycle.js';
import { setProcessor } from '../config.js';
import { type MockStripe, type MockStripeOptions, startMockStripe } from './mock.js';

const SECRET_KEY = 'sk_test_e2e_51HxYzSecretKey0001';
const WEBHOOK_SECRET = 'whsec_e2e_stripe_0001';
let gw: TestGateway;
let mock: MockStripe;
const mockOptions: MockStripeOptions = { secret_key: SECRET_KEY };
let live: CreatedMerchant;
let processor_id: string;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  mock = await startMockStripe(mockOptions);
  live = await gw.newMerchant({ mode: 'live', capture_method: 'automatic' });
  const { store, keyring, deps } = gw.runtime;
  const row = await setProcessor(
    store,
    keyring,
    { account_id: live.account_id, connector: 'stripe', base_url: mock.url, credentials: [`secret_key=${SECRET_KEY}`, `webhook_secret=${WEBHOOK_SECRET}`] },
    Date.now(),
  );
  processor_id = row.processor_id;
  mockOptions.webhook = { url: `http://127.0.0.1:${port}/hooks/stripe/${processor_id}`, secret: WEBHOOK_SECRET };
  await deps.processors.reload();
});
after(async () => {
  await mock?.idle();
  await mock?.close();
  if (gw) assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw?.close();
});

/** A Luhn-valid card number of its own for each payment (a live account's velocity rules see no repeats). */
let serial = 0;
function freshCard(): string {
  const body = `4111${String(Date.now() % 1e6).padStart(6, '0')}${String(++serial).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

interface Answer extends Paid {
  order_status: string;
  result_info: string;
}
async function pay(overrides: Record<string, unknown> = {}, merchant = live): Promise<Answer> {
  const body = directPayment(merchant, { card: freshCard(), ...overrides });
  const res = await gw.post('/v1/authorise', body, { merchant });
  assert.equal(res.statusCode, 200, res.body);
  return { ...(readXml(res) as Answer), order_no: body.order_no as string, currency: body.currency as string, amount: body.amount as string };
}
const attemptOf = (object_id: string, operation: string) =>
  gw.runtime.store.db
    .selectFrom('processor_attempts')
    .selectAll()
    .where('object_id', '=', object_id)
    .where('operation', '=', operation as never)
    .executeTakeFirstOrThrow();
const events = async (object_id: string, type: string) =>
  (await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', object_id).where('event_type', '=', type).execute()).length;
const intentOf = (transaction_id: string) => [...mock.intents.values()].find((pi) => pi.metadata.transaction_id === transaction_id);
const notificationRows = () => gw.runtime.store.db.selectFrom('processor_notifications').selectAll().where('processor_id', '=', processor_id).execute();

/** Through Stripe's own 3-D Secure as a browser would: our page, the issuer's page (`outcome`), back to the gateway. */
async function authenticate(threeds_url: string, outcome: 'pass' | 'fail') {
  const page = await gw.app.inject({ method: 'GET', url: new URL(threeds_url).pathname });
  assert.equal(page.statusCode, 303, page.body);
  const back = await fetch(`${page.headers.location}?outcome=${outcome}`, { redirect: 'manual' });
  assert.equal(back.status, 302);
  const to = new URL(String(back.headers.get('location')));
  assert.match(to.pathname, /^\/threeds\/return\/att_/);
  return gw.app.inject({ method: 'GET', url: `${to.pathname}${to.search}` });
}
const paymentOf = (transaction_id: string) =>
  gw.runtime.store.db
    .selectFrom('payments')
    .select(['status', 'result_code', 'threeds_result', 'is3ds', 'captured_minor'])
    .where('transaction_id', '=', transaction_id)
    .executeTakeFirstOrThrow();

describe('a live merchant on Stripe (the mock)', () => {
  test('3-D Secure is Stripe’s own: the card that requires it goes to Stripe’s page and back; passed, it is captured; failed, 1009', async () => {
    for (const [outcome, want] of [
      ['pass', { status: 'captured', result_code: '0000', threeds_result: 'Y', is3ds: 1, captured_minor: 1000 }],
      ['fail', { status: 'declined', result_code: '1009', threeds_result: 'N', is3ds: 0, captured_minor: 0 }],
    ] as const) {
      const x = await pay({ card: '4000000000003220', amount: '10.00', capture_method: 'automatic' });
      assert.equal(x.result_info, '0002:Pending 3-D Secure authentication', outcome);
      const pi = intentOf(x.transaction_id);
      assert.equal(pi?.payment_method_options, undefined, 'no made-up 3-D Secure result sent');
      const done = await authenticate(String((x as unknown as { threeds_url: string }).threeds_url), outcome);
      assert.equal(done.statusCode, 200, done.body);
      assert.deepEqual({ ...(await paymentOf(x.transaction_id)) }, want, outcome);
      assert.equal(await events(x.transaction_id, outcome === 'pass' ? 'payment.succeeded' : 'payment.failed'), 1);
    }
  });
  test('manual payment: authorised at Stripe, captured, refunded twice in part; the merchant told each time, the webhooks changing nothing twice', async () => {
    const p = await pay({ capture_method: 'manual', amount: '10.00', currency: 'EUR' });
    assert.equal(p.result_info, '0000:Success');
    const a = await attemptOf(p.transaction_id, 'authorise');
    assert.equal(a.status, 'approved');
    assert.match(a.reference, /^pi_/);
    const pi = intentOf(p.transaction_id);
    assert.ok(pi);
    assert.deepEqual([pi.id, pi.status, pi.amount, pi.currency, pi.capture_method], [a.reference, 'requires_capture', 1000, 'eur', 'manual']);
    const create = mock.requests.find((r) => r.path === '/v1/payment_intents' && r.idempotency_key === a.attempt_id);
    assert.ok(create, 'the PaymentIntent was created under the attempt id as Idempotency-Key');

    const cap = (await captureBatch(gw, [item(p)], live)).capture_orders[0];
    assert.equal(cap.capture_status, '1', JSON.stringify(cap));
    assert.equal(pi.status, 'succeeded');
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '3000');

    for (const amount of ['3.00', '2.50']) {
      const r = (await refundBatch(gw, [{ ...item(p), refund_amount: amount, refund_reason: 'e2e' }], live)).refund_orders[0];
      assert.equal(r.refund_status, '1', JSON.stringify(r));
    }
    assert.equal((await orderOf(gw, p.transaction_id, live)).refunded_amount, '5.50');
    const refundCalls = mock.requests.filter((r) => r.path === '/v1/refunds' && r.method === 'POST');
    assert.deepEqual(
      refundCalls.slice(-2).map((r) => [r.body.payment_intent, r.body.amount]),
      [
        [pi.id, '300'],
        [pi.id, '250'],
      ],
    );
    await mock.idle();
    // Every event the mock sent for this payment was received, kept, and found settled already.
    const kept = await notificationRows();
    assert.ok(kept.length >= 5, `${kept.length} notifications kept`);
    // Each names an attempt Tollgate made; one that came before its answer was recorded may have settled it instead.
    assert.deepEqual(
      kept.filter((k) => k.result !== 'stale' && k.result !== 'settled'),
      [],
    );
    assert.equal(await events(p.transaction_id, 'payment.succeeded'), 1);
    assert.equal(await events(p.transaction_id, 'payment.captured'), 1);
  });

  test('a cancel of another authorisation reaches Stripe', async () => {
    const p = await pay({ capture_method: 'manual' });
    assert.equal(p.result_info, '0000:Success');
    const c = (await cancelBatch(gw, [item(p)], live)).cancel_orders[0];
    assert.equal(c.cancel_status, '1', JSON.stringify(c));
    assert.equal(intentOf(p.transaction_id)?.status, 'canceled');
    assert.equal((await attemptOf(p.transaction_id, 'cancel')).status, 'approved');
  });

  test('declines by Stripe’s test cards carry their codes', async () => {
    const table: Array<[string, string]> = [
      ['4000000000000002', '1002:Card declined'],
      ['4000000000009995', '1001:Insufficient funds'],
      ['4000000000000127', '1006:Incorrect security code'],
    ];
    for (const [card, result] of table) {
      const x = await pay({ card });
      assert.equal(x.result_info, result, card);
      const a = await attemptOf(x.transaction_id, 'authorise');
      assert.deepEqual([a.status, a.result_code], ['declined', result.slice(0, 4)]);
      assert.match(a.reference, /^pi_/, 'the declined PaymentIntent is named');
    }
  });

  test('wrong credentials: 1007 to the merchant, never a 500, and no key anywhere', async () => {
    const other = await gw.newMerchant({ mode: 'live' });
    await setProcessor(
      gw.runtime.store,
      gw.runtime.keyring,
      {
        account_id: other.account_id,
        connector: 'stripe',
        base_url: mock.url,
        credentials: ['secret_key=sk_test_wrong_key_9999', `webhook_secret=${WEBHOOK_SECRET}`],
      },
      Date.now(),
    );
    await gw.runtime.deps.processors.reload();
    // The operator's line goes to standard error (the connector's default log).
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    let x: Answer;
    try {
      x = await pay({}, other);
    } finally {
      process.stderr.write = write;
    }
    assert.equal(x.result_info, '1007:Processing error');
    const a = await attemptOf(x.transaction_id, 'authorise');
    assert.deepEqual([a.status, a.result_code], ['declined', '1007']);
    const told = lines.filter((l) => l.includes('Stripe refused our credentials'));
    assert.equal(told.length, 1, lines.join(''));
    assert.match(told[0] ?? '', /"status":401/);
    assert.doesNotMatch(lines.join('') + JSON.stringify(a), /sk_test_wrong_key_9999|wrong_key|4111\d{12}/, 'no key or card number');
    // The mock refused the key (401) on the gateway's first and only call for it.
    assert.equal(intentOf(x.transaction_id), undefined);
    // Counted apart on /metrics, for an alert.
    const metrics = await gw.runtime.deps.metrics.registry.metrics();
    assert.match(
      metrics,
      /tollgate_processor_call_duration_seconds_count\{connector="stripe",processor_id="prc_[^"]+",operation="authorise",outcome="credentials_refused"\} 1/,
    );
  });

  test('a malformed answer: 0006 pending, then the sweeper finds the PaymentIntent by search and settles it', async () => {
    mockOptions.hold_webhooks = true;
    try {
      mock.fault('malformed');
      const x = await pay();
      assert.deepEqual([x.order_status, x.result_info], ['4', '0006:Pending at the processor']);
      const a = await attemptOf(x.transaction_id, 'authorise');
      assert.equal(a.status, 'unknown');
      assert.equal(intentOf(x.transaction_id)?.status, 'succeeded', 'Stripe did it; only its answer was garbled');
      const r = await sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
      assert.ok(r.settled >= 1, JSON.stringify(r));
      const settled = await attemptOf(x.transaction_id, 'authorise');
      assert.equal(settled.status, 'approved');
      assert.equal(settled.reference, intentOf(x.transaction_id)?.id);
      assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '3000');
      assert.equal(await events(x.transaction_id, 'payment.succeeded'), 1);
    } finally {
      mockOptions.hold_webhooks = false;
    }
  });

  test('a malformed answer settled by the webhook; a forged one refused first and changing nothing', async () => {
    mockOptions.hold_webhooks = true;
    try {
      mock.fault('malformed');
      const before = mock.events.length;
      const x = await pay();
      assert.equal(x.result_info, '0006:Pending at the processor');
      const succeeded = mock.events.slice(before).find((e) => e.type === 'payment_intent.succeeded');
      assert.ok(succeeded);
      assert.equal(await mock.deliver(succeeded, { secret: 'whsec_not_the_secret' }), 401);
      assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '1100', 'a forged webhook changes nothing');
      assert.equal((await notificationRows()).filter((n) => n.notification_id === succeeded.id).length, 0);
      assert.equal(await mock.deliver(succeeded), 200);
      assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '3000');
      assert.equal((await attemptOf(x.transaction_id, 'authorise')).status, 'approved');
      assert.equal(await mock.deliver(succeeded), 200, 'a repeat is acknowledged');
      assert.equal(await events(x.transaction_id, 'payment.succeeded'), 1, 'and changes nothing');
    } finally {
      mockOptions.hold_webhooks = false;
    }
  });

  test('a refund pending at Stripe, its webhooks reordered and repeated: refunded once', async () => {
    const p = await pay({ amount: '20.00' });
    assert.equal(p.result_info, '0000:Success');
    mockOptions.hold_webhooks = true;
    mockOptions.refunds_pending = true;
    try {
      const before = mock.events.length;
      const r = (await refundBatch(gw, [{ ...item(p), refund_amount: '7.00', refund_reason: 'late' }], live)).refund_orders[0];
      assert.equal(r.refund_status, '2', JSON.stringify(r));
      const re = [...mock.events.slice(before)].find((e) => e.type === 'refund.created');
      assert.ok(re);
      await mock.settleRefund(String(re.data.object.id), 'succeeded');
      const updated = mock.events.slice(before).find((e) => e.type === 'refund.updated');
      assert.ok(updated);
      // Out of order: the final one first, then the older pending one, then the final one again.
      for (const ev of [updated, re, updated]) assert.equal(await mock.deliver(ev), 200);
      assert.equal((await orderOf(gw, p.transaction_id, live)).refunded_amount, '7.00');
      const attempts = await gw.runtime.store.db
        .selectFrom('processor_attempts')
        .selectAll()
        .where('operation', '=', 'refund')
        .where('reference', '=', String(re.data.object.id))
        .execute();
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]?.status, 'approved');
      const kept = (await notificationRows()).filter((n) => n.notification_id === updated.id || n.notification_id === re.id);
      assert.deepEqual(kept.map((k) => k.result).sort(), ['settled', 'stale']);
      const refundEvents = await gw.runtime.store.db.selectFrom('events').select('event_type').where('event_type', '=', 'refund.succeeded').execute();
      assert.ok(refundEvents.length >= 1);
    } finally {
      mockOptions.hold_webhooks = false;
      mockOptions.refunds_pending = false;
    }
  });

  test('a 500 before Stripe made anything: 0006, the search finds nothing (unknown, asked again), and the void bound fails it 1007 with nothing to cancel', async () => {
    mock.fault('server_error');
    const x = await pay();
    assert.equal(x.result_info, '0006:Pending at the processor');
    assert.equal(intentOf(x.transaction_id), undefined, 'the 500 came before Stripe made a PaymentIntent');
    const asked = await sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
    assert.ok(asked.asked >= 1);
    const open = await attemptOf(x.transaction_id, 'authorise');
    assert.deepEqual([open.status, open.last_error], ['unknown', 'no PaymentIntent found by search (yet)'], 'search lags: not found is not final');
    const voided = await sweepAttempts(gw.runtime.deps, gw.clock.now + gw.runtime.deps.settings.processor_unknown_void_after_ms + 60_000);
    assert.ok(voided.voided >= 1, JSON.stringify(voided));
    assert.equal((await attemptOf(x.transaction_id, 'authorise')).status, 'voided');
    assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '6000', 'declined');
    const row = await gw.runtime.store.db
      .selectFrom('payments')
      .select(['status', 'result_code'])
      .where('transaction_id', '=', x.transaction_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.result_code], ['declined', '1007']);
    const cancels = mock.requests.filter((r) => r.path.endsWith('/cancel'));
    assert.equal(cancels.filter((r) => r.idempotency_key === `${open.attempt_id}.void`).length, 0, 'nothing at Stripe to cancel: no cancel sent');
    assert.ok(
      mock.requests.some((r) => r.path === '/v1/payment_intents/search' && r.query.query?.includes(x.transaction_id)),
      'the void looked for it by transaction id',
    );
  });

  test('the generic interface: a payment through POST /v1/payments reaches Stripe', async () => {
    const key = await gw.apiKey(live);
    const body = {
      amount: 1234,
      currency: 'usd',
      payment_method: { type: 'card', card: { number: freshCard(), exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } },
    };
    const res = await gw.generic('POST', '/v1/payments', key, body, { json: true });
    assert.equal(res.statusCode, 200, res.body);
    const tx = (res.json() as { transaction_id: string }).transaction_id;
    const pi = intentOf(tx);
    assert.deepEqual([pi?.status, pi?.amount, pi?.currency], ['succeeded', 1234, 'usd']);
  });
});
