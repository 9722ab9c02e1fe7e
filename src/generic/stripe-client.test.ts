// The official client library of the card-platform family (npm `stripe`, docs/contract.md §12,
// §18; issue 13 "Done when") pointed at a running Tollgate with its host, port and protocol
// options: it creates, retrieves, updates, lists (and auto-paginates) and deletes connected
// accounts, and raises its typed errors for the gateway's refusals. Transfers, reversals
// and the card decline on /v1/payments are covered too; while their routes are not
// registered yet (the gateway answers 404 "Unrecognized request URL"), those tests skip
// themselves and say so, and they run as soon as the routes land.
// Runs on both engines: TOLLGATE_TEST_ENGINE=postgres for PostgreSQL.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { topUp } from '../payouts/admin.js';
import { type TestGateway, testGateway } from '../test/harness.js';

const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const { StripeAuthenticationError, StripeInvalidRequestError, StripeCardError, StripeRateLimitError, StripeIdempotencyError } = Stripe.errors;

/** A started gateway (listening on a real port) and the library pointed at it. */
interface Served {
  gw: TestGateway;
  port: number;
  client(key: string, extra?: Partial<Stripe.StripeConfig>): Stripe;
}

async function serve(settings: Parameters<typeof testGateway>[0] = {}): Promise<Served> {
  const gw = await testGateway(settings);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  return {
    gw,
    port,
    client: (key, extra = {}) => new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, ...extra }),
  };
}

/** Whether a generic route is registered: an unregistered one answers 404 "Unrecognized request URL". */
async function routeExists(port: number, key: string, method: string, path: string): Promise<boolean> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
    ...(method === 'POST' ? { body: '' } : {}),
  });
  const text = await r.text();
  return !(r.status === 404 && text.includes('Unrecognized request URL'));
}

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

let s: Served;
let key: string;
let stripe: Stripe;
const routes = { transfers: false, payments: false };
const NO_TRANSFERS = 'POST /v1/transfers is not registered yet (404 Unrecognized request URL): runs once src/connect/transfers.ts lands';
const NO_PAYMENTS = 'POST /v1/payments is not registered yet (404 Unrecognized request URL): runs once src/generic/payments.ts lands';

before(async () => {
  s = await serve();
  key = await s.gw.apiKey();
  stripe = s.client(key);
  routes.transfers = await routeExists(s.port, key, 'POST', '/v1/transfers');
  routes.payments = await routeExists(s.port, key, 'POST', '/v1/payments');
});
after(async () => s.gw.close());

