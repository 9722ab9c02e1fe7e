// End to end (issue 32 items 2 and 6): a live merchant whose account is set to the Adyen
// connector (`processor set --connector adyen --base-url <mock>`), through real HTTP both
// ways against the stateful mock: a manual payment, its capture confirmed by the CAPTURE
// notification, two partial refunds confirmed by REFUND notifications (delivered twice and
// in reverse), a cancel of another authorisation; declines by Adyen's refusal reasons; our
// credentials refused (1007, no 500); a malformed answer (0006, settled by the AUTHORISATION
// notification, or voided by the sweeper with POST /cancels by our reference when none
// comes); a webhook with a bad HMAC refused and changing nothing; a payment through the
// generic interface. The ledger balances at the end.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sweepAttempts } from '../../attempts/sweeper.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { cancelBatch, captureBatch, item, orderOf, type Paid, refundBatch } from '../../test/lifecycle.js';
import { setProcessor } from '../config.js';
import { type AdyenMock, startAdyenMock } from './mock.js';
import { signItem } from './webhooks.js';

const API_KEY = 'AQE_live_e2e_key_7c21';
const HMAC_KEY = 'A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90';
const MERCHANT = 'TollgateE2EECOM';

let gw: TestGateway;
let mock: AdyenMock;
let live: CreatedMerchant;
let wrongKey: CreatedMerchant;
let processor_id: string;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const { store, keyring, deps } = gw.runtime;
  mock = await startAdyenMock({ api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
  live = await gw.newMerchant({ mode: 'live', name: 'Live on Adyen' });
  wrongKey = await gw.newMerchant({ mode: 'live', name: 'Live with a revoked key' });
  const row = await setProcessor(
    store,
    keyring,
    {
      account_id: live.account_id,
      connector: 'adyen',
      base_url: mock.url,
      credentials: [`api_key=${API_KEY}`, `merchant_account=${MERCHANT}`, `hmac_key=${HMAC_KEY}`],
    },
    Date.now(),
  );
  processor_id = row.processor_id;
  mock.webhook_url = `http://127.0.0.1:${port}/hooks/adyen/${processor_id}`;
  await setProcessor(
    store,
    keyring,
    {
      account_id: wrongKey.account_id,
      connector: 'adyen',
      base_url: mock.url,
      credentials: ['api_key=AQE_revoked_key_0000', `merchant_account=${MERCHANT}`, `hmac_key=${HMAC_KEY}`],
    },
    Date.now(),
  );
  await deps.processors.reload();
});
after(async () => {
  await mock?.close();
  if (gw) assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw?.close();
});

