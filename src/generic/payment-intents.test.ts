// `/v1/payment_intents`, `/v1/charges` and refunds by PaymentIntent through the platform family's
// official client library (docs/contract.md §24; issue 33 items 2 and 4): create and confirm
// with a PaymentMethod or card data, manual capture, cancel, 3-D Secure's next_action, a
// decline as the library's StripeCardError with `payment_intent`, confirm again after a
// decline, update, list, expand, concurrency and idempotency, and the objects' shapes against
// the family's examples. Each confirm is a payment of the one core (the acquiring query and
// the ledger see it). Both engines.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import type { CreatedMerchant } from '../merchants/service.js';
import { ReviewService } from '../review/service.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { shapeProblems } from '../test/platform-shapes.js';
import { formTokenOf, openPage, submit } from '../threeds/testing.js';

let gw: TestGateway;
let port: number;
let key: string;
let stripe: Stripe;
const client = (k: string) => new Stripe(k, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
const YEAR = new Date().getUTCFullYear() + 2;

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

const count = async (table: 'payments' | 'payment_intents' | 'refunds' | 'events' | 'platform_events') =>
  Number(
    (
      await gw.runtime.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Fields of the family's examples Tollgate never sets (docs/interface.md "What is not offered"). */
const INTENT_NOT_OFFERED = ['transfer_data', 'payment_method_configuration_details', 'automatic_payment_methods', 'managed_payments', 'shipping'];
const CHARGE_NOT_OFFERED = ['source', 'shipping', 'transfer_data'];

before(async () => {
  gw = await testGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
  // next_action's 3-D Secure page on the listening gateway, so a test can finish it as the shopper would.
  gw.settings.public_url = `http://127.0.0.1:${port}`;
  key = await gw.apiKey();
  stripe = client(key);
});
after(async () => gw.close());

describe('PaymentIntents through the official client library', () => {
  test('create and confirm at once with a test PaymentMethod: succeeded, its charge, the core payment, the shapes of the family', async () => {
    const pi = await stripe.paymentIntents.create({
      amount: 1999,
      currency: 'eur',
      payment_method: 'pm_card_visa',
      confirm: true,
      description: 'Order 1',
      metadata: { order: '1' },
    });
    assert.equal(pi.status, 'succeeded');
    assert.equal(pi.amount_received, 1999);
    assert.match(pi.id, /^pi_/);
    assert.match(pi.client_secret ?? '', new RegExp(`^${pi.id}_secret_[A-Za-z0-9]+$`));
    assert.match(String(pi.latest_charge), /^ch_/);
    assert.match(String(pi.payment_method), /^pm_/);
    assert.deepEqual(shapeProblems('payment_intent', pi as unknown as Record<string, unknown>, INTENT_NOT_OFFERED), []);

    const charge = await stripe.charges.retrieve(String(pi.latest_charge));
    assert.equal(charge.payment_intent, pi.id);
    assert.equal(charge.status, 'succeeded');
    assert.equal(charge.captured, true);
    assert.equal(charge.payment_method_details?.card?.last4, '4242');
    assert.equal(charge.payment_method, pi.payment_method);
    assert.deepEqual(shapeProblems('charge', charge as unknown as Record<string, unknown>, CHARGE_NOT_OFFERED), []);

    // One core: the same payment on /v1/payments and in the ledger's events.
    const tid = String(pi.latest_charge).slice(3);
    const payment = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', tid).executeTakeFirstOrThrow();
    assert.equal(payment.status, 'captured');
    assert.equal(payment.order_no, pi.latest_charge);
    const events = await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', tid).execute();
    assert.ok(events.some((e) => e.event_type === 'payment.succeeded'));

    const expandedPi = await stripe.paymentIntents.retrieve(pi.id, { expand: ['latest_charge', 'payment_method'] });
    assert.equal((expandedPi.latest_charge as Stripe.Charge).id, pi.latest_charge);
    assert.equal((expandedPi.payment_method as Stripe.PaymentMethod).card?.last4, '4242');
    const expandedCharge = await stripe.charges.retrieve(charge.id, { expand: ['payment_intent'] });
    assert.equal((expandedCharge.payment_intent as Stripe.PaymentIntent).id, pi.id);
    // A path not offered (nested ones included) is the family's 400 naming it; on a create, before anything is written.
    const nested = await rejection(stripe.paymentIntents.retrieve(pi.id, { expand: ['latest_charge.payment_intent'] }));
    assert.equal(nested.statusCode, 400);
    assert.equal(nested.type, 'StripeInvalidRequestError');
    assert.equal(nested.message, 'This property cannot be expanded (latest_charge.payment_intent).');
    assert.equal(nested.param, 'expand[0]');
    const n0 = [await count('payment_intents'), await count('payments')];
    const onCreate = await rejection(
      stripe.paymentIntents.create({ amount: 100, currency: 'eur', payment_method: 'pm_card_visa', confirm: true, expand: ['latest_charge', 'review'] }),
    );
    assert.equal(onCreate.param, 'expand[1]');
    assert.deepEqual([await count('payment_intents'), await count('payments')], n0, 'nothing written');
  });

  test('create, then confirm with payment_method_data; manual capture of part; refund by payment_intent and by charge', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual' });
    assert.equal(pi.status, 'requires_payment_method');
    assert.equal(pi.latest_charge, null);
    const confirmed = await stripe.paymentIntents.confirm(pi.id, {
      payment_method_data: { type: 'card', card: { number: '5555555555554444', exp_month: 12, exp_year: YEAR, cvc: '123' } } as never,
    });
    assert.equal(confirmed.status, 'requires_capture');
    assert.equal(confirmed.amount_capturable, 5000);
    const captured = await stripe.paymentIntents.capture(pi.id, { amount_to_capture: 3000 });
    assert.equal(captured.status, 'succeeded');
    assert.equal(captured.amount_received, 3000);
    const again = await rejection(stripe.paymentIntents.capture(pi.id));
    assert.equal(again.code, 'payment_intent_unexpected_state');

    const r1 = await stripe.refunds.create({ payment_intent: pi.id, amount: 1000 });
    assert.equal(r1.payment_intent, pi.id);
    assert.equal(r1.charge, captured.latest_charge);
    assert.equal(r1.status, 'succeeded');
    assert.deepEqual(shapeProblems('refund', r1 as unknown as Record<string, unknown>), []);
    const r2 = await stripe.refunds.create({ charge: String(captured.latest_charge) });
    assert.equal(r2.amount, 2000, 'the rest of the captured amount');
    const listed = await stripe.refunds.list({ payment_intent: pi.id });
    assert.deepEqual(listed.data.map((r) => r.id).sort(), [r1.id, r2.id].sort());
    const byCharge = await stripe.refunds.list({ charge: String(captured.latest_charge) });
    assert.equal(byCharge.data.length, 2);
    // expand[]: a refund's charge and payment_intent, in one refund and in a list.
    const expandedRefund = await stripe.refunds.retrieve(r1.id, { expand: ['charge', 'payment_intent'] });
    assert.equal((expandedRefund.charge as Stripe.Charge).id, captured.latest_charge);
    assert.equal((expandedRefund.charge as Stripe.Charge).object, 'charge');
    assert.equal((expandedRefund.payment_intent as Stripe.PaymentIntent).id, pi.id);
    assert.equal((expandedRefund.payment_intent as Stripe.PaymentIntent).object, 'payment_intent');
    const expandedRefunds = await stripe.refunds.list({ payment_intent: pi.id, expand: ['data.charge', 'data.payment_intent'] });
    for (const r of expandedRefunds.data) {
      assert.equal((r.charge as Stripe.Charge).id, captured.latest_charge);
      assert.equal((r.payment_intent as Stripe.PaymentIntent).id, pi.id);
    }
    const over = await rejection(stripe.refunds.create({ payment_intent: pi.id, amount: 1 }));
    assert.equal(over.code, 'charge_already_refunded');
    const charge = await stripe.charges.retrieve(String(captured.latest_charge));
    assert.equal(charge.refunded, true);
    assert.equal(charge.amount_refunded, 3000);
    const both = await rejection(stripe.refunds.create({ payment_intent: pi.id, charge: String(captured.latest_charge) }));
    assert.equal(both.code, 'parameters_exclusive');
  });

  test('a decline is StripeCardError with payment_intent; confirm again with another card succeeds; both charges listed', async () => {
    const before = await count('payments');
    const e = await rejection(
      stripe.paymentIntents.create({ amount: 700, currency: 'gbp', payment_method: 'pm_card_chargeDeclinedInsufficientFunds', confirm: true }),
    );
    assert.ok(e instanceof Stripe.errors.StripeCardError);
    assert.equal(e.code, 'card_declined');
    assert.equal(e.decline_code, 'insufficient_funds');
    const pi = e.payment_intent as Stripe.PaymentIntent;
    assert.equal(pi.status, 'requires_payment_method');
    assert.equal(pi.last_payment_error?.decline_code, 'insufficient_funds');
    assert.equal(await count('payments'), before + 1, 'the declined payment is one core payment');

    // The amount may change after a decline, then a confirm with another card.
    gw.clock.advance(1000);
    await stripe.paymentIntents.update(pi.id, { amount: 800 });
    const ok = await stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_mastercard' });
    assert.equal(ok.status, 'succeeded');
    assert.equal(ok.amount_received, 800);
    assert.equal(ok.last_payment_error, null);
    assert.notEqual(ok.latest_charge, pi.latest_charge);
    const charges = await stripe.charges.list({ payment_intent: pi.id });
    assert.deepEqual(
      charges.data.map((c) => c.status),
      ['succeeded', 'failed'],
    );
    assert.equal(charges.data[1]?.failure_code, 'card_declined');
    // Succeeded: no confirm, no amount change, no cancel.
    assert.equal((await rejection(stripe.paymentIntents.confirm(pi.id))).code, 'payment_intent_unexpected_state');
    assert.equal((await rejection(stripe.paymentIntents.update(pi.id, { amount: 1 }))).code, 'payment_intent_unexpected_state');
    assert.equal((await rejection(stripe.paymentIntents.cancel(pi.id))).code, 'payment_intent_unexpected_state');
    // Metadata changes at any time.
    const tagged = await stripe.paymentIntents.update(pi.id, { metadata: { shipped: 'yes' } });
    assert.equal(tagged.metadata.shipped, 'yes');
  });

  test('3-D Secure: requires_action with a redirect next_action; cancel releases it', async () => {
    const pi = await stripe.paymentIntents.create({
      amount: 1500,
      currency: 'eur',
      payment_method: 'pm_card_threeDSecure2Required',
      confirm: true,
      return_url: 'https://shop.example/back',
    });
    assert.equal(pi.status, 'requires_action');
    assert.equal(pi.next_action?.type, 'redirect_to_url');
    assert.match(String(pi.next_action?.redirect_to_url?.url), /^https?:\/\//);
    assert.equal(pi.next_action?.redirect_to_url?.return_url, 'https://shop.example/back');
    const canceled = await stripe.paymentIntents.cancel(pi.id, { cancellation_reason: 'abandoned' });
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.cancellation_reason, 'abandoned');
    assert.equal(typeof canceled.canceled_at, 'number');
    const payment = await gw.runtime.store.db
      .selectFrom('payments')
      .select('status')
      .where('transaction_id', '=', String(pi.latest_charge).slice(3))
      .executeTakeFirstOrThrow();
    assert.equal(payment.status, 'cancelled');
  });

  test('customer and setup_future_usage: the PaymentMethod is attached once approved; list by customer; another customer’s method is refused', async () => {
    const cus = await stripe.customers.create({ email: 'jenny@example.com' });
    const pi = await stripe.paymentIntents.create({
      amount: 1200,
      currency: 'eur',
      customer: cus.id,
      payment_method: 'pm_card_visa',
      setup_future_usage: 'off_session',
      confirm: true,
    });
    assert.equal(pi.status, 'succeeded');
    assert.equal(pi.customer, cus.id);
    const pm = await stripe.paymentMethods.retrieve(String(pi.payment_method));
    assert.equal(pm.customer, cus.id);
    const mine = await stripe.paymentIntents.list({ customer: cus.id });
    assert.deepEqual(
      mine.data.map((p) => p.id),
      [pi.id],
    );
    // Another payment with the saved method, for the same customer, succeeds; without the customer it is refused.
    const again = await stripe.paymentIntents.create({ amount: 300, currency: 'eur', customer: cus.id, payment_method: pm.id, confirm: true });
    assert.equal(again.status, 'succeeded');
    const e = await rejection(stripe.paymentIntents.create({ amount: 300, currency: 'eur', payment_method: pm.id, confirm: true }));
    assert.equal(e.code, 'payment_method_unexpected_state');
    assert.equal(e.param, 'payment_method');
  });

  test('bad input changes nothing: unknown ids, missing payment method, bad currency, another mode', async () => {
    const before = [await count('payment_intents'), await count('payments'), await count('events'), await count('platform_events')];
    assert.equal((await rejection(stripe.paymentIntents.retrieve('pi_nope'))).code, 'resource_missing');
    assert.equal((await rejection(stripe.paymentIntents.create({ amount: 100, currency: 'xxx' }))).param, 'currency');
    assert.equal((await rejection(stripe.paymentIntents.create({ amount: 100, currency: 'eur', customer: 'cus_nope' }))).param, 'customer');
    assert.equal(
      (await rejection(stripe.paymentIntents.create({ amount: 100, currency: 'eur', payment_method: 'pm_nope', confirm: true }))).param,
      'payment_method',
    );
    const badCard = await rejection(
      stripe.paymentIntents.create({
        amount: 100,
        currency: 'eur',
        confirm: true,
        payment_method_data: { type: 'card', card: { number: '4242424242424241', exp_month: 12, exp_year: YEAR } } as never,
      }),
    );
    assert.equal(badCard.code, 'incorrect_number');
    assert.equal(badCard.param, 'payment_method_data[card][number]');
    assert.deepEqual(
      [await count('payment_intents'), await count('payments'), await count('events'), await count('platform_events')],
      before,
      'no intent, payment or event',
    );
    const pms = await gw.runtime.store.db
      .selectFrom('payment_methods')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const pi = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
    const missing = await rejection(stripe.paymentIntents.confirm(pi.id));
    assert.equal(missing.code, 'parameter_missing');
    assert.equal(missing.param, 'payment_method');
    assert.equal((await stripe.paymentIntents.retrieve(pi.id)).status, 'requires_payment_method');
    const after = await gw.runtime.store.db
      .selectFrom('payment_methods')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(pms.n), 'no PaymentMethod kept for refused requests');
    const otherMerchant = client(await gw.apiKey(await gw.newMerchant()));
    assert.equal((await rejection(otherMerchant.paymentIntents.retrieve(pi.id))).code, 'resource_missing');
    assert.equal((await rejection(otherMerchant.charges.list({ payment_intent: pi.id }))).code, 'resource_missing');
    assert.equal((await rejection(otherMerchant.refunds.create({ payment_intent: pi.id }))).code, 'resource_missing');
  });

  test('an Idempotency-Key makes create-and-confirm once; two confirms at once make one payment', async () => {
    const before = await count('payments');
    const params = { amount: 2500, currency: 'eur', payment_method: 'pm_card_visa', confirm: true } as const;
    const a = await stripe.paymentIntents.create(params, { idempotencyKey: 'pi-once-1' });
    const b = await stripe.paymentIntents.create(params, { idempotencyKey: 'pi-once-1' });
    assert.equal(a.id, b.id);
    assert.equal(await count('payments'), before + 1);

    const pi = await stripe.paymentIntents.create({ amount: 900, currency: 'eur', payment_method: 'pm_card_visa' });
    const n0 = await count('payments');
    const results = await Promise.allSettled([
      stripe.paymentIntents.confirm(pi.id),
      stripe.paymentIntents.confirm(pi.id),
      stripe.paymentIntents.confirm(pi.id),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    assert.equal(ok.length, 1, JSON.stringify(results.map((r) => (r.status === 'rejected' ? String((r.reason as Error).message) : 'ok'))));
    for (const r of results)
      if (r.status === 'rejected') assert.ok(['lock_timeout', 'payment_intent_unexpected_state'].includes(String((r.reason as { code?: string }).code)));
    assert.equal(await count('payments'), n0 + 1, 'one payment for three confirms');
    assert.equal((await stripe.paymentIntents.retrieve(pi.id)).status, 'succeeded');
  });

  test('list pages newest first; charges list every payment, /v1/payments ones too', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      gw.clock.advance(1000); // the test clock stands still: each intent a second newer
      ids.push((await stripe.paymentIntents.create({ amount: 100 + i, currency: 'eur' })).id);
    }
    const page = await stripe.paymentIntents.list({ limit: 2 });
    assert.deepEqual(
      page.data.map((p) => p.id),
      ids.slice(1).reverse(),
    );
    assert.equal(page.has_more, true);
    const next = await stripe.paymentIntents.list({ limit: 1, starting_after: ids[1] });
    assert.equal(next.data[0]?.id, ids[0]);
    gw.clock.advance(1000);
    const direct = await gw.generic('POST', '/v1/payments', key, {
      amount: 4200,
      currency: 'eur',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR, cvc: '123' } },
    });
    assert.equal(direct.statusCode, 200, direct.body);
    const charge = await stripe.charges.retrieve(`ch_${String(direct.json().transaction_id)}`);
    assert.equal(charge.payment_intent, null);
    assert.equal(charge.amount, 4200);
    const all = await stripe.charges.list({ limit: 1 });
    assert.equal(all.data[0]?.id, charge.id);
  });

  test('events: payment_intent.* for a PaymentIntent’s payments only, charge.* with the charge object', async () => {
    gw.clock.advance(1000);
    const pi = await stripe.paymentIntents.create({ amount: 3100, currency: 'eur', payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
    const captured = await stripe.paymentIntents.capture(pi.id);
    assert.equal(captured.status, 'succeeded');
    const declined = await rejection(stripe.paymentIntents.create({ amount: 3200, currency: 'eur', payment_method: 'pm_card_chargeDeclined', confirm: true }));
    const failedPi = (declined as Stripe.errors.StripeCardError).payment_intent as Stripe.PaymentIntent;
    const direct = await gw.generic('POST', '/v1/payments', key, {
      amount: 3300,
      currency: 'eur',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR, cvc: '123' } },
    });
    assert.equal(direct.statusCode, 200, direct.body);
    const intentEvents = (await stripe.events.list({ type: 'payment_intent.*', limit: 100 })).data;
    const of = (id: string) => intentEvents.filter((e) => (e.data.object as { id: string }).id === id).map((e) => e.type);
    assert.deepEqual(of(pi.id).sort(), ['payment_intent.amount_capturable_updated', 'payment_intent.created', 'payment_intent.succeeded']);
    assert.deepEqual(of(failedPi.id).sort(), ['payment_intent.created', 'payment_intent.payment_failed']);
    for (const e of intentEvents) assert.notEqual((e.data.object as { latest_charge?: string }).latest_charge, `ch_${direct.json().transaction_id}`);
    const chargeEvents = (await stripe.events.list({ type: 'charge.succeeded', limit: 100 })).data;
    const mine = chargeEvents.find((e) => (e.data.object as Stripe.Charge).id === pi.latest_charge);
    assert.ok(mine, 'charge.succeeded for the intent’s charge');
    assert.equal((mine.data.object as Stripe.Charge).object, 'charge');
    assert.equal((mine.data.object as Stripe.Charge).payment_intent, pi.id);
    const directEvent = chargeEvents.find((e) => (e.data.object as Stripe.Charge).id === `ch_${direct.json().transaction_id}`);
    assert.equal((directEvent?.data.object as Stripe.Charge | undefined)?.payment_intent, null);
  });
});