describe('accounts through the official client library', () => {
  test('create (business_profile, capabilities, metadata), retrieve, update metadata, delete: the library reads every answer', async () => {
    const created = await stripe.accounts.create({
      type: 'custom',
      country: 'GB',
      email: 'shop@example.com',
      business_type: 'company',
      business_profile: { name: 'Corner shop', mcc: '5734', url: 'https://shop.example' },
      capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
      metadata: { order: '6735', note: 'a value with spaces & [brackets]' },
    });
    assert.match(created.id, /^acct_/);
    assert.equal(created.object, 'account');
    assert.equal(created.country, 'GB');
    assert.equal(created.type, 'custom');
    assert.equal(created.business_profile?.name, 'Corner shop');
    assert.equal(created.business_profile?.mcc, '5734');
    assert.equal(created.capabilities?.card_payments, 'active');
    assert.equal(created.capabilities?.transfers, 'active');
    assert.equal(created.charges_enabled, true);
    assert.deepEqual(created.metadata, { order: '6735', note: 'a value with spaces & [brackets]' });
    // The library exposes the gateway's Request-Id as the answer's request id.
    assert.match(created.lastResponse.requestId, /\S/);

    const got = await stripe.accounts.retrieve(created.id);
    assert.equal(got.id, created.id);
    assert.deepEqual(got.metadata, created.metadata);
    assert.equal(got.created, created.created);

    const updated = await stripe.accounts.update(created.id, { metadata: { order: '', shipped: 'yes' }, email: 'owner@example.com' });
    assert.deepEqual(updated.metadata, { note: 'a value with spaces & [brackets]', shipped: 'yes' }, 'an empty value removes a key; others merge');
    assert.equal(updated.email, 'owner@example.com');
    assert.equal((await stripe.accounts.retrieve(created.id)).email, 'owner@example.com', 'the update is stored');

    const deleted = await stripe.accounts.del(created.id);
    assert.deepEqual({ id: deleted.id, deleted: deleted.deleted }, { id: created.id, deleted: true });
    const gone = await rejection(stripe.accounts.retrieve(created.id));
    assert.ok(gone instanceof StripeInvalidRequestError);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.code, 'resource_missing');
  });

  test('list with limit, then auto-pagination forward and backward over 25 accounts of one platform, newest first, each once', async () => {
    // A platform of its own, so the list holds exactly its 25 accounts.
    const platform = await s.gw.newMerchant({ name: 'paging platform' });
    const lib = s.client(await s.gw.apiKey(platform));
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      s.gw.clock.advance(1000); // a distinct `created` second each
      ids.push((await lib.accounts.create({ metadata: { i: String(i) } })).id);
    }
    const newestFirst = [...ids].reverse();

    const page = await lib.accounts.list({ limit: 3 });
    assert.equal(page.object, 'list');
    assert.equal(page.url, '/v1/accounts');
    assert.equal(page.has_more, true);
    assert.deepEqual(
      page.data.map((a) => a.id),
      newestFirst.slice(0, 3),
    );

    const gets: string[] = [];
    lib.on('request', (e: { method: string; path: string }) => {
      if (e.method === 'GET') gets.push(e.path);
    });
    const seen: string[] = [];
    for await (const a of lib.accounts.list({ limit: 10 })) seen.push(a.id);
    assert.deepEqual(seen, newestFirst, 'every account once, newest first');
    assert.equal(gets.length, 3, `three pages of 10, 10 and 5: ${gets.join(', ')}`);
    assert.match(gets[1] ?? '', new RegExp(`starting_after=${newestFirst[9]}`));

    // Backwards from the oldest: the library walks `ending_before` and yields oldest first.
    const oldest = ids[0] as string;
    const back = await lib.accounts.list({ limit: 10, ending_before: oldest }).autoPagingToArray({ limit: 100 });
    assert.deepEqual(
      back.map((a) => a.id),
      ids.slice(1),
    );

    // The other platform's list does not hold them.
    const mine = await stripe.accounts.list({ limit: 100 });
    assert.ok(!mine.data.some((a) => ids.includes(a.id)));
  });

  test('idempotent replay through the library: the same key and parameters answer the same account, once', async () => {
    const params = { country: 'US', metadata: { cart: 'c-1' } };
    const first = await stripe.accounts.create(params, { idempotencyKey: 'lib-replay-1' });
    const again = await stripe.accounts.create(params, { idempotencyKey: 'lib-replay-1' });
    assert.equal(again.id, first.id);
    assert.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
    const listed = (await stripe.accounts.list({ limit: 100 })).data.filter((a) => a.metadata?.cart === 'c-1');
    assert.equal(listed.length, 1, 'one account, not two');
  });
});