/** A Luhn-valid Visa number never paid before (the live account's velocity rules count cards). */
function freshCard(): string {
  const body = `4${Array.from({ length: 14 }, () => randomInt(10)).join('')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

interface Answer extends Paid {
  order_status: string;
  result_info: string;
}

async function pay(overrides: Record<string, unknown> = {}, merchant = live): Promise<Answer> {
  const body = directPayment(merchant, { card: freshCard(), currency: 'EUR', amount: '10.00', ...overrides });
  const res = await gw.post('/v1/authorise', body, { merchant });
  assert.equal(res.statusCode, 200, res.body);
  const x = readXml(res) as Answer;
  return { ...x, order_no: body.order_no as string, currency: body.currency as string, amount: body.amount as string };
}

const db = () => gw.runtime.store.db;
const attemptOf = (object_id: string, operation: 'authorise' | 'capture' | 'cancel' | 'refund') =>
  db().selectFrom('processor_attempts').selectAll().where('object_id', '=', object_id).where('operation', '=', operation).executeTakeFirstOrThrow();
const events = async (object_id: string, type: string) =>
  (await db().selectFrom('events').select('event_type').where('object_id', '=', object_id).where('event_type', '=', type).execute()).length;
const kept = (operation: string) =>
  db().selectFrom('processor_notifications').select(['notification_id', 'result']).where('operation', '=', operation).execute();
const pspOf = (transaction_id: string) => [...mock.payments.values()].find((p) => p.reference === transaction_id)?.psp;

/** Through Adyen's own 3-D Secure as a browser would: our page, Adyen's issuer page (`outcome`), back to the gateway. */
async function authenticate(threeds_url: string, outcome: 'pass' | 'fail') {
  const page = await gw.app.inject({ method: 'GET', url: new URL(threeds_url).pathname });
  assert.equal(page.statusCode, 303, page.body);
  const issuer = String(page.headers.location);
  assert.ok(issuer.startsWith(`${mock.url.replace(/\/v71$/, '')}/3ds/`), issuer);
  const back = await fetch(`${issuer}?outcome=${outcome}`, { redirect: 'manual' });
  assert.equal(back.status, 302);
  const to = new URL(String(back.headers.get('location')));
  assert.match(to.pathname, /^\/threeds\/return\/att_/);
  const returnPath = `${to.pathname}${to.search}`;
  return { done: await gw.app.inject({ method: 'GET', url: returnPath }), returnPath };
}

const paymentOf = (transaction_id: string) =>
  db()
    .selectFrom('payments')
    .select(['status', 'result_code', 'threeds_result', 'is3ds', 'authorised_minor'])
    .where('transaction_id', '=', transaction_id)
    .executeTakeFirstOrThrow();

describe('a live merchant on Adyen (the mock)', () => {
  test('3-D Secure is Adyen’s own: open3d 1 sends the shopper to Adyen’s page and back; the result comes from /payments/details, no made-up authentication is sent', async () => {
    const before = mock.requests.length;
    const x = await pay({ open3d: '1', capture_method: 'manual' });
    assert.equal(x.result_info, '0002:Pending 3-D Secure authentication');
    const sent = mock.requests.slice(before).find((r) => r.path === '/payments')?.body as Record<string, any>;
    assert.deepEqual(sent.authenticationData, { attemptAuthentication: 'always', threeDSRequestData: { nativeThreeDS: 'disabled' } });
    assert.equal(sent.mpiData, undefined);
    assert.match(sent.returnUrl, /\/threeds\/return\/att_/);
    // The sandbox's form is refused for a processor's challenge.
    const forged = await gw.app.inject({
      method: 'POST',
      url: new URL(String((x as unknown as { threeds_url: string }).threeds_url)).pathname,
      payload: 'form_token=x&outcome=complete',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(forged.statusCode, 403);
    const { done, returnPath } = await authenticate(String((x as unknown as { threeds_url: string }).threeds_url), 'pass');
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(
      { ...(await paymentOf(x.transaction_id)) },
      { status: 'authorised', result_code: '0000', threeds_result: 'Y', is3ds: 1, authorised_minor: 1000 },
    );
    const details = mock.requests.slice(before).filter((r) => r.path === '/payments/details');
    assert.equal(details.length, 1);
    const attempts = await db().selectFrom('processor_attempts').select(['status']).where('object_id', '=', x.transaction_id).orderBy('created_at').execute();
    assert.deepEqual(attempts.map((a) => a.status).sort(), ['approved', 'challenge']);
    assert.equal(await events(x.transaction_id, 'payment.succeeded'), 1);
    // Back again (a reload): nothing is asked twice.
    const again = await gw.app.inject({ method: 'GET', url: returnPath });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(mock.requests.filter((r) => r.path === '/payments/details').length, details.length);
    mock.queued = [];
  });

  test('Adyen’s 3-D Secure failed by the shopper: 1009, result N, nothing held', async () => {
    const x = await pay({ card: '4000000000003220' });
    assert.equal(x.result_info, '0002:Pending 3-D Secure authentication');
    const { done } = await authenticate(String((x as unknown as { threeds_url: string }).threeds_url), 'fail');
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(
      { ...(await paymentOf(x.transaction_id)) },
      { status: 'declined', result_code: '1009', threeds_result: 'N', is3ds: 0, authorised_minor: 0 },
    );
    assert.equal(await events(x.transaction_id, 'payment.failed'), 1);
    mock.queued = [];
  });
  test('a manual payment, its capture confirmed by CAPTURE, two partial refunds confirmed by REFUND (twice, reversed): each once', async () => {
    const p = await pay({ capture_method: 'manual' });
    assert.equal(p.result_info, '0000:Success', JSON.stringify(p));
    const a = await attemptOf(p.transaction_id, 'authorise');
    assert.deepEqual([a.status, a.reference, a.connector], ['approved', pspOf(p.transaction_id), 'adyen']);
    const sent = mock.requests.find((r) => r.path === '/payments' && (r.body as { reference?: string }).reference === p.transaction_id);
    assert.deepEqual((sent?.body as { additionalData?: unknown } | undefined)?.additionalData, { manualCapture: 'true' });
    assert.equal(sent?.headers['idempotency-key'], a.attempt_id);
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '2000');

    const cap = (await captureBatch(gw, [item(p)], live)).capture_orders[0];
    assert.equal(cap.capture_status, '2', 'pending at Adyen until its notification');
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '2000');
    // The AUTHORISATION (stale: answered already) and the CAPTURE, each delivered twice.
    assert.deepEqual(await mock.deliver({ twice: true }), [200, 200, 200, 200]);
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '3000');
    assert.equal(await events(p.transaction_id, 'payment.captured'), 1, 'captured once');
    assert.equal((await attemptOf(p.transaction_id, 'capture')).status, 'approved');
    assert.deepEqual(
      (await kept('capture')).map((k) => k.result),
      ['settled'],
    );

    const r1 = (await refundBatch(gw, [{ ...item(p), refund_amount: '4.00', refund_reason: 'e2e one' }], live)).refund_orders[0];
    const r2 = (await refundBatch(gw, [{ ...item(p), refund_amount: '3.00', refund_reason: 'e2e two' }], live)).refund_orders[0];
    assert.deepEqual([r1.refund_status, r2.refund_status], ['2', '2'], JSON.stringify([r1, r2]));
    assert.equal(mock.queued.length, 2);
    assert.deepEqual(await mock.deliver({ reverse: true, twice: true }), [200, 200, 200, 200]);
    assert.equal((await orderOf(gw, p.transaction_id, live)).refunded_amount, '7.00');
    const refunds = await db()
      .selectFrom('processor_attempts')
      .select(['status', 'amount_minor'])
      .where('operation', '=', 'refund')
      .where('account_id', '=', live.account_id)
      .execute();
    assert.deepEqual(refunds.map((r) => [r.status, Number(r.amount_minor)]).sort(), [
      ['approved', 300],
      ['approved', 400],
    ]);
    assert.deepEqual((await kept('refund')).map((k) => k.result).sort(), ['settled', 'settled']);
  });

  test('a cancel of another authorisation, confirmed by CANCELLATION', async () => {
    const p = await pay({ capture_method: 'manual' });
    assert.equal(p.result_info, '0000:Success');
    mock.queued = [];
    const c = (await cancelBatch(gw, [item(p)], live)).cancel_orders[0];
    assert.equal(c.cancel_status, '2', JSON.stringify(c));
    assert.deepEqual(await mock.deliver(), [200]);
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '5000');
    assert.equal(await events(p.transaction_id, 'payment.cancelled'), 1);
    assert.ok(mock.requests.some((r) => r.path === `/payments/${pspOf(p.transaction_id)}/cancels`));
  });

  test('declines by Adyen’s refusal reasons, by the published table', async () => {
    const cases: [string, string][] = [
      ['4000000000009995', '1001:Insufficient funds'],
      ['4000000000000069', '1005:Expired card'],
      ['4000000000009987', '1003:Lost card'],
      ['4000000000000127', '1006:Incorrect security code'],
    ];
    for (const [card, result] of cases) {
      const x = await pay({ card });
      assert.equal(x.result_info, result, card);
      assert.equal((await attemptOf(x.transaction_id, 'authorise')).result_code, result.slice(0, 4));
    }
    mock.queued = [];
  });

  test('our credentials refused: the merchant gets 1007, never a 500; counted apart on /metrics', async () => {
    const x = await pay({}, wrongKey);
    assert.equal(x.result_info, '1007:Processing error');
    assert.equal((await attemptOf(x.transaction_id, 'authorise')).status, 'declined');
    const metrics = await gw.runtime.deps.metrics.registry.metrics();
    assert.match(
      metrics,
      /tollgate_processor_call_duration_seconds_count\{connector="adyen",processor_id="prc_[^"]+",operation="authorise",outcome="credentials_refused"\} 1/,
    );
  });

  test('a malformed answer: 0006, then settled by its AUTHORISATION notification', async () => {
    mock.queued = [];
    mock.fault('malformed-after');
    const x = await pay();
    assert.deepEqual([x.order_status, x.result_info], ['4', '0006:Pending at the processor']);
    assert.equal((await attemptOf(x.transaction_id, 'authorise')).status, 'unknown');
    assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '1100');
    assert.deepEqual(await mock.deliver(), [200]);
    const a = await attemptOf(x.transaction_id, 'authorise');
    assert.deepEqual([a.status, a.reference], ['approved', pspOf(x.transaction_id)]);
    assert.equal((await orderOf(gw, x.transaction_id, live)).payment_status, '3000', 'an automatic payment, captured by Adyen');
    assert.equal(await events(x.transaction_id, 'payment.succeeded'), 1);
  });

  test('a malformed answer and no notification: the sweeper voids it past the bound with POST /cancels by our reference; 1007', async () => {
    mock.queued = [];
    mock.fault('malformed-after');
    const x = await pay();
    assert.equal(x.result_info, '0006:Pending at the processor');
    mock.queued = [];
    const early = await sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
    assert.equal(early.voided, 0, JSON.stringify(early));
    assert.match((await attemptOf(x.transaction_id, 'authorise')).last_error, /no status query/);
    const late = await sweepAttempts(gw.runtime.deps, gw.clock.now + gw.settings.processor_unknown_void_after_ms + 60_000);
    assert.ok(late.voided >= 1, JSON.stringify(late));
    const cancel = mock.requests.find((r) => r.path === '/cancels' && (r.body as { paymentReference?: string }).paymentReference === x.transaction_id);
    assert.ok(cancel, 'cancelled at Adyen by our reference');
    assert.equal(cancel.headers['idempotency-key'], `${(await attemptOf(x.transaction_id, 'authorise')).attempt_id}.void`);
    const order = await orderOf(gw, x.transaction_id, live);
    assert.deepEqual([order.payment_status, order.result_info], ['6000', '1007:Processing error']);
    assert.equal((await attemptOf(x.transaction_id, 'authorise')).status, 'voided');
    // Its CANCELLATION comes later: acknowledged, changes nothing.
    assert.deepEqual(await mock.deliver(), [200]);
  });

  test('a capture, a refund and a cancel whose answers were lost (a 500 before Adyen acted, no answer after it acted): the sweeper sends each again under its attempt id; Adyen acts once; the notifications settle each once', async () => {
    mock.queued = [];
    const p = await pay({ capture_method: 'manual' });
    mock.queued = [];
    const sweep = () => sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
    const sentTo = (suffix: string, key: string) => mock.requests.filter((r) => r.path.endsWith(suffix) && r.headers['idempotency-key'] === key).length;

    mock.fault('500');
    assert.equal((await captureBatch(gw, [item(p)], live)).capture_orders[0].capture_status, '2');
    const cap = await attemptOf(p.transaction_id, 'capture');
    assert.equal(cap.status, 'unknown');
    assert.equal(mock.queued.length, 0, 'Adyen did not act');
    await sweep();
    assert.equal((await attemptOf(p.transaction_id, 'capture')).status, 'pending');
    assert.equal(sentTo('/captures', cap.attempt_id), 2, 'sent again under its attempt id');
    assert.deepEqual(await mock.deliver(), [200]);
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '3000');
    assert.equal(await events(p.transaction_id, 'payment.captured'), 1);

    mock.fault('hang-after');
    const r = (await refundBatch(gw, [{ ...item(p), refund_amount: '4.00', refund_reason: 'lost answer' }], live)).refund_orders[0];
    assert.equal(r.refund_status, '2');
    assert.equal(mock.queued.length, 1, 'Adyen acted; its answer was lost');
    const ref = await db()
      .selectFrom('processor_attempts')
      .selectAll()
      .where('operation', '=', 'refund')
      .where('object_id', '=', r.refund_reference_id)
      .executeTakeFirstOrThrow();
    assert.equal(ref.status, 'unknown');
    await sweep();
    assert.equal(sentTo('/refunds', ref.attempt_id), 2);
    assert.equal(mock.queued.length, 1, 'the second send acted on nothing: the first answer came back');
    assert.deepEqual(await mock.deliver({ twice: true }), [200, 200]);
    assert.equal((await orderOf(gw, p.transaction_id, live)).refunded_amount, '4.00');

    const q = await pay({ capture_method: 'manual' });
    mock.queued = [];
    mock.fault('500');
    assert.equal((await cancelBatch(gw, [item(q)], live)).cancel_orders[0].cancel_status, '2');
    await sweep();
    assert.deepEqual(await mock.deliver(), [200]);
    assert.equal((await orderOf(gw, q.transaction_id, live)).payment_status, '5000');
    assert.equal(await events(q.transaction_id, 'payment.cancelled'), 1);
    assert.deepEqual(
      await db()
        .selectFrom('processor_attempts')
        .select('status')
        .where('object_id', 'in', [p.transaction_id, q.transaction_id, r.refund_reference_id])
        .where('status', 'in', ['sent', 'unknown', 'pending'])
        .execute(),
      [],
      'nothing left open',
    );
  });

  test('an approval notified after the sweeper voided the payment: cancelled again at Adyen by its pspReference, the payment still failed, no event', async () => {
    mock.queued = [];
    mock.fault('hang-after');
    const x = await pay();
    assert.equal(x.result_info, '0006:Pending at the processor');
    const late = mock.queued.filter((n) => n.merchantReference === x.transaction_id && n.eventCode === 'AUTHORISATION');
    assert.equal(late.length, 1);
    mock.queued = [];
    await sweepAttempts(gw.runtime.deps, gw.clock.now + gw.settings.processor_unknown_void_after_ms + 60_000);
    const a = await attemptOf(x.transaction_id, 'authorise');
    assert.equal(a.status, 'voided');
    const eventsBefore = await db().selectFrom('events').select('event_type').where('object_id', '=', x.transaction_id).execute();
    const posted = await mock.post(late);
    assert.equal(posted.status, 200, posted.body);
    const psp = pspOf(x.transaction_id);
    const cancel = mock.requests.find((r) => r.path === `/payments/${psp}/cancels` && r.headers['idempotency-key'] === `${a.attempt_id}.late`);
    assert.ok(cancel, 'cancelled at Adyen by its pspReference');
    assert.match((await attemptOf(x.transaction_id, 'authorise')).last_error, /cancelled at the processor/);
    const order = await orderOf(gw, x.transaction_id, live);
    assert.deepEqual([order.payment_status, order.result_info], ['6000', '1007:Processing error']);
    assert.equal((await db().selectFrom('events').select('event_type').where('object_id', '=', x.transaction_id).execute()).length, eventsBefore.length);
    mock.queued = [];
  });

  test('a webhook with a bad HMAC is refused (401) and changes nothing; the good one then settles', async () => {
    const p = await pay({ capture_method: 'manual' });
    mock.queued = [];
    assert.equal((await captureBatch(gw, [item(p)], live)).capture_orders[0].capture_status, '2');
    const [good] = mock.queued;
    assert.ok(good);
    const forged = { ...good, additionalData: { hmacSignature: signItem('00'.repeat(32), good) } };
    const r = await mock.post([forged]);
    assert.deepEqual(r, { status: 401, body: 'bad HMAC signature' });
    const tampered = await mock.post([{ ...good, success: 'false' }]);
    assert.equal(tampered.status, 401, 'a signed field changed');
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '2000');
    assert.equal((await attemptOf(p.transaction_id, 'capture')).status, 'pending');
    // The sweeper asks meanwhile: Adyen has no status query, so the capture waits for its notification.
    await sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
    const asked = await attemptOf(p.transaction_id, 'capture');
    assert.deepEqual([asked.status, (await orderOf(gw, p.transaction_id, live)).payment_status], ['unknown', '2000']);
    assert.match(asked.last_error, /no status query/);
    assert.deepEqual(await mock.deliver(), [200]);
    assert.equal((await attemptOf(p.transaction_id, 'capture')).status, 'approved');
    assert.equal((await orderOf(gw, p.transaction_id, live)).payment_status, '3000');
  });

  test('through the generic interface: a payment approved by Adyen', async () => {
    const key = await gw.apiKey(live);
    const [exp_year, number] = [new Date().getUTCFullYear() + 2, freshCard()];
    const body = { amount: 2500, currency: 'eur', payment_method: { type: 'card', card: { number, exp_month: 12, exp_year, cvc: '123' } } };
    const res = await gw.generic('POST', '/v1/payments', key, body, { json: true });
    assert.equal(res.statusCode, 200, res.body);
    const payment = res.json() as { id: string; status: string };
    assert.equal(payment.status, 'succeeded', res.body);
    const sent = mock.requests.find((q) => (q.body as { paymentMethod?: { number?: string } }).paymentMethod?.number === number);
    assert.deepEqual((sent?.body as { amount?: unknown } | undefined)?.amount, { currency: 'EUR', value: 2500 });
  });

  test('fuzz the webhook endpoint: any body is 200, 400 or 401, never a 500, and nothing unsigned is kept', async () => {
    const before = (await db().selectFrom('processor_notifications').select('notification_id').execute()).length;
    const item = { pspReference: 'PSPFUZZ', eventCode: 'CAPTURE', success: 'true', merchantReference: 'x', amount: { currency: 'EUR', value: 1 } };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.json(),
          fc.string(),
          fc
            .record({ live: fc.string(), notificationItems: fc.array(fc.record({ NotificationRequestItem: fc.object() }), { maxLength: 3 }) })
            .map((b) => JSON.stringify(b)),
          fc.string().map((sig) => JSON.stringify({ notificationItems: [{ NotificationRequestItem: { ...item, additionalData: { hmacSignature: sig } } }] })),
        ),
        async (payload) => {
          const res = await gw.app.inject({ method: 'POST', url: `/hooks/adyen/${processor_id}`, headers: { 'content-type': 'application/json' }, payload });
          assert.ok([200, 400, 401].includes(res.statusCode), `${res.statusCode} ${res.body}`);
        },
      ),
      { numRuns: 150 },
    );
    assert.equal((await db().selectFrom('processor_notifications').select('notification_id').execute()).length, before);
  });
});