/** A platform of its own (its events apart from the other tests'), with the library on its key. */
async function platform(): Promise<{ m: CreatedMerchant; lib: Stripe }> {
  const m = await gw.newMerchant();
  return { m, lib: client(await gw.apiKey(m)) };
}

/** The family event types told of intent `id`, sorted (one clock tick holds several events: compare as sets). */
async function intentEventTypes(lib: Stripe, id: string): Promise<string[]> {
  const events = (await lib.events.list({ type: 'payment_intent.*', limit: 100 })).data;
  return events
    .filter((e) => (e.data.object as { id?: string }).id === id)
    .map((e) => e.type)
    .sort();
}

describe('PaymentIntents: the intent’s own events, risk, 3-D Secure to the end, cancelling a hold, the acquiring query', () => {
  test('payment_intent.created on create; payment_intent.canceled on a cancel before any payment and after a decline; once each, written with the change', async () => {
    const { lib } = await platform();
    const open = await lib.paymentIntents.create({ amount: 1000, currency: 'eur' });
    assert.deepEqual(await intentEventTypes(lib, open.id), ['payment_intent.created']);
    const [created] = (await lib.events.list({ type: 'payment_intent.created' })).data;
    assert.ok(created);
    assert.equal((created.data.object as Stripe.PaymentIntent).status, 'requires_payment_method');
    gw.clock.advance(1000);
    const canceled = await lib.paymentIntents.cancel(open.id, { cancellation_reason: 'requested_by_customer' });
    assert.equal(canceled.status, 'canceled');
    assert.deepEqual(await intentEventTypes(lib, open.id), ['payment_intent.canceled', 'payment_intent.created']);
    const [told] = (await lib.events.list({ type: 'payment_intent.canceled' })).data;
    assert.ok(told);
    assert.equal((told.data.object as Stripe.PaymentIntent).status, 'canceled');
    assert.equal((told.data.object as Stripe.PaymentIntent).cancellation_reason, 'requested_by_customer');
    // A second cancel is refused and tells nothing.
    assert.equal((await rejection(lib.paymentIntents.cancel(open.id))).code, 'payment_intent_unexpected_state');
    assert.deepEqual(await intentEventTypes(lib, open.id), ['payment_intent.canceled', 'payment_intent.created']);

    const e = await rejection(lib.paymentIntents.create({ amount: 1100, currency: 'eur', payment_method: 'pm_card_chargeDeclined', confirm: true }));
    const declined = (e as Stripe.errors.StripeCardError).payment_intent as Stripe.PaymentIntent;
    gw.clock.advance(1000);
    assert.equal((await lib.paymentIntents.cancel(declined.id)).status, 'canceled');
    assert.deepEqual(await intentEventTypes(lib, declined.id), ['payment_intent.canceled', 'payment_intent.created', 'payment_intent.payment_failed']);

    // The gateway's outbox rows of the intent itself: one each, with no notify_url (they reach a platform by its endpoints and /v1/events).
    const rows = await gw.runtime.store.db.selectFrom('events').select(['event_type', 'status']).where('object_id', 'in', [open.id, declined.id]).execute();
    assert.deepEqual(rows.map((r) => r.event_type).sort(), [
      'payment_intent.cancelled',
      'payment_intent.cancelled',
      'payment_intent.created',
      'payment_intent.created',
    ]);
    assert.ok(rows.every((r) => r.status === 'no_target'));
  });

  test('cancelling a requires_capture intent voids the authorisation: canceled, nothing capturable, one payment_intent.canceled', async () => {
    const { lib } = await platform();
    const pi = await lib.paymentIntents.create({ amount: 4100, currency: 'usd', payment_method: 'pm_card_visa', capture_method: 'manual', confirm: true });
    assert.equal(pi.status, 'requires_capture');
    assert.equal(pi.amount_capturable, 4100);
    assert.deepEqual(shapeProblems('payment_intent', pi as unknown as Record<string, unknown>, INTENT_NOT_OFFERED), []);
    gw.clock.advance(1000);
    const canceled = await lib.paymentIntents.cancel(pi.id, { cancellation_reason: 'abandoned' });
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.amount_capturable, 0);
    assert.equal(canceled.amount_received, 0);
    assert.deepEqual(shapeProblems('payment_intent', canceled as unknown as Record<string, unknown>, INTENT_NOT_OFFERED), []);
    const payment = await gw.runtime.store.db
      .selectFrom('payments')
      .select(['status', 'authorised_minor', 'captured_minor'])
      .where('transaction_id', '=', String(pi.latest_charge).slice(3))
      .executeTakeFirstOrThrow();
    assert.deepEqual([payment.status, Number(payment.authorised_minor), Number(payment.captured_minor)], ['cancelled', 0, 0]);
    const charge = await lib.charges.retrieve(String(pi.latest_charge));
    assert.equal(charge.captured, false);
    assert.equal(charge.refunded, true, 'a released authorisation');
    // The payment's cancel tells the intent's (payment.cancelled): no second payment_intent.canceled of the intent's own.
    assert.deepEqual(await intentEventTypes(lib, pi.id), ['payment_intent.amount_capturable_updated', 'payment_intent.canceled', 'payment_intent.created']);
    assert.equal((await rejection(lib.paymentIntents.capture(pi.id))).code, 'payment_intent_unexpected_state');
  });

  test('risk: pm_card_riskLevelElevated is processing until reviewed (accepted: succeeded; rejected: canceled); pm_card_radarBlock is declined as fraudulent', async () => {
    const { m, lib } = await platform();
    const held = await lib.paymentIntents.create({ amount: 2100, currency: 'eur', payment_method: 'pm_card_riskLevelElevated', confirm: true });
    assert.equal(held.status, 'processing');
    assert.deepEqual(shapeProblems('payment_intent', held as unknown as Record<string, unknown>, INTENT_NOT_OFFERED), []);
    assert.equal((await rejection(lib.paymentIntents.cancel(held.id))).code, 'payment_intent_unexpected_state', 'a held payment is decided by review');
    const review = new ReviewService(gw.runtime.deps);
    const accepted = await review.reviewPayment({
      account_id: m.account_id,
      transaction_id: String(held.latest_charge).slice(3),
      decision: 'ACCEPT',
      note: 'ok',
    });
    assert.ok('ok' in accepted && accepted.ok === true, JSON.stringify(accepted));
    const after = await lib.paymentIntents.retrieve(held.id);
    assert.equal(after.status, 'succeeded');
    assert.equal(after.amount_received, 2100);
    assert.deepEqual(await intentEventTypes(lib, held.id), ['payment_intent.created', 'payment_intent.processing', 'payment_intent.succeeded']);

    const other = await lib.paymentIntents.create({ amount: 2200, currency: 'eur', payment_method: 'pm_card_riskLevelElevated', confirm: true });
    assert.equal(other.status, 'processing');
    const rejected = await review.reviewPayment({
      account_id: m.account_id,
      transaction_id: String(other.latest_charge).slice(3),
      decision: 'REJECT',
      note: 'no',
    });
    assert.ok('ok' in rejected && rejected.ok === true, JSON.stringify(rejected));
    assert.equal((await lib.paymentIntents.retrieve(other.id)).status, 'canceled');

    const blocked = await rejection(lib.paymentIntents.create({ amount: 2300, currency: 'eur', payment_method: 'pm_card_radarBlock', confirm: true }));
    assert.ok(blocked instanceof Stripe.errors.StripeCardError);
    assert.equal(blocked.statusCode, 402);
    assert.equal(blocked.code, 'card_declined');
    assert.equal(blocked.decline_code, 'fraudulent');
    const pi = blocked.payment_intent as Stripe.PaymentIntent;
    assert.equal(pi.status, 'requires_payment_method');
    assert.equal(pi.last_payment_error?.decline_code, 'fraudulent');
    const charge = await lib.charges.retrieve(String(pi.latest_charge));
    assert.equal(charge.status, 'failed');
  });

  test('3-D Secure to the end: requires_action, the shopper completes the challenge page, then succeeded', async () => {
    const { lib } = await platform();
    const pi = await lib.paymentIntents.create({
      amount: 1600,
      currency: 'eur',
      payment_method: 'pm_card_threeDSecure2Required',
      confirm: true,
      return_url: 'https://shop.example/back',
    });
    assert.equal(pi.status, 'requires_action');
    assert.deepEqual(shapeProblems('payment_intent', pi as unknown as Record<string, unknown>, INTENT_NOT_OFFERED), []);
    const url = String(pi.next_action?.redirect_to_url?.url);
    const page = await openPage(url);
    assert.equal(page.statusCode, 200, page.body.slice(0, 200));
    const back = await submit(url, formTokenOf(page.body), 'complete');
    assert.equal(back.statusCode, 303);
    assert.ok(String(back.headers.location).startsWith('https://shop.example/back'));
    const done = await lib.paymentIntents.retrieve(pi.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.next_action, null);
    assert.equal(done.amount_received, 1600);
    assert.deepEqual(await intentEventTypes(lib, pi.id), ['payment_intent.created', 'payment_intent.requires_action', 'payment_intent.succeeded']);
  });

  test('an intent’s charge is the acquiring interface’s payment: /v1/retrievalTrans finds it by its order_no (the charge id)', async () => {
    const { m, lib } = await platform();
    const pi = await lib.paymentIntents.create({ amount: 1700, currency: 'eur', payment_method: 'pm_card_visa', confirm: true });
    const res = await gw.post(
      '/v1/retrievalTrans',
      { merchant_id: m.merchant_id, account_id: m.account_id, order_nos: [String(pi.latest_charge)] },
      { merchant: m },
    );
    assert.equal(res.statusCode, 200, res.body);
    const [order] = JSON.parse(res.body).orders_list as Array<Record<string, string>>;
    assert.equal(order?.query_result, '1');
    assert.equal(order?.order_no, pi.latest_charge);
    assert.equal(order?.transaction_id, String(pi.latest_charge).slice(3));
    assert.equal(order?.payment_status, '3000');
  });
});