describe("the library's typed errors", () => {
  test('an unknown key raises StripeAuthenticationError (HTTP 401) and never echoes the key', async () => {
    const secret = `sk_test_${'Q'.repeat(48)}`;
    const e = await rejection(s.client(secret).accounts.list());
    assert.ok(e instanceof StripeAuthenticationError, e.constructor.name);
    assert.equal(e.statusCode, 401);
    assert.doesNotMatch(e.message, /QQQQQQQQ/);
    // A revoked key too.
    const k = await s.gw.runtime.apiKeys.create(s.gw.merchant.account_id);
    await s.client(k.secret).accounts.list({ limit: 1 });
    await s.gw.runtime.apiKeys.revoke(s.gw.merchant.account_id, k.key_id);
    assert.ok((await rejection(s.client(k.secret).accounts.list())) instanceof StripeAuthenticationError);
  });

  test('unknown, nested unknown and invalid parameters raise StripeInvalidRequestError naming the parameter; nothing is created', async () => {
    const before = (await stripe.accounts.list({ limit: 100 })).data.length;
    const unknown = await rejection(stripe.accounts.create({ country: 'US', colour: 'red' } as unknown as Stripe.AccountCreateParams));
    assert.ok(unknown instanceof StripeInvalidRequestError, unknown.constructor.name);
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.param, 'colour');
    assert.equal(unknown.code, 'parameter_unknown');
    const nested = await rejection(stripe.accounts.create({ business_profile: { nam: 'x' } } as unknown as Stripe.AccountCreateParams));
    assert.ok(nested instanceof StripeInvalidRequestError);
    assert.equal(nested.param, 'business_profile[nam]');
    const country = await rejection(stripe.accounts.create({ country: 'XX' }));
    assert.ok(country instanceof StripeInvalidRequestError);
    assert.equal(country.param, 'country');
    const meta = await rejection(stripe.accounts.update('acct_doesnotexist000', { metadata: { k: 'v' } }));
    assert.ok(meta instanceof StripeInvalidRequestError);
    assert.equal(meta.statusCode, 404);
    assert.equal(meta.code, 'resource_missing');
    assert.equal((await stripe.accounts.list({ limit: 100 })).data.length, before);
  });

  test('the same Idempotency-Key with other parameters is refused with error.type idempotency_error, and creates nothing', async () => {
    const first = await stripe.accounts.create({ country: 'US', metadata: { run: 'idem-409' } }, { idempotencyKey: 'lib-conflict-1' });
    const e = await rejection(stripe.accounts.create({ country: 'GB', metadata: { run: 'idem-409' } }, { idempotencyKey: 'lib-conflict-1' }));
    assert.equal(e.rawType, 'idempotency_error');
    // docs/contract.md §24: HTTP 400, as the family documents it, so the library raises its own class.
    assert.equal(e.statusCode, 400);
    assert.ok(e instanceof StripeIdempotencyError, e.constructor.name);
    const mine = (await stripe.accounts.list({ limit: 100 })).data.filter((a) => a.metadata?.run === 'idem-409');
    assert.deepEqual(
      mine.map((a) => a.id),
      [first.id],
    );
  });

  test('past the per-key rate limit: StripeRateLimitError (HTTP 429) with Retry-After', async () => {
    const small = await serve({ settings: { api_rate_limit: 3 } });
    try {
      const lib = small.client(await small.gw.apiKey());
      for (let i = 0; i < 3; i++) await lib.accounts.list({ limit: 1 });
      const e = await rejection(lib.accounts.list({ limit: 1 }));
      assert.ok(e instanceof StripeRateLimitError, e.constructor.name);
      assert.equal(e.statusCode, 429);
      assert.match(String(e.headers?.['retry-after']), /^[1-9]\d*$/);
    } finally {
      await small.gw.close();
    }
  });

  test('an object not offered answers the platform family’s 404 (Unrecognized request URL), so the library raises instead of resolving', async () => {
    // Before issue 33 these got the acquiring 404, which the library resolved as a success with id undefined.
    const clock = await rejection(stripe.testHelpers.testClocks.create({ frozen_time: 1_700_000_000 }));
    assert.ok(clock instanceof StripeInvalidRequestError, clock.constructor.name);
    assert.equal(clock.statusCode, 404);
    assert.match(clock.message, /^Unrecognized request URL \(POST: \/v1\/test_helpers\/test_clocks\)/);
    const list = await rejection(stripe.balanceTransactions.list());
    assert.ok(list instanceof StripeInvalidRequestError);
    assert.equal(list.statusCode, 404);
  });
});

