// `/v1/customers` through the platform family's official client library (npm `stripe`, typed
// methods), and the shapes of customers and accounts against the family's example objects
// (docs/contract.md §24; issue 33 items 3, 6 and 7). Both engines.
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

/** The error a call rejects with (fails when it resolves). */
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

before(async () => {
  gw = await testGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
  stripe = client(await gw.apiKey());
});
after(async () => gw.close());

describe('customers through the official client library', () => {
  test('create, retrieve, update (metadata merged, address removed), delete; a deleted one is 404', async () => {
    const created = await stripe.customers.create({
      name: 'Jenny Rosen',
      email: 'jenny@example.com',
      description: 'first order 2026',
      phone: '+44 20 7946 0000',
      address: { line1: '1 High St', city: 'London', postal_code: 'N1 1AA', country: 'GB' },
      preferred_locales: ['en-GB'],
      metadata: { crm: '8812', tier: 'gold' },
    });
    assert.match(created.id, /^cus_/);
    assert.equal(created.object, 'customer');
    assert.equal(created.email, 'jenny@example.com');
    assert.deepEqual(created.address, { city: 'London', country: 'GB', line1: '1 High St', line2: null, postal_code: 'N1 1AA', state: null });
    assert.equal(created.livemode, false);

    const got = await stripe.customers.retrieve(created.id);
    assert.ok(!('deleted' in got && got.deleted));
    assert.equal((got as Stripe.Customer).name, 'Jenny Rosen');

    const updated = await stripe.customers.update(created.id, { email: 'jr@example.com', address: '' as never, metadata: { tier: '', seen: 'yes' } });
    assert.equal(updated.email, 'jr@example.com');
    assert.equal(updated.address, null);
    assert.deepEqual(updated.metadata, { crm: '8812', seen: 'yes' });
    assert.equal(updated.phone, '+44 20 7946 0000', 'fields not sent are kept');

    const gone = await stripe.customers.del(created.id);
    assert.deepEqual(gone, { id: created.id, object: 'customer', deleted: true });
    const missing = await rejection(stripe.customers.retrieve(created.id));
    assert.ok(missing instanceof Stripe.errors.StripeInvalidRequestError);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.code, 'resource_missing');
    assert.equal((await rejection(stripe.customers.del(created.id))).statusCode, 404, 'deleted once');
  });

  test('list newest first with auto-pagination, and by e-mail; another account’s customers are not seen', async () => {
    const tag = `list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await stripe.customers.create({ email: i % 3 === 0 ? `${tag}@example.com` : undefined, metadata: { tag } })).id);
      gw.clock.advance(1000); // the test clock is frozen: one second apart, as customers made one by one are
    }
    const seen: string[] = [];
    for await (const c of stripe.customers.list({ limit: 5 })) if (c.metadata.tag === tag) seen.push(c.id);
    assert.deepEqual(seen, [...ids].reverse(), 'every one once, newest first');
    const byEmail = await stripe.customers.list({ email: `${tag}@example.com`, limit: 100 });
    assert.deepEqual(
      byEmail.data.map((c) => c.id),
      [ids[9], ids[6], ids[3], ids[0]],
    );

    const other = await gw.newMerchant({ allow_ips: ['127.0.0.1'] });
    const theirs = client(await gw.apiKey(other));
    assert.equal((await theirs.customers.list({ limit: 100 })).data.length, 0);
    const foreign = await rejection(theirs.customers.retrieve(ids[0] as string));
    assert.equal(foreign.statusCode, 404);
    assert.equal((await rejection(theirs.customers.update(ids[0] as string, { name: 'x' }))).statusCode, 404);
    assert.equal((await rejection(theirs.customers.del(ids[0] as string))).statusCode, 404);
    assert.equal(((await stripe.customers.retrieve(ids[0] as string)) as Stripe.Customer).name, null, 'untouched by the other account');
  });

  test('bad input is refused naming the parameter, and stores nothing', async () => {
    const before = (await stripe.customers.list({ limit: 100 })).data.length;
    const email = await rejection(stripe.customers.create({ email: 'not an address' }));
    assert.ok(email instanceof Stripe.errors.StripeInvalidRequestError);
    assert.equal(email.param, 'email');
    const unknown = await rejection(stripe.customers.create({ colour: 'red' } as never));
    assert.equal(unknown.code, 'parameter_unknown');
    assert.equal(unknown.param, 'colour');
    const country = await rejection(stripe.customers.create({ address: { country: 'GBR' } }));
    assert.match(String(country.param), /^address/);
    const long = await rejection(stripe.customers.create({ name: 'n'.repeat(300) }));
    assert.equal(long.param, 'name');
    assert.equal((await stripe.customers.list({ limit: 100 })).data.length, before);
  });
});

describe('shapes against the family’s example objects', () => {
  test('a customer', async () => {
    const c = await stripe.customers.create({ name: 'Shape', shipping: { name: 'Shape', address: { line1: '1 Main St' } } });
    assert.deepEqual(shapeProblems('customer', c as unknown as Record<string, unknown>), []);
    const deleted = await stripe.customers.del(c.id);
    assert.deepEqual(shapeProblems('deleted_customer', deleted as unknown as Record<string, unknown>), []);
  });

  test('a connected account, and the calling account itself', async () => {
    const a = await stripe.accounts.create({ type: 'custom', country: 'US' });
    assert.deepEqual(shapeProblems('account', a as unknown as Record<string, unknown>), []);
    // Not offered for your own account (docs/interface.md): Tollgate keeps no country for a merchant.
    const me = await stripe.accounts.retrieveCurrent();
    assert.deepEqual(shapeProblems('account', me as unknown as Record<string, unknown>, ['country', 'default_currency']), []);
    // With Stripe-Account: that connected account, as GET /v1/accounts/:id answers it; another's is resource_missing.
    const as = await stripe.accounts.retrieveCurrent({}, { stripeAccount: a.id });
    assert.equal(as.id, a.id);
    assert.deepEqual(as, await stripe.accounts.retrieve(a.id));
    const missing = await rejection(stripe.accounts.retrieveCurrent({}, { stripeAccount: 'acct_nope' }));
    assert.equal(missing.code, 'resource_missing');
    assert.equal(missing.param, 'Stripe-Account');
    // Nothing is created on a connected account: elsewhere the header is refused, naming it.
    const refused = await rejection(stripe.customers.create({ name: 'x' }, { stripeAccount: a.id }));
    assert.equal(refused.code, 'parameter_unknown');
    assert.equal(refused.param, 'Stripe-Account');
  });
});
