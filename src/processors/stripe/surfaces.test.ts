// A live account on the Stripe connector through every surface (issue 32 item 6): the hosted
// checkout page's card payment, the portal's capture and refund (an owner with two-step
// sign-in), and a subscription's deduction run by the scheduler, each reaching the mock
// Stripe started here as a PaymentIntent, a capture or a refund with the attempt id as its
// idempotency key. The ledger balances at the end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../../cli/background.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { formFields, type PortalAgent, signedInUser } from '../../portal/testing.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { formTokenOf } from '../../threeds/testing.js';
import { setProcessor } from '../config.js';
import { type MockStripe, startMockStripe } from './mock.js';

const SECRET_KEY = 'sk_test_surfaces_51HxYzSecretKey0002';
let gw: TestGateway;
let mock: MockStripe;
let live: CreatedMerchant;
let scheduler: Scheduler;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  mock = await startMockStripe({ secret_key: SECRET_KEY });
  live = await gw.newMerchant({ mode: 'live', capture_method: 'manual', allow_ips: ['127.0.0.1/32', '198.51.100.0/24'] });
  const { store, keyring, deps } = gw.runtime;
  await setProcessor(
    store,
    keyring,
    { account_id: live.account_id, connector: 'stripe', base_url: mock.url, credentials: [`secret_key=${SECRET_KEY}`, 'webhook_secret=whsec_surfaces_0002'] },
    Date.now(),
  );
  await deps.processors.reload();
  scheduler = createScheduler(gw.runtime);
});
after(async () => {
  await mock?.idle();
  await mock?.close();
  if (gw) assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw?.close();
});

const attempts = (object_id: string) =>
  gw.runtime.store.db
    .selectFrom('processor_attempts')
    .select(['operation', 'status', 'connector', 'attempt_id'])
    .where('object_id', '=', object_id)
    .orderBy('created_at')
    .execute();
const payment = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();

let n = 0;
/** A Luhn-valid card of its own for each payment (a live account's velocity rules see no repeats). */
function freshCard(): string {
  const body = `4242${String(Date.now() % 1e6).padStart(6, '0')}${String(++n).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

describe('a live account on Stripe, every surface', () => {
  test('hosted checkout: the shopper pays by card on the page; the PaymentIntent is made at Stripe with the attempt id as its key', async () => {
    const body = {
      merchant_id: live.merchant_id,
      account_id: live.account_id,
      order_no: `SC-${Date.now().toString(36)}`,
      currency: 'USD',
      amount: '42.00',
      return_url: 'https://shop.example/back',
      cancel_url: 'https://shop.example/cancel',
      notify_url: 'http://127.0.0.1:9/notify',
      shopper_email: 'ana@example.com',
      billing_country: 'US',
    };
    const created = await gw.post('/v1/checkout', body, { format: 'form', merchant: live, remoteAddress: '198.51.100.7' });
    assert.equal(created.statusCode, 200, created.body);
    const session_id = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/.exec(created.body)?.[1] as string;
    assert.ok(session_id, created.body);
    const signInfo = /name="signInfo" value="([^"]*)"/.exec(created.body)?.[1] as string;
    const inject = (method: 'GET' | 'POST', url: string, fields?: Record<string, string>) =>
      gw.app.inject({
        method,
        url,
        ...(fields ? { payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}),
      });
    assert.equal((await inject('POST', `/v1/checkout/${session_id}`, { signInfo })).statusCode, 303);
    const page = await inject('GET', `/pay/${session_id}`);
    assert.equal(page.statusCode, 200, page.body);
    const paid = await inject('POST', `/pay/${session_id}`, {
      form_token: formTokenOf(page.body),
      card_number: freshCard(),
      expiry_month: '12',
      expiry_year: String(new Date().getUTCFullYear() + 2),
      security_code: '123',
      holder: 'Ana Silva',
    });
    assert.equal(paid.statusCode, 303, paid.body);
    const { transaction_id } = await gw.runtime.store.db
      .selectFrom('checkout_sessions')
      .select('transaction_id')
      .where('session_id', '=', session_id)
      .executeTakeFirstOrThrow();
    assert.equal((await payment(transaction_id)).status, 'authorised');
    const [a] = await attempts(transaction_id);
    assert.deepEqual([a?.operation, a?.status, a?.connector], ['authorise', 'approved', 'stripe']);
    assert.ok(mock.requests.some((r) => r.idempotency_key === a?.attempt_id && r.path === '/v1/payment_intents'));
  });

  test('the portal: an owner (two-step sign-in) captures and refunds a payment; both reach Stripe', async () => {
    const x = readXml(await gw.post('/v1/authorise', directPayment(live, { card: freshCard(), amount: '30.00' }), { merchant: live }));
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    const { agent } = await signedInUser(gw, { role: 'owner', merchant_id: live.merchant_id, totp: true });
    const detail = `/portal/transactions/${x.transaction_id}`;
    const captured = await agent.submit(detail, `${detail}/capture`, { amount: '30.00' });
    assert.ok(captured.status === 303 || captured.status === 200, `${captured.status} ${captured.body.slice(0, 300)}`);
    assert.equal((await payment(x.transaction_id)).status, 'captured');
    await confirmed(agent, detail, `${detail}/refund`, { amount: '10.00' });
    const ops = (await attempts(x.transaction_id)).map((r) => [r.operation, r.status]);
    assert.deepEqual(ops.slice(0, 2), [
      ['authorise', 'approved'],
      ['capture', 'approved'],
    ]);
    assert.ok(mock.requests.some((r) => r.path.endsWith('/capture')));
    assert.ok(mock.requests.some((r) => r.path === '/v1/refunds'));
  });

  test('a subscription’s deduction, run by the scheduler a month later, is a PaymentIntent at Stripe', async () => {
    const body = directPayment(live, {
      card: freshCard(),
      amount: '9.99',
      currency: 'EUR',
      capture_method: 'automatic',
      subscription: { contract_name: `stripe-plan-${Date.now()}`, interval: 'month' },
    });
    const first = readXml(await gw.post('/v1/authorise', body, { merchant: live }));
    assert.equal(first.result_info, '0000:Success', JSON.stringify(first));
    const before = mock.requests.filter((r) => r.path === '/v1/payment_intents').length;
    gw.clock.advance(32 * 86_400_000);
    await scheduler.runDue(gw.runtime.deps.now());
    const charged = await gw.runtime.store.db
      .selectFrom('payments')
      .select(['transaction_id', 'status', 'connector'])
      .where('order_no', '=', `${body.order_no}-R1`)
      .executeTakeFirstOrThrow();
    assert.deepEqual([charged.status, charged.connector], ['captured', 'stripe']);
    assert.equal(mock.requests.filter((r) => r.path === '/v1/payment_intents').length, before + 1);
  });
});

async function confirmed(agent: PortalAgent, page: string, action: string, fields: Record<string, string>) {
  const asked = await agent.submit(page, action, fields);
  assert.equal(asked.status, 200, `the confirmation page: ${asked.body.slice(0, 400)}`);
  const done = await agent.request('POST', action, formFields(asked.body, action));
  assert.ok(done.status === 303 || done.status === 200, `${done.status} ${done.body.slice(0, 300)}`);
}