describe('the calling account and connected accounts in the family’s full shape', () => {
  test('accounts.retrieveCurrent() (GET /v1/account) answers the calling account itself', async () => {
    const me = await stripe.accounts.retrieveCurrent();
    assert.equal(me.object, 'account');
    assert.equal(me.id, `acct_${s.gw.merchant.account_id}`);
    assert.equal((me as unknown as { livemode: boolean }).livemode, false);
    assert.equal(me.controller?.type, 'account');
    assert.deepEqual(me.requirements?.currently_due, []);
    assert.equal(me.requirements?.disabled_reason, null);
    assert.equal(me.external_accounts?.object, 'list');
    assert.deepEqual(me.external_accounts?.data, []);
    assert.equal(me.charges_enabled, true, 'the test account has the sandbox');
    assert.equal(me.tos_acceptance?.date, null);
    // Another key's account is its own: a second merchant sees itself.
    const other = await s.gw.newMerchant({ allow_ips: ['127.0.0.1'] });
    const theirs = await s.client(await s.gw.apiKey(other)).accounts.retrieveCurrent();
    assert.equal(theirs.id, `acct_${other.account_id}`);
  });

  test('a connected account carries requirements, settings, controller, terms, external accounts and its country’s currency', async () => {
    const gb = await stripe.accounts.create({ type: 'custom', country: 'GB' });
    assert.equal(gb.default_currency, 'gbp');
    assert.equal(gb.controller?.type, 'application');
    assert.deepEqual(gb.requirements?.eventually_due, []);
    assert.deepEqual(gb.future_requirements?.past_due, []);
    assert.equal(gb.settings?.payouts?.schedule?.interval, 'manual');
    assert.equal(gb.tos_acceptance?.ip, null);
    assert.equal(gb.external_accounts?.url, `/v1/accounts/${gb.id}/external_accounts`);
    const chosen = await stripe.accounts.create({ type: 'custom', country: 'GB', default_currency: 'eur' });
    assert.equal((await stripe.accounts.retrieve(chosen.id)).default_currency, 'eur');
  });
});

