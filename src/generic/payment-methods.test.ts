// `/v1/payment_methods` through the platform family's official client library (docs/contract.md
// §24; issue 33 item 3): cards into the vault (never the number back, never the security code
// kept), attach, detach, list by customer, the family's test PaymentMethods on test keys, and
// the object's shape against the family's example. Both engines.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { type TestGateway, testGateway } from '../test/harness.js';
import { shapeProblems } from '../test/platform-shapes.js';

let gw: TestGateway;
let port: number;
let stripe: Stripe;
const client = (key: string) => new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
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

const cardCount = async () =>
  Number(
    (
      await gw.runtime.store.db
        .selectFrom('cards')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

before(async () => {
  gw = await testGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
  stripe = client(await gw.apiKey());
});
after(async () => gw.close());

describe('PaymentMethods through the official client library', () => {
  test('a card into the vault: brand, last four and expiry back, never the number; encrypted at rest; updated; the shape is the family’s', async () => {
    const pm = await stripe.paymentMethods.create({
      type: 'card',
      card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR, cvc: '123' },
      billing_details: { name: 'Jenny Rosen', email: 'jenny@example.com', address: { country: 'gb', postal_code: 'N1 1AA' } },
      metadata: { order: '6735' },
    });
    assert.match(pm.id, /^pm_/);
    assert.equal(pm.card?.brand, 'visa');
    assert.equal(pm.card?.last4, '4242');
    assert.equal(pm.card?.exp_year, YEAR);
    assert.equal(pm.billing_details.address?.country, 'GB');
    assert.equal(pm.customer, null);
    assert.doesNotMatch(JSON.stringify(pm), /4242424242424242|"123"/);
    const stored = await gw.runtime.store.db.selectFrom('cards').selectAll().orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(stored), /4242424242424242/, 'the number is encrypted');
    assert.deepEqual(shapeProblems('payment_method', pm as unknown as Record<string, unknown>), []);

    const again = await stripe.paymentMethods.retrieve(pm.id);
    assert.equal(again.card?.fingerprint, pm.card?.fingerprint);
    const same = await stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 1, exp_year: YEAR + 1 } });
    assert.equal(same.card?.fingerprint, pm.card?.fingerprint, 'one card, one fingerprint');

    const updated = await stripe.paymentMethods.update(pm.id, {
      card: { exp_month: 6 },
      billing_details: { phone: '+44 20 7946 0000' },
      metadata: { order: '', note: 'x' },
    });
    assert.equal(updated.card?.exp_month, 6);
    assert.equal(updated.billing_details.name, 'Jenny Rosen', 'billing details merge');
    assert.equal(updated.billing_details.phone, '+44 20 7946 0000');
    assert.deepEqual(updated.metadata, { note: 'x' });
  });

  test('attach to a customer, list the customer’s, detach; a detached one cannot be attached again', async () => {
    const cus = await stripe.customers.create({ name: 'PM owner' });
    const a = await stripe.paymentMethods.create({ type: 'card', card: { number: '5555555555554444', exp_month: 3, exp_year: YEAR } });
    const attached = await stripe.paymentMethods.attach(a.id, { customer: cus.id });
    assert.equal(attached.customer, cus.id);
    gw.clock.advance(1000);
    const b = await stripe.paymentMethods.attach('pm_card_amex', { customer: cus.id });
    assert.notEqual(b.id, 'pm_card_amex', 'a test PaymentMethod makes a new one');
    assert.equal(b.card?.brand, 'amex');
    const listed = await stripe.paymentMethods.list({ customer: cus.id, type: 'card' });
    assert.deepEqual(
      listed.data.map((p) => p.id),
      [b.id, a.id],
    );
    const viaCustomer = await stripe.customers.listPaymentMethods(cus.id);
    assert.deepEqual(
      viaCustomer.data.map((p) => p.id),
      [b.id, a.id],
    );
    const expandedPm = await stripe.paymentMethods.retrieve(b.id, { expand: ['customer'] });
    assert.equal((expandedPm.customer as Stripe.Customer).name, 'PM owner', 'expand[]=customer');
    const detached = await stripe.paymentMethods.detach(a.id);
    assert.equal(detached.customer, null);
    const reattach = await rejection(stripe.paymentMethods.attach(a.id, { customer: cus.id }));
    assert.equal(reattach.code, 'payment_method_unexpected_state');
    assert.equal((await stripe.paymentMethods.list({ customer: cus.id })).data.length, 1);
    const noCustomer = await rejection(stripe.paymentMethods.attach(b.id, { customer: 'cus_nope' }));
    assert.equal(noCustomer.statusCode, 404);
    assert.equal(noCustomer.param, 'customer');
  });

  test('the family’s test PaymentMethods map onto the sandbox’s cards on a test key (attach makes one), and do not exist on a live one', async () => {
    const cus = await stripe.customers.create({ name: 'Test cards' });
    for (const [id, brand, last4] of [
      ['pm_card_visa', 'visa', '4242'],
      ['pm_card_mastercard', 'mastercard', '4444'],
      ['pm_card_chargeDeclined', 'visa', '0002'],
      ['pm_card_chargeDeclinedInsufficientFunds', 'visa', '9995'],
      ['pm_card_authenticationRequired', 'visa', '3220'],
    ] as const) {
      const pm = await stripe.paymentMethods.attach(id, { customer: cus.id });
      assert.match(pm.id, /^pm_[0-9A-Z]{26}$/, id);
      assert.equal(pm.customer, cus.id);
      assert.equal(pm.card?.brand, brand, id);
      assert.equal(pm.card?.last4, last4, id);
    }
    // Names off the prototype are no test PaymentMethods (the fuzz found `constructor` answered 402).
    for (const id of ['constructor', '__proto__', 'toString']) assert.equal((await rejection(stripe.paymentMethods.retrieve(id))).statusCode, 404, id);
    // Retrieve, update and detach name an existing PaymentMethod: a test name is none, and nothing is written (the fuzz found a GET that vaulted one).
    const before = await cardCount();
    for (const call of [
      () => stripe.paymentMethods.retrieve('pm_card_visa'),
      () => stripe.paymentMethods.update('pm_card_visa', { metadata: { k: '1' } }),
      () => stripe.paymentMethods.detach('pm_card_visa'),
    ])
      assert.equal((await rejection(call())).code, 'resource_missing');
    assert.equal(await cardCount(), before);
    const live = await gw.newMerchant({ mode: 'live', allow_ips: ['127.0.0.1'] });
    const missing = await rejection(client(await gw.apiKey(live)).paymentMethods.retrieve('pm_card_visa'));
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.code, 'resource_missing');
  });

  test('a card that cannot be kept is a card_error naming the field, and nothing is stored; another account’s PaymentMethod is not found', async () => {
    const before = await cardCount();
    const luhn = await rejection(stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424241', exp_month: 12, exp_year: YEAR } }));
    assert.ok(luhn instanceof Stripe.errors.StripeCardError, luhn.constructor.name);
    assert.equal(luhn.code, 'incorrect_number');
    assert.equal(luhn.param, 'card[number]');
    const expired = await rejection(stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 1, exp_year: 2020 } }));
    assert.equal(expired.code, 'invalid_expiry_year');
    const cvc = await rejection(stripe.paymentMethods.create({ type: 'card', card: { number: '378282246310005', exp_month: 1, exp_year: YEAR, cvc: '123' } }));
    assert.equal(cvc.code, 'invalid_cvc');
    const missing = await rejection(stripe.paymentMethods.create({ type: 'card' } as never));
    assert.equal(missing.code, 'parameter_missing');
    assert.equal(await cardCount(), before);

    const mine = await stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR } });
    const other = client(await gw.apiKey(await gw.newMerchant({ allow_ips: ['127.0.0.1'] })));
    assert.equal((await rejection(other.paymentMethods.retrieve(mine.id))).statusCode, 404);
    assert.equal((await rejection(other.paymentMethods.update(mine.id, { metadata: { x: 'y' } }))).statusCode, 404);
    assert.equal((await rejection(other.paymentMethods.detach(mine.id))).statusCode, 404);
  });
});