describe('Basic authorization, as curl -u sends it', () => {
  const call = (auth: string, path = '/v1/balance') => fetch(`http://127.0.0.1:${s.port}${path}`, { headers: { authorization: auth } });
  const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  test('the key as the user name works wherever Bearer does; a wrong or missing one is 401 without a code', async () => {
    const ok = await call(basic(key));
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(((await ok.json()) as { object: string }).object, 'balance');
    assert.equal((await call(basic(key), '/v1/account')).status, 200);
    const wrong = await call(basic(`sk_test_${'Z'.repeat(48)}`));
    assert.equal(wrong.status, 401);
    const werr = ((await wrong.json()) as { error: { type: string; code?: string; message: string } }).error;
    assert.equal(werr.type, 'invalid_request_error');
    assert.equal(werr.code, undefined);
    assert.doesNotMatch(werr.message, /ZZZZZZZZ/);
    const empty = await call(basic('', key));
    assert.equal(empty.status, 401);
    assert.match(((await empty.json()) as { error: { message: string } }).error.message, /user name/);
    assert.equal((await call('Digest username="x"')).status, 401);
  });

  test('any /v1 path the acquiring interface does not own, asked with a key, answers in the family’s shape; without a key, or on an acquiring path, the acquiring one', async () => {
    for (const auth of [`Bearer ${key}`, basic(key)]) {
      const r = await call(auth, '/v1/setup_intents?limit=3');
      assert.equal(r.status, 404);
      const body = (await r.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.equal(body.error.message, 'Unrecognized request URL (GET: /v1/setup_intents).');
      assert.ok(r.headers.get('request-id'));
    }
    // A bad key on an unknown path: 401 first, as on every generic route.
    assert.equal((await call(basic('sk_test_nope'), '/v1/setup_intents')).status, 401);
    // No key: the acquiring interface's 404 as before.
    const bare = await fetch(`http://127.0.0.1:${s.port}/v1/setup_intents`);
    assert.equal(bare.status, 404);
    assert.equal(((await bare.json()) as { return_status: string }).return_status, '0');
    // An acquiring path keeps its own shape even with a key.
    const acq = await call(`Bearer ${key}`, '/v1/authorise');
    assert.equal(acq.status, 404);
    assert.equal(((await acq.json()) as { return_status: string }).return_status, '0');
  });
});

describe('transfers and reversals through the official client library', () => {
  /** A destination of the main platform, and money to move to it. */
  let funded = false;
  const fund = async () => {
    if (funded) return;
    await topUp(s.gw.runtime.store, { account_id: s.gw.merchant.account_id, currency: 'USD', amount: '1000.00' }, s.gw.clock.now);
    funded = true;
  };
  const destination = async () => (await stripe.accounts.create({ capabilities: { transfers: { requested: true } } })).id;

  test('create, retrieve, update metadata and list transfers (auto-pagination); a missing parameter is named', async (t) => {
    if (!routes.transfers) return t.skip(NO_TRANSFERS);
    await fund();
    const dest = await destination();
    const tr = await stripe.transfers.create({ amount: 1500, currency: 'usd', destination: dest, description: 'week 12', metadata: { order: '6735' } });
    assert.match(tr.id, /^tr_/);
    assert.equal(tr.object, 'transfer');
    assert.equal(tr.amount, 1500);
    assert.equal(tr.currency, 'usd');
    assert.equal(tr.destination, dest);
    assert.equal(tr.amount_reversed, 0);
    assert.equal(tr.reversed, false);
    assert.equal(tr.livemode, false);
    assert.deepEqual(tr.metadata, { order: '6735' });

    const got = await stripe.transfers.retrieve(tr.id);
    assert.equal(got.id, tr.id);
    assert.equal(got.amount, 1500);
    const upd = await stripe.transfers.update(tr.id, { metadata: { paid: 'yes' } });
    assert.deepEqual(upd.metadata, { order: '6735', paid: 'yes' });

    const more: string[] = [tr.id];
    for (let i = 0; i < 4; i++) {
      s.gw.clock.advance(1000);
      more.unshift((await stripe.transfers.create({ amount: 100 + i, currency: 'usd', destination: dest })).id);
    }
    const seen: string[] = [];
    for await (const x of stripe.transfers.list({ limit: 2, destination: dest })) seen.push(x.id);
    assert.deepEqual(seen, more, 'the destination’s five transfers, newest first, each once');

    const missing = await rejection(stripe.transfers.create({ amount: 100, currency: 'usd' } as Stripe.TransferCreateParams));
    assert.ok(missing instanceof StripeInvalidRequestError, missing.constructor.name);
    assert.equal(missing.param, 'destination');
    assert.equal(missing.code, 'parameter_missing');
  });

  test('expand[]: a transfer’s destination and a reversal’s transfer are answered as their objects, in one object and in a list (docs/contract.md §24)', async (t) => {
    if (!routes.transfers) return t.skip(NO_TRANSFERS);
    await fund();
    const dest = await destination();
    const tr = await stripe.transfers.create({ amount: 700, currency: 'usd', destination: dest, expand: ['destination'] });
    const made = tr.destination as Stripe.Account;
    assert.equal(made.id, dest, 'transfer.destination.id');
    assert.equal(made.object, 'account');
    const got = await stripe.transfers.retrieve(tr.id, { expand: ['destination'] });
    assert.equal((got.destination as Stripe.Account).id, dest);
    // A field not offered is the family's 400, naming it, not an id left silently.
    const notOffered = await rejection(stripe.transfers.retrieve(tr.id, { expand: ['destination', 'not_offered'] }));
    assert.ok(notOffered instanceof StripeInvalidRequestError, notOffered.constructor.name);
    assert.equal(notOffered.statusCode, 400);
    assert.equal(notOffered.message, 'This property cannot be expanded (not_offered).');
    assert.equal(notOffered.param, 'expand[1]');
    const nested = await rejection(stripe.transfers.list({ destination: dest, expand: ['destination'] }));
    assert.equal(nested.message, 'This property cannot be expanded (destination).', 'a list expands data.<field>');
    assert.equal((await stripe.transfers.retrieve(tr.id)).destination, dest, 'an id without expand[]');
    const list = await stripe.transfers.list({ destination: dest, expand: ['data.destination'] });
    assert.equal(((list.data[0] as Stripe.Transfer).destination as Stripe.Account).object, 'account');
    const rev = await stripe.transfers.createReversal(tr.id, { amount: 100, expand: ['transfer'] });
    assert.equal((rev.transfer as Stripe.Transfer).id, tr.id);
    assert.equal((rev.transfer as Stripe.Transfer).amount_reversed, 100);
  });

  test('a reversal (part, then the rest), listed on its transfer; more than was sent is refused', async (t) => {
    if (!routes.transfers) return t.skip(NO_TRANSFERS);
    await fund();
    const dest = await destination();
    const tr = await stripe.transfers.create({ amount: 2000, currency: 'usd', destination: dest });
    const part = await stripe.transfers.createReversal(tr.id, { amount: 500, metadata: { why: 'refund' } });
    assert.match(part.id, /^trr_/);
    assert.equal(part.object, 'transfer_reversal');
    assert.equal(part.amount, 500);
    assert.equal(part.transfer, tr.id);
    assert.deepEqual(part.metadata, { why: 'refund' });
    const after = await stripe.transfers.retrieve(tr.id);
    assert.equal(after.amount_reversed, 500);
    assert.equal(after.reversed, false);

    const over = await rejection(stripe.transfers.createReversal(tr.id, { amount: 1501 }));
    assert.ok(over instanceof StripeInvalidRequestError, over.constructor.name);

    const rest = await stripe.transfers.createReversal(tr.id);
    assert.equal(rest.amount, 1500, 'no amount: the rest');
    const done = await stripe.transfers.retrieve(tr.id);
    assert.equal(done.amount_reversed, 2000);
    assert.equal(done.reversed, true);
    const listed = await stripe.transfers.listReversals(tr.id, { limit: 10 });
    assert.deepEqual(listed.data.map((r) => r.id).sort(), [part.id, rest.id].sort());
    assert.equal((await stripe.transfers.retrieveReversal(tr.id, part.id)).amount, 500);
    // Reversed to zero, the account can be deleted.
    assert.equal((await stripe.accounts.del(dest)).deleted, true);
  });

  test('more than the available balance, or to an account of another platform, is refused and moves nothing', async (t) => {
    if (!routes.transfers) return t.skip(NO_TRANSFERS);
    await fund();
    const dest = await destination();
    const tooMuch = await rejection(stripe.transfers.create({ amount: 100_000_000, currency: 'usd', destination: dest }));
    assert.ok(tooMuch instanceof StripeInvalidRequestError, tooMuch.constructor.name);
    const other = await s.gw.newMerchant({ name: 'other platform' });
    const theirs = (await s.client(await s.gw.apiKey(other)).accounts.create({})).id;
    const foreign = await rejection(stripe.transfers.create({ amount: 100, currency: 'usd', destination: theirs }));
    assert.ok(foreign instanceof StripeInvalidRequestError, foreign.constructor.name);
    assert.equal((await stripe.transfers.list({ destination: dest })).data.length, 0);
    // An account holding a balance cannot be deleted.
    await stripe.transfers.create({ amount: 100, currency: 'usd', destination: dest });
    assert.ok((await rejection(stripe.accounts.del(dest))) instanceof StripeInvalidRequestError);
  });
});

describe('payments through rawRequest', () => {
  const card = (number: string) => ({ type: 'card', card: { number, exp_month: 12, exp_year: NEXT_YEAR, cvc: '123' } });

  test('a declined card raises StripeCardError (HTTP 402, card_declined, a decline_code); an approved one answers the payment', async (t) => {
    if (!routes.payments) return t.skip(NO_PAYMENTS);
    const declined = await rejection(stripe.rawRequest('POST', '/v1/payments', { amount: 1000, currency: 'usd', payment_method: card('4000000000000002') }));
    assert.ok(declined instanceof StripeCardError, declined.constructor.name);
    assert.equal(declined.statusCode, 402);
    assert.equal(declined.code, 'card_declined');
    assert.match(String(declined.decline_code), /^[a-z_]+$/);
    const funds = await rejection(stripe.rawRequest('POST', '/v1/payments', { amount: 1000, currency: 'usd', payment_method: card('4000000000009995') }));
    assert.ok(funds instanceof StripeCardError);
    assert.equal(funds.decline_code, 'insufficient_funds');

    const paid = (await stripe.rawRequest('POST', '/v1/payments', { amount: 1000, currency: 'usd', payment_method: card('4242424242424242') })) as unknown as {
      id: string;
      amount: number;
      currency: string;
      status: string;
      livemode: boolean;
    };
    assert.match(paid.id, /^pay_/);
    assert.equal(paid.amount, 1000);
    assert.equal(paid.currency, 'usd');
    assert.equal(paid.status, 'succeeded');
    assert.equal(paid.livemode, false);
  });

  test('a missing amount raises StripeInvalidRequestError naming amount', async (t) => {
    if (!routes.payments) return t.skip(NO_PAYMENTS);
    const e = await rejection(stripe.rawRequest('POST', '/v1/payments', { currency: 'usd', payment_method: card('4242424242424242') }));
    assert.ok(e instanceof StripeInvalidRequestError, e.constructor.name);
    assert.equal(e.param, 'amount');
  });
});
